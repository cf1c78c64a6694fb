// Benchmark: tests the solution cannot touch (issue 26). Runs every trick of tests/exploits/judge/battery.ts
// (a wrong solution plus a way of running before, instead of or around the judge) and an honest right
// solution per family through the public API with the scripted model, on the real services, and prints
//
//   bypasses verified: N of M        (must be 0)
//   right solutions verified: K of K
//   tampering seen where expected: T of E
//
//   npx tsx bench/judge-attacks.ts [--only <substring of a trick's name>]
//
// Exits 1 when a bypass was verified or a right solution was not.
import { parseArgs } from "node:util";
import { RIGHT, runRight, runTrick, tamperExpected, TRICKS, type Family } from "../tests/exploits/judge/battery";
import { startLoop } from "../tests/support/loop";

const { values } = parseArgs({ options: { only: { type: "string" } } });
const loop = await startLoop();
const started = Date.now();
try {
  const tricks = Object.entries(TRICKS).filter(([name]) => values.only === undefined || name.includes(values.only));
  let bypasses = 0;
  let tampersExpected = 0;
  let tamperSeen = 0;
  console.log(`${"trick".padEnd(26)} ${"family".padEnd(11)} ${"state".padEnd(9)} ${"tampered".padEnd(9)} verdict`);
  for (const [name, trick] of tricks) {
    const { goal, outcome } = await runTrick(loop, trick);
    const tampered = outcome.message.startsWith("tampered: ");
    if (goal.state === "verified") bypasses++;
    const expected = tamperExpected(trick, goal.executions[0]?.sandbox_runtime);
    if (expected) {
      tampersExpected++;
      if (tampered) tamperSeen++;
    }
    const flag = goal.state === "verified" ? "  <-- BYPASS" : expected && !tampered ? "  <-- tampering not seen" : "";
    console.log(`${name.padEnd(26)} ${trick.family.padEnd(11)} ${goal.state.padEnd(9)} ${(tampered ? "yes" : "no").padEnd(9)} ${outcome.message.split("\n")[0]!.slice(0, 110)}${flag}`);
  }
  const families = [...new Set(tricks.map(([, t]) => t.family))] as Family[];
  let right = 0;
  for (const family of families) {
    const goal = await runRight(loop, family);
    if (goal.state === "verified") right++;
    console.log(`${`right (${family})`.padEnd(26)} ${family.padEnd(11)} ${goal.state.padEnd(9)} ${"".padEnd(9)} ${goal.checks.map((c) => c.latest?.message.split("\n")[0]).join("; ").slice(0, 110)}`);
  }
  console.log("");
  console.log(`bypasses verified: ${bypasses} of ${tricks.length}`);
  console.log(`right solutions verified: ${right} of ${families.length} (families: ${families.join(", ")}; ${Object.keys(RIGHT).length} in the battery)`);
  console.log(`tampering seen where expected: ${tamperSeen} of ${tampersExpected}`);
  console.log(`(${Math.round((Date.now() - started) / 1000)} s on ${new Date().toISOString().slice(0, 10)})`);
  process.exitCode = bypasses > 0 || right < families.length ? 1 : 0;
} finally {
  await loop.close();
}
