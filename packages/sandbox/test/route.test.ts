import { describe, expect, it } from "vitest";
import { createDockerSandbox as createForRuntime, routeSandbox as route } from "../src/index";

// issue 14: a sandbox serves one runtime; routeSandbox sends each request to the sandbox of its runtime.
describe("runtimes", () => {
  it("a sandbox refuses a request for another runtime before touching the engine", async () => {
    const docker = {} as never;
    const node = createForRuntime({ docker, image: "loopsmith/sandbox-node:x", runnerId: "t", runtime: "node" });
    await expect(node.run({ files: [], command: ["python3", "-c", "pass"], timeoutMs: 1000 })).rejects.toThrow(/runs node .* not python/);
    const py = createForRuntime({ docker, image: "loopsmith/sandbox-python:x", runnerId: "t" });
    await expect(py.run({ files: [], command: ["node", "-e", "1"], timeoutMs: 1000, runtime: "node" })).rejects.toThrow(/runs python .* not node/);
  });

  it("routes by runtime, and a runner without a Node image says so", async () => {
    const seen: string[] = [];
    const fake = (name: string) =>
      ({ image: name, run: async () => (seen.push(name), {}) as never, start() {}, close: async () => {}, poolStats: () => ({ idle: 0, ready: 0, target: 0, creating: false }), settled: async () => {}, warm: async () => {} }) as never;
    const routed = route(fake("py"), fake("node"));
    await routed.run({ files: [], command: ["x"], timeoutMs: 1 });
    await routed.run({ files: [], command: ["x"], timeoutMs: 1, runtime: "node" });
    expect(seen).toEqual(["py", "node"]);
    expect(routed.imageFor("node")).toBe("node");
    await expect(route(fake("py")).run({ files: [], command: ["x"], timeoutMs: 1, runtime: "node" })).rejects.toThrow(/no Node sandbox image/);
  });
});

describe("work file paths (issue 14)", () => {
  it("a workspace's node_modules/@types paths are accepted; . and .. segments still are not", async () => {
    const py = createForRuntime({ docker: {} as never, image: "loopsmith/sandbox-python:x", runnerId: "t" });
    const run = (path: string) => py.run({ files: [], workFiles: [{ path, content: Buffer.from("x") }], command: ["true"], timeoutMs: 1000 });
    // Past validation, the fake engine fails: the path itself was accepted.
    await expect(run("node_modules/@types/node/index.d.ts")).rejects.not.toThrow(/work file path/);
    for (const p of ["a/../b", "./a", "a/.", "..", "a//b"]) await expect(run(p), p).rejects.toThrow(/work file path/);
  });
});
