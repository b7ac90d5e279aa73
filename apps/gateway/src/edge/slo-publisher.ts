import type { OrgHistograms } from "@edgefleet/alerts";
import { runInBackground } from "../background.js";
import type { Logger } from "../logger.js";
import type { MimirWriter } from "./ingest/mimir-writer.js";
import type { EdgeService } from "./service.js";

/**
 * Writes the gateway's per-organization SLI histograms (@edgefleet/alerts slo.ts) to Mimir every
 * `intervalMs`, each in its organization's tenant, for the console's service levels page. The
 * histograms are cumulative: a failed write loses nothing, the next one carries the counts.
 */
export class SloPublisher implements EdgeService {
  readonly name = "slo-series";
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly histograms: readonly OrgHistograms[],
    private readonly writer: MimirWriter,
    private readonly logger: Logger,
    private readonly intervalMs = 15_000,
  ) {}

  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Never rejects: one failed flush would otherwise fail every later one chained on it. */
  flush(): Promise<void> {
    this.writing = this.writing.then(() =>
      runInBackground(this.logger, "slo-series", async () => {
        const now = Date.now();
        const organizations = new Set(this.histograms.flatMap((histogram) => histogram.organizations()));
        for (const organizationId of organizations) {
          await this.writer.write(
            organizationId,
            this.histograms.flatMap((histogram) => histogram.series(organizationId, now)),
          );
        }
      }),
    );
    return this.writing;
  }
}
