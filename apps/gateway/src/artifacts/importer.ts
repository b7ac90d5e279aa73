import { type Db, Prisma } from "@edgefleet/db";
import type { NatsConnection } from "@nats-io/transport-node";
import type { EdgeService } from "../edge/service.js";
import type { Logger } from "../logger.js";
import type { ArtifactService } from "./artifact-service.js";
import { ArtifactFetchError } from "./fetch-url.js";
import { ArtifactHashMismatchError, ArtifactTooLargeError } from "./store-artifact.js";

/**
 * Imports the artifacts of `url` versions into the object store, asynchronously: the API
 * creates the version `pending` and returns at once; this worker fetches the URL and marks the
 * version `ready` (sha256, size) or `failed` (reason). Callers poll the version (GET
 * /apps/{appId}/versions/{id}); polling was chosen over a callback because the version row is
 * the state anyway, and a callback target would need its own retry and authentication.
 *
 * Postgres is the queue: a replica claims one pending version with a lease (`FOR UPDATE SKIP
 * LOCKED`, so replicas never take the same one) and renews it while it works. A gateway that
 * dies mid-import leaves the lease to expire and another replica starts over (content
 * addressing makes a re-import harmless). Transient failures (network, HTTP 5xx, NATS) are
 * retried with backoff up to MAX_ATTEMPTS; a permanent one fails the version with its reason.
 */

export interface ImporterConfig {
  pollMs: number;
  leaseMs?: number;
  concurrency?: number;
}

const MAX_ATTEMPTS = 5;
const DEFAULT_LEASE_MS = 60_000;

interface Claimed {
  id: string;
  organization_id: string;
  artifact_url: string | null;
  artifact_sha256: string | null;
  import_attempts: number;
}

export class ArtifactImporter implements EdgeService {
  readonly name = "artifact-importer";
  private timer: NodeJS.Timeout | null = null;
  private running = new Set<Promise<void>>();
  private stopped = true;
  private polling = false;

  constructor(
    private readonly db: Db,
    private readonly artifacts: ArtifactService,
    private readonly config: ImporterConfig,
    private readonly logger: Logger,
  ) {}

  async start(_platform: NatsConnection): Promise<void> {
    this.stopped = false;
    this.timer = setInterval(() => void this.poll(), this.config.pollMs);
    void this.poll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.running]);
  }

  /** Claims pending imports while workers are free. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (!this.stopped && this.running.size < (this.config.concurrency ?? 2)) {
        const claimed = await this.claim();
        if (!claimed) break;
        const work: Promise<void> = this.importOne(claimed).finally(() => this.running.delete(work));
        this.running.add(work);
      }
    } catch (error) {
      this.logger.error({ err: error }, "claiming artifact imports failed; will retry");
    } finally {
      this.polling = false;
    }
  }

  private async claim(): Promise<Claimed | null> {
    const leaseMs = this.config.leaseMs ?? DEFAULT_LEASE_MS;
    const [row] = await this.db.$queryRaw<Claimed[]>(Prisma.sql`
      UPDATE app_version v
      SET import_lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
          import_attempts = v.import_attempts + 1, updated_at = now()
      WHERE v.id = (
        SELECT id FROM app_version
        WHERE artifact_state = 'pending' AND artifact_source = 'url'
          AND (import_lease_until IS NULL OR import_lease_until < now())
        ORDER BY created_at LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING v.id::text, v.organization_id::text, v.artifact_url, v.artifact_sha256, v.import_attempts`);
    return row ?? null;
  }

  private async importOne(version: Claimed): Promise<void> {
    const log = this.logger.child({ versionId: version.id, attempt: version.import_attempts });
    const leaseMs = this.config.leaseMs ?? DEFAULT_LEASE_MS;
    const renew = setInterval(() => {
      void this.db.$executeRaw`
        UPDATE app_version SET import_lease_until = now() + make_interval(secs => ${leaseMs / 1000})
        WHERE id = ${version.id}::uuid AND artifact_state = 'pending'`.catch(() => undefined);
    }, leaseMs / 3);
    try {
      if (!version.artifact_url) throw new ArtifactFetchError("the version has no URL", false);
      const stored = await this.artifacts.importUrl(
        version.organization_id,
        version.artifact_url,
        version.artifact_sha256 ?? undefined,
      );
      await this.db.$executeRaw`
        UPDATE app_version
        SET artifact_state = 'ready', artifact_sha256 = ${stored.sha256}, artifact_size = ${stored.size},
            artifact_error = NULL, import_lease_until = NULL, updated_at = now()
        WHERE id = ${version.id}::uuid AND artifact_state = 'pending'`;
      log.info({ sha256: stored.sha256, size: stored.size }, "artifact imported");
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const retryable = error instanceof ArtifactFetchError ? error.retryable : !isPermanent(error);
      if (retryable && version.import_attempts < MAX_ATTEMPTS) {
        const backoffS = Math.min(300, 5 * 2 ** (version.import_attempts - 1));
        await this.db.$executeRaw`
          UPDATE app_version
          SET import_lease_until = now() + make_interval(secs => ${backoffS}), artifact_error = ${reason}
          WHERE id = ${version.id}::uuid AND artifact_state = 'pending'`.catch(() => undefined);
        log.warn({ err: error, retryInS: backoffS }, "artifact import failed; will retry");
      } else {
        await this.db.$executeRaw`
          UPDATE app_version
          SET artifact_state = 'failed', artifact_error = ${reason}, import_lease_until = NULL, updated_at = now()
          WHERE id = ${version.id}::uuid AND artifact_state = 'pending'`.catch(() => undefined);
        log.warn({ err: error }, "artifact import failed");
      }
    } finally {
      clearInterval(renew);
    }
  }
}

/** The content itself is wrong: fetching it again gives the same answer. A cut body may not. */
function isPermanent(error: unknown): boolean {
  return error instanceof ArtifactHashMismatchError || error instanceof ArtifactTooLargeError;
}
