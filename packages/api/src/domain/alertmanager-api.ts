/**
 * The organization's own Alertmanager in Mimir (API v2), read and written with the organization
 * as tenant (X-Scope-OrgID), so one organization can never see or expire another's alerts or
 * silences: Mimir keeps them apart, and a foreign silence id is simply not found.
 */
import { TRPCError } from "@trpc/server";

const TIMEOUT_MS = 5_000;

export interface AmMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual?: boolean;
}

/** An alert as Alertmanager's GET /api/v2/alerts returns it (the fields Edgefleet reads). */
export interface AmAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  status: { state: string; silencedBy: string[]; inhibitedBy: string[]; mutedBy?: string[] };
}

export interface AmSilence {
  id: string;
  status: { state: "active" | "pending" | "expired" };
  matchers: AmMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
}

export class AlertmanagerApi {
  constructor(
    private readonly mimirUrl: string | null,
    private readonly organizationId: string,
  ) {}

  private async call(method: string, path: string, body?: unknown): Promise<Response> {
    if (!this.mimirUrl) {
      throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "the alerting store is not configured" });
    }
    try {
      return await fetch(new URL(`/alertmanager/api/v2${path}`, this.mimirUrl), {
        method,
        headers: {
          "X-Scope-OrgID": this.organizationId,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new TRPCError({
        code: "SERVICE_UNAVAILABLE",
        message: `Alertmanager unreachable; try again: ${error instanceof Error ? error.message : error}`,
      });
    }
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.call(method, path, body);
    if (!response.ok) throw await unavailable(method, path, response);
    return (await response.json()) as T;
  }

  /**
   * Alerts that are firing now, also those silenced, inhibited or muted. A tenant whose
   * Alertmanager config has not been uploaded yet has none: Mimir answers 404 or 412 then, or
   * 406 once the Alertmanager it started lazily for the tenant has been stopped again.
   */
  async alerts(): Promise<AmAlert[]> {
    const response = await this.call(
      "GET",
      "/alerts?active=true&silenced=true&inhibited=true&unprocessed=true",
    );
    if (notConfigured(response)) return [];
    if (!response.ok) throw await unavailable("GET", "/alerts", response);
    return (await response.json()) as AmAlert[];
  }

  async silences(): Promise<AmSilence[]> {
    const response = await this.call("GET", "/silences");
    if (notConfigured(response)) return [];
    if (!response.ok) throw await unavailable("GET", "/silences", response);
    return (await response.json()) as AmSilence[];
  }

  /** null when the tenant has no such silence. */
  async silence(id: string): Promise<AmSilence | null> {
    const response = await this.call("GET", `/silence/${encodeURIComponent(id)}`);
    if (response.status === 404) return null;
    if (!response.ok) throw await unavailable("GET", "/silence", response);
    return (await response.json()) as AmSilence;
  }

  async createSilence(silence: Omit<AmSilence, "id" | "status">): Promise<string> {
    return (await this.json<{ silenceID: string }>("POST", "/silences", silence)).silenceID;
  }

  async expireSilence(id: string): Promise<void> {
    const response = await this.call("DELETE", `/silence/${encodeURIComponent(id)}`);
    if (!response.ok) throw await unavailable("DELETE", "/silence", response);
  }
}

/** Mimir's answers for a tenant that has no Alertmanager running (see `alerts`). */
function notConfigured(response: Response): boolean {
  return response.status === 404 || response.status === 406 || response.status === 412;
}

async function unavailable(method: string, path: string, response: Response): Promise<TRPCError> {
  const text = (await response.text().catch(() => "")).slice(0, 300);
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message: `Alertmanager answered ${response.status} to ${method} ${path}; try again: ${text}`,
  });
}
