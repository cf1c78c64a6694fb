// Benchmark: what test_suite's process boundary costs (issue 26). One pytest suite of hundreds of tests over
// a module of plain functions, a class and module-level state, judged with the tests in a process of their
// own (isolation process: every call crosses a pipe) and in pytest's own process (isolation none), in the
// same sandbox, interleaved; prints the medians side by side with their ratio.
//
//   npx tsx bench/judge-overhead.ts            (optionally --tests 600 --runs 5)
import { parseArgs } from "node:util";
import { createDockerSandbox, dockerClient, pingDocker, sandboxImageTag } from "@loopsmith/sandbox";
import type { CheckSpec } from "@loopsmith/schemas";
import { planCheckRuns, runCheck, type VerifyContext } from "@loopsmith/verifier";
import { median } from "./lib/stats";

const { values } = parseArgs({ options: { tests: { type: "string", default: "600" }, runs: { type: "string", default: "5" } } });
const n = Number(values.tests);
const runs = Number(values.runs);

const MODULE = `import math
RATES = {"standard": 0.2, "reduced": 0.05, "zero": 0.0}
class Cart:
    def __init__(self):
        self.items = []
    def add(self, name, qty, unit):
        self.items.append((name, qty, unit))
        return self
    def total(self):
        return round(sum(q * u for _, q, u in self.items), 2)
def vat(amount, band):
    return round(amount * RATES[band], 2)
def slug(text):
    return "-".join(w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split())
def primes(limit):
    return [p for p in range(2, limit) if all(p % d for d in range(2, int(math.sqrt(p)) + 1))]
`;
const TESTS = `import pytest
import shop

@pytest.mark.parametrize("i", range(${Math.ceil(n / 3)}))
def test_vat(i):
    assert shop.vat(i * 10.0, "standard") == round(i * 10.0 * 0.2, 2)

@pytest.mark.parametrize("i", range(${Math.ceil(n / 3)}))
def test_cart(i):
    cart = shop.Cart().add("a", i, 1.5).add("b", 2, 0.25)
    assert cart.total() == round(i * 1.5 + 0.5, 2)
    assert len(cart.items) == 2

@pytest.mark.parametrize("i", range(${n - 2 * Math.ceil(n / 3)}))
def test_mixed(i):
    assert shop.slug("Hello World %d!" % i) == "hello-world-%d" % i
    assert shop.primes(30)[:3] == [2, 3, 5]
    assert "standard" in shop.RATES
`;

await pingDocker(dockerClient());
const sandbox = createDockerSandbox({ docker: dockerClient(), image: sandboxImageTag(), runnerId: "bench-judge-overhead" });
const checkerFiles = [{ name: "test_shop.py", content: Buffer.from(TESTS) }];
const program = { filename: "shop.py", source: MODULE };
const ctx: VerifyContext = { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 0, artifacts: [], artifactErrors: [], inputs: [], checkerFiles, program, runs: [] };

async function once(isolation: "process" | "none"): Promise<{ ms: number; message: string; passed: boolean }> {
  const spec: CheckSpec = { id: "test_suite", kind: "deterministic", description: "", params: { tests: ["test_shop.py"], module: "shop", min_tests: n, isolation } };
  const [req] = planCheckRuns(spec, { program, checkerFiles, inputs: [] });
  const { files, ...rest } = req!;
  const t = performance.now();
  const res = await sandbox.run({ files: [], workFiles: files, ...rest, purpose: "check" });
  const ms = performance.now() - t;
  const outcome = runCheck(spec, ctx, [{ ...res, artifacts: res.artifacts.map((a) => ({ name: a.name, content: a.content })) }]);
  return { ms, message: outcome.message, passed: outcome.passed };
}

const times = { process: [] as number[], none: [] as number[] };
for (let i = 0; i < runs; i++) {
  for (const mode of ["process", "none"] as const) {
    const r = await once(mode);
    if (!r.passed) throw new Error(`${mode}: the honest suite did not pass: ${r.message}`);
    times[mode].push(r.ms);
  }
}
const p = median(times.process);
const none = median(times.none);
console.log(`test_suite over ${n} tests (${runs} runs each, interleaved, cold containers, ${new Date().toISOString().slice(0, 10)})`);
console.log(`  isolation none (in pytest's process):     median ${Math.round(none)} ms   [${times.none.map(Math.round).join(", ")}]`);
console.log(`  isolation process (tests in their own):   median ${Math.round(p)} ms   [${times.process.map(Math.round).join(", ")}]`);
console.log(`  boundary overhead: ${Math.round(p - none)} ms per suite (${(p / none).toFixed(2)}x), ${((p - none) / n).toFixed(2)} ms per test`);
