import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { artifactRefSchema, runSpecSchema } from "../protocol/index.js";

const agentStateSchema = z.object({
  /** Last applied desired revision. */
  rev: z.int().min(0),
  /** Last sequence used per report type (the next report takes +1). */
  seq: z.object({ st: z.int().min(0), mx: z.int().min(0) }),
  /** The desired apps as of `rev`: restarted from here when the agent restarts. */
  desired: z.record(
    z.string(),
    z.object({ ver: z.string(), spec: runSpecSchema, art: artifactRefSchema.optional() }),
  ),
});
export type AgentState = z.output<typeof agentStateSchema>;

export function emptyAgentState(): AgentState {
  return { rev: 0, seq: { st: 0, mx: 0 }, desired: {} };
}

export interface StateStore {
  load(): Promise<AgentState>;
  save(state: AgentState): Promise<void>;
}

/** JSON file replaced atomically (write + rename), so a crash leaves the old or the new state. */
export class FileStateStore implements StateStore {
  constructor(private readonly path: string) {}

  async load(): Promise<AgentState> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyAgentState();
      throw error;
    }
    const parsed = agentStateSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`agent state ${this.path} is corrupt: ${parsed.error.message}`);
    return parsed.data;
  }

  async save(state: AgentState): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.tmp`;
    await writeFile(temporary, JSON.stringify(state), { mode: 0o600 });
    await rename(temporary, this.path);
  }
}

export class MemoryStateStore implements StateStore {
  private state = emptyAgentState();

  async load(): Promise<AgentState> {
    return structuredClone(this.state);
  }

  async save(state: AgentState): Promise<void> {
    this.state = structuredClone(state);
  }
}
