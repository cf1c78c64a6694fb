// A check thread: runs one check at a time on the evidence it was sent, so that a slow or runaway
// comparator blocks this thread only, never the runner's event loop.
import { parentPort } from "node:worker_threads";
import type { CheckSpec } from "@loopsmith/schemas";
import { runCheck } from "./run";
import type { NamedFile, RunEvidence, VerifyContext } from "./types";

export type ToWorker =
  | { type: "ctx"; ctx: VerifyContext }
  | { type: "check"; seq: number; spec: CheckSpec; runs: RunEvidence[] };

// Structured cloning turns Buffers into plain Uint8Arrays.
const files = (list: NamedFile[]) => list.map((f) => ({ name: f.name, content: Buffer.from(f.content.buffer, f.content.byteOffset, f.content.byteLength) }));
const evidence = (r: RunEvidence): RunEvidence => ({ ...r, artifacts: files(r.artifacts), ...(r.judge ? { judge: { ...r.judge, files: files(r.judge.files) } } : {}) });

let ctx: VerifyContext | undefined;
// Loading the verifier takes a while on a busy machine; a check's time limit starts after this.
parentPort!.postMessage({ ready: true });
parentPort!.on("message", (m: ToWorker) => {
  if (m.type === "ctx") {
    ctx = { ...evidence(m.ctx), inputs: files(m.ctx.inputs), checkerFiles: files(m.ctx.checkerFiles), program: m.ctx.program, runs: [], ...(m.ctx.workspace ? { workspace: m.ctx.workspace } : {}) };
    return;
  }
  if (!ctx) throw new Error("check thread: a check arrived before its evidence");
  const outcome = runCheck(m.spec, ctx, m.runs.map(evidence));
  parentPort!.postMessage({ seq: m.seq, outcome });
});
