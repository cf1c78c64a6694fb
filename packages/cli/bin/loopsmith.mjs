#!/usr/bin/env node
// The loopsmith command. The sources are TypeScript, run through tsx's loader (a dependency), like every
// other entry point of this repository.
import { register } from "tsx/esm/api";

register();
const { main, processIo } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2), processIo());
