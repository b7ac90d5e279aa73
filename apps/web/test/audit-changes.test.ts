import { describe, expect, it } from "vitest";
import { changedFields } from "../src/app/audit/audit-changes";

describe("changedFields (the audit page's before/after diff)", () => {
  it("lists only the fields that differ, sorted, with JSON values", () => {
    expect(
      changedFields(
        { role: "viewer", email: "c@acme.example", pending: false },
        { role: "admin", email: "c@acme.example", pending: false },
      ),
    ).toEqual([{ field: "role", before: '"viewer"', after: '"admin"' }]);
  });

  it("shows a creation (no before) and a removal (no after) field by field", () => {
    expect(changedFields(null, { name: "ci", role: "viewer" })).toEqual([
      { field: "name", before: "—", after: '"ci"' },
      { field: "role", before: "—", after: '"viewer"' },
    ]);
    expect(changedFields({ name: "ci" }, null)).toEqual([{ field: "name", before: '"ci"', after: "—" }]);
  });

  it("compares nested values as a whole and treats non-objects as empty", () => {
    expect(changedFields({ labels: { a: "1" } }, { labels: { a: "2" } })).toEqual([
      { field: "labels", before: '{"a":"1"}', after: '{"a":"2"}' },
    ]);
    expect(changedFields("x", [1, 2])).toEqual([]);
  });
});
