#!/usr/bin/env node
// The loopsmith command. The sources are TypeScript, run through tsx's loader (a dependency), like every
// other entry point of this repository. --version answers before any of that is loaded (it is what a
// script asks first, and loading the loader and the client takes seconds).
import { readFileSync } from "node:fs";

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`${JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version}\n`);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  const { main, processIo } = await import("../src/main.ts");
  process.exitCode = await main(argv, processIo());
}
