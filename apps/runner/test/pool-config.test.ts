// The sandbox pool's settings as the runner reads them from its environment.
import { describe, expect, it } from "vitest";
import { parseConfig } from "@loopsmith/core";
import { DEFAULT_POOL_OPTIONS } from "@loopsmith/sandbox";
import { runnerConfigSchema, sandboxPoolOptions } from "../src/config";

const pool = (env: Record<string, string>) => sandboxPoolOptions(parseConfig(runnerConfigSchema, env));

describe("SANDBOX_PREIMPORT", () => {
  it("defaults to numpy and pandas, and an empty value is unset like every other variable", () => {
    expect(pool({}).preimport).toEqual(["numpy", "pandas"]);
    expect(pool({ SANDBOX_PREIMPORT: "" }).preimport).toEqual(["numpy", "pandas"]);
  });

  it('"none" turns pre-import off (issue 28: the documented empty value never did)', () => {
    expect(pool({ SANDBOX_PREIMPORT: "none" }).preimport).toEqual([]);
  });

  it("takes a list of module names and refuses anything else", () => {
    expect(pool({ SANDBOX_PREIMPORT: "numpy,scipy.stats" }).preimport).toEqual(["numpy", "scipy.stats"]);
    for (const bad of ["numpy,", "os;rm", ",numpy", "1abc"]) expect(() => pool({ SANDBOX_PREIMPORT: bad }), bad).toThrow(/SANDBOX_PREIMPORT/);
  });

  it("sizes the pool from RUNNER_CONCURRENCY unless SANDBOX_POOL_SIZE says otherwise", () => {
    expect(pool({ RUNNER_CONCURRENCY: "3" }).size).toBe(3);
    expect(pool({ RUNNER_CONCURRENCY: "3", SANDBOX_POOL_SIZE: "0" }).size).toBe(0);
  });
});

describe("the pool's defaults", () => {
  it("are the sandbox library's, pool size aside (the runner's concurrency)", () => {
    const { size, maxRunMs, ...library } = DEFAULT_POOL_OPTIONS;
    expect({ size, maxRunMs }).toEqual({ size: 0, maxRunMs: 30 * 60_000 });
    expect(pool({ RUNNER_CONCURRENCY: "2" })).toEqual({ ...library, size: 2, preimport: ["numpy", "pandas"] });
    expect(library).toMatchObject({ ttlMs: 600_000, maxIdleBytes: 2048 * 1024 * 1024, refillDelayMs: 0 });
  });
});

describe("SANDBOX_POOL_REFILL_DELAY_MS", () => {
  it("defaults to 0 (refill at hand-out), takes a delay, and a negative or fractional value is refused", () => {
    expect(pool({}).refillDelayMs).toBe(0);
    expect(pool({ SANDBOX_POOL_REFILL_DELAY_MS: "0" }).refillDelayMs).toBe(0);
    expect(pool({ SANDBOX_POOL_REFILL_DELAY_MS: "250" }).refillDelayMs).toBe(250);
    for (const bad of ["-1", "1.5", "soon"]) expect(() => pool({ SANDBOX_POOL_REFILL_DELAY_MS: bad }), bad).toThrow(/SANDBOX_POOL_REFILL_DELAY_MS/);
  });
});

describe("SANDBOX_RUNTIME", () => {
  it("defaults to auto, takes a runtime's name, and refuses what cannot be one", () => {
    expect(parseConfig(runnerConfigSchema, {}).SANDBOX_RUNTIME).toBe("auto");
    expect(parseConfig(runnerConfigSchema, { SANDBOX_RUNTIME: "runsc" }).SANDBOX_RUNTIME).toBe("runsc");
    for (const bad of ["run sc", "-x", "a/b"]) expect(() => parseConfig(runnerConfigSchema, { SANDBOX_RUNTIME: bad }), bad).toThrow(/SANDBOX_RUNTIME/);
  });
});
