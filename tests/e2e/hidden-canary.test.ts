// Hidden means hidden (issue 10): a canary string inside every kind of hidden material (an expected CSV,
// inline expected values, a hidden test file, a JSON Schema, an expected text file) never reaches a
// request body sent to a model, in any of the four turns, nor the program's own container. The program
// hunts for it everywhere it can look, and in the test-suite container (where the client's tests must
// be) it tries to smuggle it out through forged test names and exception types. A positive control
// shows the test can fail: with reveal "full" the canary does reach the refiner.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fakeProviderLoops } from "../support/fake-loop";

const fakeLoop = fakeProviderLoops();

// The program knows only the prefix (split, so that its own source never spells it): whatever follows
// is what it would have to find.
const PREFIX = "LSCAN" + "ARY";
const HUNTER = `import atexit, json, os, sys
PREFIX = "LSCAN" + "ARY"
SKIP = ("/usr", "/proc", "/sys", "/dev", "/lib", "/bin", "/sbin")

def scan_text(text, where, found):
    i = text.find(PREFIX)
    while i >= 0:
        found.append(where + ": " + text[i:i + 40])
        i = text.find(PREFIX, i + 1)

def hunt():
    found = []
    for k, v in os.environ.items():
        scan_text(k + "=" + v, "env", found)
    for pid in os.listdir("/proc"):
        for part in ("environ", "cmdline"):
            try:
                scan_text(open("/proc/%s/%s" % (pid, part), "rb").read().decode("latin-1"), "/proc/" + pid, found)
            except OSError:
                pass
    for root, dirs, files in os.walk("/"):
        if root.startswith(SKIP):
            dirs[:] = []
            continue
        for name in files:
            p = os.path.join(root, name)
            try:
                if os.path.getsize(p) < 5_000_000:
                    scan_text(open(p, "rb").read().decode("latin-1"), p, found)
            except OSError:
                pass
    return found

FOUND = hunt()
token = "".join(c for c in FOUND[0].split(PREFIX, 1)[1][:17] if c in "-0123456789abcdef") if FOUND else ""

def smuggle():
    # Only where the canary is (a test suite's container): name a test and an exception after it.
    out = os.environ.get("OUTPUT_DIR", "/work/out")
    with open(os.path.join(out, "junit.xml"), "w") as f:
        f.write('<testsuites><testsuite name="pytest" tests="1" failures="1"><testcase classname="test_hidden" name="test_%s%s"><failure message="x">%s%s: leaked</failure></testcase></testsuite></testsuites>' % (PREFIX, token, PREFIX, token))
    os._exit(1)

if token and "pytest" in sys.modules:
    atexit.register(smuggle)
    raise type("Leak" + PREFIX + token, (Exception,), {})("smuggled " + PREFIX + token)

def f(x):
    return "nothing to find" if not FOUND else FOUND[0]

if __name__ == "__main__":
    out = os.environ["OUTPUT_DIR"]
    json.dump({"found": FOUND, "answer": "unknown"}, open(os.path.join(out, "result.json"), "w"))
    open(os.path.join(out, "clean.csv"), "w").write("id,value\\n1,guess\\n")
    open(os.path.join(out, "answer.txt"), "w").write("guess\\n")
    print(json.dumps({"found": FOUND}))
`;

function hiddenGoal(canary: string, reveal: "input" | "full") {
  return {
    objective: "Answer the hidden questions.",
    max_attempts: 2,
    inputs: [{ name: "data.csv", text: "id\n1\n" }],
    checker_files: [
      { name: "expected.csv", text: `id,value\n1,${canary}\n` },
      // issue 26: a parametrised test's id carries its parameters (test_param[<canary>]): shown to a model only at reveal full.
      { name: "test_hidden.py", text: `import pytest\nfrom solution import f\n\ndef test_secret():\n    assert f(1) == "${canary}"\n\n@pytest.mark.parametrize("expected", ["${canary}"])\ndef test_param(expected):\n    assert f(2) == expected\n` },
      { name: "expected.txt", text: `${canary}\n` },
    ],
    checks: [
      { id: "csv_matches", reveal, params: { artifact: "clean.csv", expected_file: "expected.csv" } },
      { id: "cases", hidden: true, reveal, params: { function: "f", cases: [{ args: [1], expected: canary }] } },
      { id: "test_suite", reveal, params: { tests: ["test_hidden.py"] } },
      // The in-process mode, where the program runs beside the tests and can read them: it smuggles what it finds.
      { id: "test_suite", reveal, params: { tests: ["test_hidden.py"], isolation: "none" } },
      { id: "json_matches", hidden: true, reveal, params: { artifact: "result.json", pointer: "/answer", expected: canary } },
      { id: "json_schema", hidden: true, reveal, params: { artifact: "result.json", schema: { type: "object", properties: { answer: { const: canary } } } } },
      { id: "text_matches", reveal, params: { artifact: "answer.txt", expected_file: "expected.txt" } },
    ],
    model: { provider: "openai-compatible" },
  };
}

const reply = (o: unknown) => ({ content: JSON.stringify(o), usage: { prompt_tokens: 100, completion_tokens: 50 } });
const PLAN = { objective: "answer", approach: ["look"], output_contract: "files", checks: [] };
const CODE = { filename: "solution.py", language: "python", source: HUNTER, notes: "" };
const NOT_YET = { verified: false, failing_checks: [], diagnosis: "not yet", fix_hint: "try again" };

async function runHidden(reveal: "input" | "full") {
  const canary = `${PREFIX}-${randomBytes(8).toString("hex")}`;
  const { fake, loop } = await fakeLoop([reply(PLAN), reply(CODE), reply(NOT_YET), reply(CODE), reply(NOT_YET)]);
  const goal = await loop.run(hiddenGoal(canary, reveal));
  return { canary, goal, loop, bodies: fake.requests.map((r) => JSON.stringify(r)) };
}

describe("hidden material", () => {
  it("never reaches a model request nor the program's container; the client still sees everything", async () => {
    const { canary, goal, loop, bodies } = await runHidden("input");
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → failed");
    // Every turn asked the model: plan, generate, inspect, refine, inspect.
    expect(bodies).toHaveLength(5);
    for (const body of bodies) expect(body).not.toContain(canary);
    // Nor any part of it beyond the prefix the program knows.
    for (const body of bodies) expect(body).not.toContain(canary.slice(PREFIX.length));
    // The program's own container: it looked everywhere and found nothing.
    for (const e of goal.executions) expect(JSON.parse(e.stdout_tail)).toEqual({ found: [] });
    // Every hidden check failed and was reported to the models without its material.
    for (const c of goal.checks.filter((c) => c.hidden)) expect(c.latest, c.id).toMatchObject({ passed: false });
    expect(goal.checks.filter((c) => c.hidden).map((c) => c.id).sort()).toEqual(["cases", "csv_matches", "json_matches", "json_schema", "test_suite", "test_suite", "text_matches"]);
    // issue 26: with the tests in a process of their own (the default), the program's process could not read
    // them: it failed both tests with nothing found. The client's view shows its own assertions and the
    // parametrised id; no model saw either.
    // Two test_suite checks: told apart by their stored params (the goal's view keys outcomes by check id).
    const judged = await loop.prisma.checkResult.findMany({ where: { goalId: goal.id, attempt: goal.attempts, checkId: "test_suite" } });
    const isolated = judged.find((c) => (c.params as { isolation?: string }).isolation === "process");
    const inProcess = judged.find((c) => (c.params as { isolation?: string }).isolation === "none");
    expect(isolated!.message).toMatch(/^2 tests: 0 passed, 2 failed/);
    expect(JSON.stringify(isolated!.findings), isolated!.message).toContain(canary.slice(PREFIX.length));
    expect(isolated!.feedback).not.toContain(canary.slice(PREFIX.length));
    expect(isolated!.feedback).toContain("test_hidden::test_param failed");
    // In-process, the program found the test file and forged a test name and an exception type from it: the
    // client's view shows the attempt; no model saw it.
    expect(JSON.stringify(inProcess!.findings), inProcess!.message).toContain(canary.slice(PREFIX.length));
    expect(inProcess!.feedback).not.toContain(canary.slice(PREFIX.length));
    // The client sees its own material in the results.
    expect(goal.checks.find((c) => c.id === "csv_matches")!.latest!.findings[0]!.expected).toContain(canary);

    // Issue 15: exported as a replayable script, the material is in the checker-material part (the
    // checker files, the hidden checks' params) and in no model-visible part.
    const exported = await loop.request("GET", `/goals/${goal.id}/script`);
    expect(exported.status).toBe(200);
    const { checker_files, checks, ...visible } = (exported.body as { body: Record<string, unknown> & { checks: { hidden?: boolean }[] } }).body;
    for (const [part, value] of Object.entries(visible)) expect(JSON.stringify(value), part).not.toContain(canary.slice(PREFIX.length));
    for (const c of checks.filter((c) => !c.hidden)) expect(JSON.stringify(c)).not.toContain(canary.slice(PREFIX.length));
    expect(JSON.stringify(checker_files)).toContain(canary);
    // Issue 27: the original's tape too. A hidden check's message (csv_matches names the expected cell) is
    // on every INSPECT row; the export moves it to original.hidden_messages and leaves a marker in its place.
    const { hidden_messages, ...outcome } = (exported.body as { original: Record<string, unknown> & { hidden_messages?: unknown } }).original;
    for (const [part, value] of Object.entries(outcome)) expect(JSON.stringify(value), `original.${part}`).not.toContain(canary.slice(PREFIX.length));
    expect(JSON.stringify(hidden_messages)).toContain(canary);
  }, 120_000); // a goal of three attempts, then its export (issue 15): over a minute on a loaded machine

  it("positive control: with reveal full, the expected values do reach the refiner", async () => {
    const { canary, bodies } = await runHidden("full");
    expect(bodies.some((b) => b.includes(canary))).toBe(true);
    // Still never the planner's or the generator's request: reveal is about results, not the material.
    expect(bodies[0]).not.toContain(canary);
    expect(bodies[1]).not.toContain(canary);
  });
});
