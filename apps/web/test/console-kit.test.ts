import { bulkUpdateLabelsInput, createTokenInput } from "@edgefleet/api/schemas";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { listRows } from "../src/components/data-table/list-rows";
import { formatHidden, formatSort, parseHidden, parseSort } from "../src/components/data-table/use-url-state";
import { selectOptions } from "../src/components/forms/select-options";
import {
  labelAssignmentsText,
  labelKeysText,
  optionalChoice,
  optionalNumberText,
} from "../src/components/forms/text-fields";

describe("form text fields judged by the API's own schemas", () => {
  const labels = labelAssignmentsText(createTokenInput.shape.labels);

  it("turns `k=v, k2=v2` into labels, and empty text into no labels", () => {
    expect(labels.parse(" tier=edge , hw=ipc ")).toEqual({ tier: "edge", hw: "ipc" });
    expect(labels.parse("")).toEqual({});
  });

  it("says which item is not key=value, and applies the API's key rule after splitting", () => {
    const shape = labels.safeParse("tier=edge, oops");
    expect(shape.success).toBe(false);
    expect(shape.error?.issues[0]?.message).toBe('"oops" is not key=value');
    const rule = labels.safeParse("bad key=x");
    expect(rule.error?.issues[0]?.message).toBe('label keys: 1-63 letters, digits, . _ / -: "bad key"');
    // On the field itself, where the form shows it (not at labels["bad key"]).
    expect(rule.error?.issues[0]?.path).toEqual([]);
  });

  it("splits keys to remove and checks them with the bulk-edit key rule", () => {
    const keys = labelKeysText(bulkUpdateLabelsInput.shape.remove);
    expect(keys.parse("gpu, tmp ,")).toEqual(["gpu", "tmp"]);
    expect(keys.safeParse("no spaces allowed").success).toBe(false);
  });

  it("reads an optional number and an optional choice, refusing what the API refuses", () => {
    const maxUses = optionalNumberText(createTokenInput.shape.maxUses);
    expect(maxUses.parse("")).toBeUndefined();
    expect(maxUses.parse("3")).toBe(3);
    expect(maxUses.safeParse("0").success).toBe(false);
    expect(maxUses.safeParse("1.5").success).toBe(false);
    const site = optionalChoice(createTokenInput.shape.siteId);
    expect(site.parse("")).toBeUndefined();
    expect(site.safeParse("not-a-uuid").success).toBe(false);
  });

  it("composes into a whole form schema whose output is the API's input", () => {
    const form = createTokenInput.extend({
      labels,
      maxUses: optionalNumberText(createTokenInput.shape.maxUses),
    });
    const parsed = form.parse({ labels: "a=b", maxUses: "", expiresInHours: 1 });
    expect(createTokenInput.parse(parsed)).toEqual({
      labels: { a: "b" },
      expiresInHours: 1,
      requiresApproval: false,
    });
    expectTypeOf(parsed);
  });
});

function expectTypeOf(_value: z.output<typeof createTokenInput>) {}

describe("table state in the URL", () => {
  it("reads and writes sorting as column.direction, ignoring unknown columns", () => {
    expect(parseSort("name.desc", ["name", "status"])).toEqual([{ id: "name", desc: true }]);
    expect(parseSort("status", ["name", "status"])).toEqual([{ id: "status", desc: false }]);
    expect(parseSort("evil.desc", ["name"])).toEqual([]);
    expect(parseSort(null, ["name"])).toEqual([]);
    expect(formatSort([{ id: "lastSeenAt", desc: false }])).toBe("lastSeenAt.asc");
    expect(formatSort([])).toBeNull();
  });

  it("reads and writes hidden columns as a comma list", () => {
    expect(parseHidden("labels,agentVersion")).toEqual({ labels: false, agentVersion: false });
    expect(parseHidden("")).toEqual({});
    expect(formatHidden({ labels: false, site: true })).toBe("labels");
    expect(formatHidden({ site: true })).toBeNull();
  });
});

describe("kit helpers the views lean on", () => {
  it("writes fixed select choices as { value: label } in the order written, empty value included", () => {
    expect(selectOptions({ "": "none", count: "at most N nodes", percent: "at most N%" })).toEqual([
      { value: "", label: "none" },
      { value: "count", label: "at most N nodes" },
      { value: "percent", label: "at most N%" },
    ]);
    const list = [{ value: "a", label: "A", disabled: true }];
    expect(selectOptions(list)).toBe(list);
  });

  it("reads a table's rows from a plain list, a list page's items, or a paged query's pages in order", () => {
    expect(listRows([{ id: "1" }])).toEqual([{ id: "1" }]);
    expect(listRows({ items: [{ id: "2" }], nextCursor: null } as { items: Array<{ id: string }> })).toEqual([
      { id: "2" },
    ]);
    const paged = {
      pages: [
        { items: [{ id: "3" }, { id: "4" }], nextCursor: "4" },
        { items: [{ id: "5" }], nextCursor: null },
      ],
      pageParams: [undefined, "4"],
    };
    expect(listRows(paged)).toEqual([{ id: "3" }, { id: "4" }, { id: "5" }]);
  });
});
