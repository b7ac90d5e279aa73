import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  alertmanagerConfigUpload,
  type CompilablePolicy,
  compileRuleGroups,
  DEFAULT_TIMINGS,
  nodeInfoLabels,
  quietHoursSchema,
  quietTimeInterval,
  ruleGroupYaml,
} from "../src";

const ORG = "0190f5a2-0000-7000-8000-000000000001";
const SITE = "0190f5a2-0000-7000-8000-0000000000aa";
const id = (n: number) => `0190f5a2-0000-7000-8000-${String(n).padStart(12, "0")}`;

/** One policy of every kind, with the scopes that change the output. */
const policies: CompilablePolicy[] = [
  {
    id: id(1),
    name: "node down",
    severity: "critical",
    enabled: true,
    selector: "",
    siteId: null,
    spec: { kind: "node_offline", forMinutes: 5 },
  },
  {
    id: id(2),
    name: "plant down",
    severity: "critical",
    enabled: true,
    selector: "",
    siteId: SITE,
    spec: { kind: "site_offline", forMinutes: 3 },
  },
  {
    id: id(3),
    name: "hot canaries",
    severity: "warning",
    enabled: true,
    selector: "tier=canary,env in (prod,staging.eu),!legacy",
    siteId: null,
    spec: { kind: "cpu_above", thresholdPercent: 90, forMinutes: 10 },
  },
  {
    id: id(4),
    name: "memory",
    severity: "warning",
    enabled: true,
    selector: "example.com/role!=db",
    siteId: SITE,
    spec: { kind: "memory_above", thresholdPercent: 85.5, forMinutes: 15 },
  },
  {
    id: id(5),
    name: "disk",
    severity: "warning",
    enabled: true,
    selector: "gpu,env notin (dev)",
    siteId: null,
    spec: { kind: "disk_above", thresholdPercent: 95, forMinutes: 1 },
  },
  {
    id: id(6),
    name: "crash loops",
    severity: "critical",
    enabled: true,
    selector: "",
    siteId: null,
    spec: { kind: "app_crash_looping", restarts: 3, windowMinutes: 10 },
  },
  {
    id: id(7),
    name: "metered links",
    severity: "info",
    enabled: true,
    selector: "",
    siteId: null,
    spec: { kind: "bandwidth_over_budget", budgetBytes: 5_000_000_000, window: "1d" },
  },
  {
    id: id(8),
    name: "paused rollouts",
    severity: "warning",
    enabled: true,
    selector: "",
    siteId: null,
    spec: { kind: "rollout_paused" },
  },
  {
    id: id(9),
    name: "custom",
    severity: "info",
    enabled: true,
    selector: "",
    siteId: null,
    spec: {
      kind: "promql",
      expr: 'sum(rate(edgefleet_node_control_bytes_total{type="hb"}[5m])) > 1e6',
      forMinutes: 0,
    },
  },
  {
    id: id(10),
    name: "switched off",
    severity: "critical",
    enabled: false,
    selector: "",
    siteId: null,
    spec: { kind: "node_offline", forMinutes: 1 },
  },
];

/** Compares with the committed file; UPDATE_GOLDEN=1 rewrites it (review the diff). */
function golden(name: string, actual: string) {
  const path = join(import.meta.dirname, "golden", name);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, "utf8"));
}

describe("rule compiler", () => {
  const groups = compileRuleGroups(policies, {
    organizationId: ORG,
    consoleUrl: "https://console.example/",
    evaluationInterval: "30s",
  });

  it("compiles every enabled metric policy into its own group (golden)", () => {
    golden("rule-groups.yaml", groups.map(ruleGroupYaml).join("---\n"));
  });

  it("leaves out disabled policies and event policies (the gateway posts those)", () => {
    const names = groups.map((group) => group.name);
    expect(names).not.toContain(`policy-${id(8)}`);
    expect(names).not.toContain(`policy-${id(10)}`);
    expect(names).toHaveLength(8);
  });

  it("labels every alert with organization, policy, kind and severity and links it into the console", () => {
    for (const group of groups) {
      const [rule] = group.rules;
      expect(rule?.labels).toMatchObject({ organization: ORG, policy: group.name.replace("policy-", "") });
      expect(rule?.labels.severity).toMatch(/^(critical|warning|info)$/);
      expect(rule?.annotations.console_url).toMatch(/^https:\/\/console\.example\/(nodes|sites|alerts)/);
    }
  });

  it("refuses a selector that does not parse", () => {
    expect(() =>
      compileRuleGroups([{ ...(policies[0] as CompilablePolicy), selector: "tier in (" }], {
        organizationId: ORG,
        consoleUrl: "http://c",
        evaluationInterval: "30s",
      }),
    ).toThrow(/selector/);
  });
});

describe("Alertmanager config", () => {
  it("routes per policy and severity to the relay only, with the site inhibition (golden)", () => {
    golden(
      "alertmanager.yaml",
      alertmanagerConfigUpload(policies, {
        organizationId: ORG,
        relayUrl: "http://127.0.0.1:8090/",
        relayToken: "token-of-the-org",
        timings: DEFAULT_TIMINGS,
      }),
    );
  });

  it("mutes the warning and info routes of a site during its quiet hours, in its zone (golden)", () => {
    golden(
      "alertmanager-quiet-hours.yaml",
      alertmanagerConfigUpload(policies, {
        organizationId: ORG,
        relayUrl: "http://127.0.0.1:8090/",
        relayToken: "token-of-the-org",
        timings: DEFAULT_TIMINGS,
        quietHours: [{ siteId: SITE, start: "22:00", end: "07:30", timeZone: "Europe/Berlin" }],
      }),
    );
  });
});

describe("quiet hours", () => {
  it("splits a span past midnight into two ranges and keeps a daytime span whole", () => {
    expect(quietTimeInterval({ siteId: SITE, start: "22:00", end: "06:00", timeZone: null })).toEqual({
      name: `quiet-hours-${SITE}`,
      time_intervals: [
        {
          times: [
            { start_time: "22:00", end_time: "24:00" },
            { start_time: "00:00", end_time: "06:00" },
          ],
          location: "UTC",
        },
      ],
    });
    expect(
      quietTimeInterval({ siteId: SITE, start: "12:00", end: "13:00", timeZone: "Asia/Tokyo" })
        .time_intervals,
    ).toEqual([{ times: [{ start_time: "12:00", end_time: "13:00" }], location: "Asia/Tokyo" }]);
    expect(
      quietTimeInterval({ siteId: SITE, start: "20:00", end: "00:00", timeZone: null }).time_intervals[0]
        ?.times,
    ).toEqual([{ start_time: "20:00", end_time: "24:00" }]);
  });

  it("refuses equal ends and times that are not HH:MM", () => {
    expect(quietHoursSchema.safeParse({ start: "22:00", end: "22:00" }).success).toBe(false);
    expect(quietHoursSchema.safeParse({ start: "7:00", end: "22:00" }).success).toBe(false);
    expect(quietHoursSchema.safeParse({ start: "24:00", end: "06:00" }).success).toBe(false);
    expect(quietHoursSchema.safeParse({ start: "23:00", end: "24:00" }).success).toBe(true);
  });
});

describe("node info labels", () => {
  it("renames label keys to Prometheus label names and carries the site", () => {
    expect(
      nodeInfoLabels({
        id: "n1",
        siteId: SITE,
        siteName: "plant-7",
        labels: { "example.com/role": "db", tier: "canary" },
      }),
    ).toEqual({
      label_example_com_role: "db",
      label_tier: "canary",
      node: "n1",
      site: "plant-7",
      site_id: SITE,
    });
    expect(nodeInfoLabels({ id: "n2", siteId: null, siteName: null, labels: {} })).toEqual({
      node: "n2",
      site: "",
      site_id: "",
    });
  });
});
