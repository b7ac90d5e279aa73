import { Session } from "node:inspector/promises";

/**
 * A V8 CPU profile of this running gateway (what `node --cpu-prof` writes, loadable in Chrome's
 * DevTools or speedscope), taken in process through the inspector protocol. The steady state is
 * what an operator wants to see (where does an idle fleet's CPU go?), and restarting under
 * --cpu-prof would show the warm-up instead: empty caches, lazy imports. One profile at a time.
 */
export const CPU_PROFILE_MAX_SECONDS = 120;

let running = false;

export class ProfileBusyError extends Error {
  override name = "ProfileBusyError";
}

export async function takeCpuProfile(seconds: number, samplingIntervalUs = 1_000): Promise<object> {
  if (running) throw new ProfileBusyError("a CPU profile is being taken already; try again when it ends");
  running = true;
  const session = new Session();
  try {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
    await session.post("Profiler.start");
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = await session.post("Profiler.stop");
    return profile;
  } finally {
    session.disconnect();
    running = false;
  }
}
