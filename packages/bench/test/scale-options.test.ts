import { describe, expect, it } from "vitest";
import { HelpRequested, readScaleOptions, UsageError } from "../src/scale/options.js";

describe("bench:scale options", () => {
  it("takes the defaults of the 100,000-node run", () => {
    expect(readScaleOptions([])).toMatchObject({
      nodes: 100_000,
      sites: 50,
      appsPerNode: 10,
      profileSeconds: 60,
      metricsSeconds: 60,
      heartbeatSeconds: 60,
    });
  });

  it("heartbeats follow a longer metrics interval, so reports keep quieting them", () => {
    expect(readScaleOptions(["--metrics-seconds", "180"])).toMatchObject({
      metricsSeconds: 180,
      heartbeatSeconds: 180,
    });
    expect(readScaleOptions(["--metrics-seconds", "30", "--heartbeat-seconds", "45"])).toMatchObject({
      metricsSeconds: 30,
      heartbeatSeconds: 45,
    });
    expect(() => readScaleOptions(["--metrics-seconds", "1"])).toThrow(
      /--metrics-seconds must be an integer from 5/,
    );
  });

  it("--help lists every option with its default instead of running", () => {
    const help = (() => {
      try {
        readScaleOptions(["--help"]);
      } catch (error) {
        return error;
      }
    })();
    expect(help).toBeInstanceOf(HelpRequested);
    expect((help as Error).message).toContain('--nodes <value>  (default "100000")');
    expect((help as Error).message).toContain("--no-profile");
  });

  it("an unknown option or a value out of range is a usage error naming it", () => {
    expect(() => readScaleOptions(["--nodez", "10"])).toThrow(UsageError);
    expect(() => readScaleOptions(["--nodez", "10"])).toThrow(
      /Unknown option '--nodez'[\s\S]*--nodes <value>/,
    );
    expect(() => readScaleOptions(["--sites", "0"])).toThrow(/--sites must be an integer from 1 to 100/);
  });
});
