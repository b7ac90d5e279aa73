import { readFileSync } from "node:fs";

/**
 * Stopping what the benchmark started, whichever way it is interrupted: Ctrl-C (SIGINT to the
 * whole foreground group), SIGTERM/SIGHUP to the driver, or a signal to `pnpm` alone, which exits
 * without passing it on (the driver would otherwise run on, orphaned, for many minutes).
 */

/** Everything to undo, newest first; runs once whatever path leads here. */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => unknown }> = [];
  private running: Promise<void> | undefined;

  add(what: string, run: () => unknown): void {
    this.steps.unshift({ what, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const { what, run } of this.steps) {
        try {
          await run();
        } catch (error) {
          process.stderr.write(
            `cleanup: ${what} failed: ${error instanceof Error ? error.message : error}\n`,
          );
        }
      }
    })();
    return this.running;
  }
}

/** Launcher processes: pnpm and tsx run as `node`, scripts through `sh -c`. */
const LAUNCHER_COMMANDS = new Set(["node", "sh", "bash", "dash", "pnpm", "npm", "npx", "tsx"]);

function procStat(pid: number): { comm: string; state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may itself contain spaces and parentheses.
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const [state = "", ppid] = stat.slice(close + 2).split(" ");
    return { comm, state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/**
 * The chain of processes that launched `pid` (tsx, `sh -c`, pnpm, …), nearest first, up to the
 * first ancestor that is not a launcher (the user's shell is `bash` too, so a login shell's parent
 * — a terminal, sshd, flock — ends the walk; init is never included).
 */
export function launcherChain(pid: number = process.pid): number[] {
  const chain: number[] = [];
  let current = procStat(pid)?.ppid;
  while (current !== undefined && current > 1 && chain.length < 16) {
    const info = procStat(current);
    if (!info || !LAUNCHER_COMMANDS.has(info.comm)) break;
    chain.push(current);
    current = info.ppid;
  }
  return chain;
}

/** Running, not a zombie waiting for its parent to reap it. */
function alive(pid: number): boolean {
  const state = procStat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

/**
 * Calls `onInterrupt` once, on SIGINT, SIGTERM or SIGHUP, when a process of the launcher chain
 * exits before us (checked every `pollMs`), or on an unhandled rejection or exception. Later signals are reported to `onRepeat` (the cleanup
 * must not be cut short by a second Ctrl-C). Returns a function that stops watching.
 */
export function watchInterruptions(
  onInterrupt: (reason: string) => void,
  options: { pollMs?: number; onRepeat?: (reason: string) => void } = {},
): () => void {
  let interrupted = false;
  const fire = (reason: string) => {
    if (interrupted) {
      options.onRepeat?.(reason);
      return;
    }
    interrupted = true;
    onInterrupt(reason);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  const handlers = signals.map((signal) => {
    const handler = () => fire(signal);
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  // A stray rejection (e.g. a query failing while the cleanup closes its client) would otherwise
  // end the process in the middle of the cleanup and leave the stack running.
  const onCrash = (error: unknown) =>
    fire(`unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.on("unhandledRejection", onCrash);
  process.on("uncaughtException", onCrash);
  const chain = launcherChain();
  const timer = setInterval(() => {
    const gone = chain.find((pid) => !alive(pid));
    if (gone !== undefined && !interrupted) fire(`launcher process ${gone} exited`);
  }, options.pollMs ?? 1_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    for (const [signal, handler] of handlers) process.off(signal, handler);
    process.off("unhandledRejection", onCrash);
    process.off("uncaughtException", onCrash);
  };
}

/**
 * Runs a benchmark's work with one cleanup list that runs however it ends: normally, on an error,
 * or on any interruption `watchInterruptions` sees (then the process exits 130, or 1 for a stray error).
 */
export async function runWithCleanup(work: (cleanup: Cleanup) => Promise<void>): Promise<void> {
  const cleanup = new Cleanup();
  watchInterruptions(
    (reason) => {
      process.stderr.write(`\n${reason}: stopping everything the benchmark started…\n`);
      void cleanup.run().finally(() => process.exit(reason.startsWith("unexpected error") ? 1 : 130));
    },
    {
      onRepeat: (reason) =>
        process.stderr.write(`\n${reason}: still stopping what the benchmark started, please wait…\n`),
    },
  );
  try {
    await work(cleanup);
  } finally {
    await cleanup.run();
  }
}
