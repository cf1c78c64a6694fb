// issue 27.1: feedback that teaches without leaking. An adaptive fake model (through the fake OpenAI-compatible
// server) never implements the function: each refinement it reads the failing cases in its feedback and answers
// them from a table (for a boolean function the expected value is the other one), and its program walks the
// stack and the disk for the case it is answering, as a program did through the harness's frames. With the cases
// answered one at a time in forks that hold only the inputs, and held-out cases reported only as a count, it must
// never reach verified, whatever the inspector (the same fake) says.
import { expect, it } from "vitest";
import { heldOut } from "../../packages/verifier/src/checks/cases";
import { fakeProviderLoops } from "../support/fake-loop";

const fakeLoop = fakeProviderLoops();

// Eight cases of is_prime; the two the check holds out (a hash of their ids) get one prime and one composite,
// so that no default answer passes both.
const IDS = ["a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8"];
const held = [...heldOut(IDS.map((id) => ({ id })), 0.25)];
const VISIBLE_VALUES = [2, 4, 11, 15, 17, 21];
const CASES = IDS.map((id) => {
  const n = held[0] === id ? 7 : held[1] === id ? 9 : VISIBLE_VALUES.shift()!;
  return { id, args: [n], expected: [2, 3, 5, 7, 11, 13, 17, 19].includes(n) };
});

function program(table: Record<number, boolean>, fallback: boolean): string {
  return `import glob, json, os, sys
TABLE = {${Object.entries(table).map(([k, v]) => `"${k}": ${v ? "True" : "False"}`).join(", ")}}
def _which_case():
    # The trick that used to work: the harness's frames above the call held the running case's id.
    f = sys._getframe(1)
    while f is not None:
        for v in list(f.f_locals.values()):
            if isinstance(v, dict) and "id" in v:
                return v["id"]
        f = f.f_back
    for path in glob.glob("/work/**/*.json", recursive=True) + glob.glob("/work/.judge/*"):
        try:
            open(path).read()
            return "file:" + path
        except OSError:
            pass
    return None
def is_prime(n):
    seen = _which_case()
    if seen is not None:
        print("found", seen, file=sys.stderr)
    return TABLE.get(str(n), ${fallback ? "True" : "False"})
`;
}

const reply = (o: unknown) => ({ content: JSON.stringify(o), usage: { prompt_tokens: 100, completion_tokens: 50 } });
const PLAN = { objective: "is_prime", approach: ["learn the answers from the feedback"], output_contract: "is_prime(n)", checks: [] };
const YES = { verified: true, failing_checks: [], diagnosis: "done", fix_hint: "" };

it("an adaptive model answering from its feedback never reaches verified", async () => {
  expect(held).toHaveLength(2);
  const table: Record<number, boolean> = {};
  let attempt = 0;
  // Refinements learn from the failing cases the feedback names, and alternate the default answer.
  const refine = (body: unknown) => {
    const text = JSON.stringify(body);
    for (const m of text.matchAll(/is_prime\((\d+)\) \| got: (True|False)/g)) table[Number(m[1])] = m[2] === "False";
    attempt++;
    return reply({ filename: "solution.py", language: "python", source: program(table, attempt % 2 === 1), notes: "learned" });
  };
  // After the plan and the first program, each turn answers by the schema it is asked for: an inspection
  // (always "verified") or a program.
  const turn = (body: unknown) => (JSON.stringify((body as { response_format?: unknown }).response_format ?? "").includes("GeneratedCode") ? refine(body) : reply(YES));
  const { fake, loop } = await fakeLoop([reply(PLAN), reply({ filename: "solution.py", language: "python", source: program({}, false), notes: "" }), ...Array.from({ length: 12 }, () => turn)]);
  const goal = await loop.run({
    objective: "Write is_prime(n) in solution.py.",
    deliverable: null,
    max_attempts: 5,
    checker_files: [{ name: "cases.json", text: JSON.stringify(CASES) }],
    checks: [{ id: "cases", params: { function: "is_prime", cases_file: "cases.json", timeout_seconds: 5 } }],
    model: { provider: "openai-compatible" },
  });
  expect(goal.state, goal.tape).toBe("failed");
  expect(goal.attempts).toBe(5);
  // It learned every visible case, and nothing of the held-out ones.
  const heldValues = CASES.filter((c) => held.includes(c.id)).map((c) => c.args[0]!);
  for (const c of CASES.filter((x) => !held.includes(x.id))) expect(table[c.args[0]!], c.id).toBe(c.expected);
  for (const n of heldValues) expect(table[n]).toBeUndefined();
  // The held-out cases reached the models as a count only: no id, input or output of theirs in any request.
  const bodies = fake.requests.map((r) => JSON.stringify(r));
  for (const body of bodies) {
    for (const id of held) expect(body).not.toContain(`case \\"${id}\\"`);
    for (const n of heldValues) expect(body).not.toContain(`is_prime(${n})`);
  }
  expect(bodies.some((b) => /held-out case/.test(b))).toBe(true);
  // Its last attempt failed on held-out cases alone.
  const last = goal.checks.find((c) => c.id === "cases")!.latest!;
  expect(last.findings).toEqual([]);
  expect(last.feedback).toMatch(/held-out case/);
  // The program never found which case it was answering: no frame held an id, no file was readable.
  const runs = await loop.prisma.checkRun.findMany({ where: { goalId: goal.id } });
  for (const r of runs) expect(Buffer.from(r.evidence).toString()).not.toContain("found ");
}, 300_000);
