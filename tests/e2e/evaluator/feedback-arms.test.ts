// Issue 11.2: the control arm. A `retry_only` goal's refiner is told only that the attempt was wrong:
// none of the run's stderr, the check messages or the inspector's diagnosis reaches its request (asserted
// on the body the fake OpenAI-compatible server received); the `full` arm's refiner gets all three.
import { describe, expect, it } from "vitest";
import { fakeProviderLoops } from "../../support/fake-loop";

const fakeLoop = fakeProviderLoops("fake");

const reply = (o: unknown) => ({ content: JSON.stringify(o), usage: { prompt_tokens: 100, completion_tokens: 50 } });
const STDERR_MARK = "XYZZY-stderr-7d1";
const DIAGNOSIS_MARK = "PLUGH-diagnosis-3c9";
const WRONG = `import json, os, sys\njson.dump({"total": 41}, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))\nprint("XYZZY" + "-stderr-7d1", file=sys.stderr)\n`;
const RIGHT = `import json, os\njson.dump({"total": 42}, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))\n`;

async function runArm(feedback: "full" | "retry_only") {
  const { fake, loop } = await fakeLoop([
    reply({ objective: "the answer", approach: ["compute"], output_contract: '{"total": int}', checks: [] }),
    reply({ filename: "answer.py", language: "python", source: WRONG, notes: "" }),
    reply({ verified: false, failing_checks: ["json_assert"], diagnosis: DIAGNOSIS_MARK, fix_hint: "add one" }),
    reply({ filename: "answer.py", language: "python", source: RIGHT, notes: "" }),
    reply({ verified: true, failing_checks: [], diagnosis: "done", fix_hint: "" }),
  ]);
  const goal = await loop.run({
    objective: "Write the answer to result.json.",
    feedback,
    checks: [{ id: "json_assert", params: { pointer: "/total", op: "eq", value: 42 } }],
    model: { provider: "openai-compatible" },
  });
  const refine = JSON.stringify(fake.requests[3]);
  return { goal, refine };
}

describe("feedback arms", () => {
  it("retry_only: the refiner gets the task and its program, and nothing of the run, the checks or the diagnosis", async () => {
    const { goal, refine } = await runArm("retry_only");
    expect(goal.state).toBe("verified");
    expect(goal.feedback).toBe("retry_only");
    expect(refine).toContain("That attempt was wrong. Write a different solution.");
    expect(refine).toContain("total");
    for (const leak of [STDERR_MARK, DIAGNOSIS_MARK, "add one", "is a number (41)", "expected 42", "json_assert", "exit code"]) expect(refine).not.toContain(leak);
    // The arm is on the tape.
    expect(goal.transitions.find((t) => t.from === "plan")!.detail).toMatchObject({ feedback: "retry_only" });
    expect(goal.transitions.find((t) => t.from === "refine")!.detail).toMatchObject({ feedback: "retry_only" });
  });

  it("full (control of the control): the refiner gets stderr, the check's message and the diagnosis", async () => {
    const { goal, refine } = await runArm("full");
    expect(goal.feedback).toBe("full");
    for (const seen of [STDERR_MARK, DIAGNOSIS_MARK, "json_assert", "41"]) expect(refine).toContain(seen);
  });
});
