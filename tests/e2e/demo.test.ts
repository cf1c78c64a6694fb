// `npm run demo`'s program as a real process: the API and a runner as child processes, the scripted model,
// and with --provider openai-compatible a (fake) OpenAI-compatible server instead.
import { afterEach, describe, expect, it } from "vitest";
import { SUITE_RUNTIME } from "../../packages/sandbox/test/support";
import { spawnTs } from "../../scripts/lib/proc";
import { startFakeOpenAI, type FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { demoScript, EXPECTED_REPORT, EXPECTED_TAPE, SCRIPT_CORRECT } from "../../scripts/demo/scenario";
import { DATABASE_URL, randomPrefix, REDIS_URL } from "../support/services";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const env = () => ({ DATABASE_URL, REDIS_URL, QUEUE_PREFIX: randomPrefix("demo") });

function resultOf(output: string) {
  const json = output.slice(output.indexOf("{\n"), output.lastIndexOf("\n}") + 2);
  return JSON.parse(json) as { final_state: string; attempts: number; tape: string; report: unknown; timings_ms: Record<string, unknown> };
}

describe("npm run demo", () => {
  it("prints the verified result of the running example and exits 0", async () => {
    const p = spawnTs("scripts/demo.ts", env());
    const { code } = await p.exited;
    expect(code, p.output()).toBe(0);
    const result = resultOf(p.output());
    expect(result).toMatchObject({ final_state: "verified", attempts: 3, tape: EXPECTED_TAPE });
    expect(result.report).toEqual(EXPECTED_REPORT);
    expect(result.timings_ms.programs_running_in_containers).toBeGreaterThan(0);
  }, 180_000);

  it("runs against an OpenAI-compatible server when DEMO_PROVIDER (or --provider) says so", async () => {
    const { plan } = demoScript();
    fake = await startFakeOpenAI([
      { content: JSON.stringify(plan) },
      { content: JSON.stringify({ filename: "analysis.py", language: "python", source: SCRIPT_CORRECT, notes: "" }) },
      { content: JSON.stringify({ verified: true, failing_checks: [], diagnosis: "ok", fix_hint: "" }) },
    ]);
    const p = spawnTs("scripts/demo.ts", {
      ...env(),
      OPENAI_COMPATIBLE_BASE_URL: fake.baseURL,
      OPENAI_COMPATIBLE_MODEL: "local-model",
      DEMO_PROVIDER: "openai-compatible",
      // The provider's wire format is what this case is about; the first one runs the product's default runtime.
      SANDBOX_RUNTIME: SUITE_RUNTIME,
    });
    const { code } = await p.exited;
    expect(code, p.output()).toBe(0);
    const result = resultOf(p.output());
    expect(result).toMatchObject({ final_state: "verified", attempts: 1, tape: "plan → generate → execute → inspect → verified" });
    expect(result.report).toEqual(EXPECTED_REPORT);
    expect(fake.requests).toHaveLength(3);
  }, 180_000);
});
