import { RULE_NAMESPACE, type RuleGroup, ruleGroupYaml } from "@edgefleet/alerts";
import { parse } from "yaml";

/**
 * Mimir's ruler and Alertmanager APIs for one tenant (X-Scope-OrgID = organization id); paths
 * as measured in SETUP-FACTS "Alerts". Every failure throws MimirAlertingError with Mimir's answer.
 */
export class MimirAlertingError extends Error {
  override name = "MimirAlertingError";
}

const TIMEOUT_MS = 10_000;

export class MimirAlerting {
  constructor(private readonly baseUrl: string) {}

  private async call(
    tenant: string,
    method: string,
    path: string,
    body?: { type: string; text: string },
  ): Promise<{ status: number; text: string }> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { "X-Scope-OrgID": tenant, ...(body ? { "Content-Type": body.type } : {}) },
        ...(body ? { body: body.text } : {}),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new MimirAlertingError(
        `${method} ${path}: Mimir unreachable: ${error instanceof Error ? error.message : error}`,
      );
    }
    const text = await response.text();
    return { status: response.status, text };
  }

  private async expect(
    tenant: string,
    method: string,
    path: string,
    ok: number[],
    body?: { type: string; text: string },
  ) {
    const answer = await this.call(tenant, method, path, body);
    if (!ok.includes(answer.status)) {
      throw new MimirAlertingError(
        `${method} ${path}: Mimir answered ${answer.status}: ${answer.text.slice(0, 300)}`,
      );
    }
    return answer;
  }

  /** The groups in Edgefleet's namespace, as Mimir holds them (empty when there are none). */
  async ruleGroups(tenant: string): Promise<RuleGroup[]> {
    const answer = await this.expect(
      tenant,
      "GET",
      `/prometheus/config/v1/rules/${RULE_NAMESPACE}`,
      [200, 404],
    );
    if (answer.status === 404) return [];
    const parsed = parse(answer.text) as Record<string, RuleGroup[]> | null;
    return parsed?.[RULE_NAMESPACE] ?? [];
  }

  async putRuleGroup(tenant: string, group: RuleGroup): Promise<void> {
    await this.expect(tenant, "POST", `/prometheus/config/v1/rules/${RULE_NAMESPACE}`, [202], {
      type: "application/yaml",
      text: ruleGroupYaml(group),
    });
  }

  async deleteRuleGroup(tenant: string, name: string): Promise<void> {
    await this.expect(
      tenant,
      "DELETE",
      `/prometheus/config/v1/rules/${RULE_NAMESPACE}/${encodeURIComponent(name)}`,
      [202, 404],
    );
  }

  /** The uploaded `alertmanager_config` text, or null when the tenant runs the fallback config. */
  async alertmanagerConfig(tenant: string): Promise<string | null> {
    const answer = await this.expect(tenant, "GET", "/api/v1/alerts", [200, 404]);
    if (answer.status === 404) return null;
    const parsed = parse(answer.text) as { alertmanager_config?: string } | null;
    return parsed?.alertmanager_config ?? null;
  }

  async putAlertmanagerConfig(tenant: string, uploadYaml: string): Promise<void> {
    await this.expect(tenant, "POST", "/api/v1/alerts", [201], {
      type: "application/yaml",
      text: uploadYaml,
    });
  }

  /** Event alerts straight into the tenant's Alertmanager (API v2). */
  async postAlerts(tenant: string, alerts: unknown[]): Promise<void> {
    await this.expect(tenant, "POST", "/alertmanager/api/v2/alerts", [200], {
      type: "application/json",
      text: JSON.stringify(alerts),
    });
  }
}
