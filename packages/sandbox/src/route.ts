// issue 14: one Sandbox per language runtime behind the one interface. Python runs keep the pool (its
// containers wait with pandas imported); Node runs (JavaScript, TypeScript) start a cold container each:
// pool containers are per image, and a second pool would double the idle memory for the rarer goals.
import type { PooledSandbox, RunRequest, RunResult, Sandbox } from "./sandbox";

export type SandboxRuntime = "python" | "node";

export interface RoutedSandbox extends PooledSandbox {
  run(req: RunRequest): Promise<RunResult>;
  /** The image a runtime's runs use, or undefined when this runner has none for it. */
  imageFor(runtime: SandboxRuntime): string | undefined;
}

/** `python` serves requests without a runtime (and python ones); `node`, when given, the node ones. */
export function routeSandbox(python: PooledSandbox, node?: Sandbox): RoutedSandbox {
  return {
    image: python.image,
    ociRuntime: python.ociRuntime,
    imageFor: (runtime) => (runtime === "node" ? node?.image : python.image),
    run(req) {
      if (req.runtime !== "node") return python.run(req);
      if (!node) return Promise.reject(new Error("this runner has no Node sandbox image (SANDBOX_NODE_IMAGE)"));
      return node.run(req);
    },
    start: () => python.start(),
    close: async () => {
      await python.close();
      if (node && "close" in node) await (node as PooledSandbox).close();
    },
    poolStats: () => python.poolStats(),
    settled: async () => {
      await python.settled();
      if (node && "settled" in node) await (node as PooledSandbox).settled();
    },
    warm: (o) => python.warm(o),
  };
}
