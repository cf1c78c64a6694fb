import { describe, expect, it } from "vitest";
import { z } from "zod";
import { generatedCode } from "@loopsmith/schemas";
import { createScriptedModel, estimateTokens, ModelOutputError } from "../src/index";
import { code, inspectRequest, plan, planRequest, refineRequest, script, verdict } from "./fixtures";

describe("scripted model", () => {
  it("answers plan and generate from the script", async () => {
    const model = createScriptedModel(script());
    expect(model.provider).toBe("scripted");
    expect(model.modelName).toBe("scripted");
    const res = await model.complete(planRequest);
    expect(res.output).toEqual(plan);
    expect(res.tries).toBe(1);
    expect(res.rejected).toEqual([]);
    const gen = await model.complete({ ...refineRequest(0), turn: "generate" });
    expect(gen.output.source).toBe("print(1)");
  });

  it("answers the i-th inspect and refine, repeating the last entry when a list runs out", async () => {
    const model = createScriptedModel(
      script({ inspect: [verdict(false), verdict(true)], refine: [code("print(2)"), code("print(3)")] }),
    );
    const verified = await Promise.all([0, 1, 2, 5].map(async (i) => (await model.complete(inspectRequest(i))).output.verified));
    expect(verified).toEqual([false, true, true, true]);
    const sources = await Promise.all([0, 1, 2].map(async (i) => (await model.complete(refineRequest(i))).output.source));
    expect(sources).toEqual(["print(2)", "print(3)", "print(3)"]);
  });

  it("estimates usage deterministically from the text sizes", async () => {
    const res = await createScriptedModel(script()).complete(planRequest);
    expect(res.usage).toEqual({
      inputTokens: Math.ceil((planRequest.system + planRequest.prompt).length / 4),
      outputTokens: Math.ceil(JSON.stringify(plan).length / 4),
    });
    expect(estimateTokens("abcde")).toBe(2);
    expect(res.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("an empty refine list is a ModelOutputError naming the missing entry", async () => {
    const err = await createScriptedModel(script()).complete(refineRequest(0)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelOutputError);
    expect((err as ModelOutputError).code).toBe("LS_ERR_MODEL_OUTPUT");
    expect((err as ModelOutputError).message).toMatch(/no refine entry/);
    expect((err as ModelOutputError).tries).toBe(1);
  });

  it("an entry that fails the request's schema is a ModelOutputError after one try", async () => {
    // The agent asks for a stricter shape than the script supplies: retrying cannot change a script.
    const stricter = generatedCode.extend({ notes: z.string().min(5) });
    const err = await createScriptedModel(script())
      .complete({ ...refineRequest(0), turn: "generate", schema: stricter })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelOutputError);
    const e = err as ModelOutputError;
    expect(e.tries).toBe(1);
    expect(e.rejected).toHaveLength(1);
    expect(e.rejected[0]?.error).toMatch(/^notes: /);
    expect(e.rejected[0]?.text).toContain("print(1)");
    expect(e.usage.outputTokens).toBeGreaterThan(0);
  });
});
