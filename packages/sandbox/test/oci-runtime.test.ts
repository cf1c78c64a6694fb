// SANDBOX_RUNTIME's choice, as a pure function of the setting and what the engine offers.
import { describe, expect, it } from "vitest";
import { chooseOciRuntime } from "../src/index";

const withGvisor = { runtimes: ["runc", "runsc"], defaultRuntime: "runc" };
const without = { runtimes: ["runc"], defaultRuntime: "runc" };

describe("chooseOciRuntime", () => {
  it("auto takes gVisor where the engine offers it", () => {
    expect(chooseOciRuntime("auto", withGvisor)).toEqual({ runtime: "runsc", reason: "gVisor (runsc), offered by the engine (runtimes: runc, runsc)" });
  });

  it("auto without gVisor takes the engine's default and says why", () => {
    const c = chooseOciRuntime("auto", { ...without, defaultRuntime: "crun" });
    expect(c.runtime).toBe("crun");
    expect(c.reason).toMatch(/^the engine offers no gVisor runtime \(runsc\), so crun/);
  });

  it("a named runtime is taken when offered, and refused when not (never a quiet fall back to runc)", () => {
    expect(chooseOciRuntime("runc", withGvisor)).toEqual({ runtime: "runc", reason: "SANDBOX_RUNTIME=runc" });
    expect(chooseOciRuntime("runsc", withGvisor).runtime).toBe("runsc");
    expect(() => chooseOciRuntime("runsc", without)).toThrow("SANDBOX_RUNTIME=runsc: the Docker engine has no such runtime (runtimes: runc)");
    expect(() => chooseOciRuntime("kata", { runtimes: [], defaultRuntime: "runc" })).toThrow(/runtimes: none listed/);
  });
});
