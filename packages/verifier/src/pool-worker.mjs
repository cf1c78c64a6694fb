// Entry of a check thread (see pool.ts). Worker threads do not inherit the parent's TypeScript loader,
// so the thread registers tsx itself before loading the verifier.
import { register } from "tsx/esm/api";

register();
await import("./pool-worker.ts");
