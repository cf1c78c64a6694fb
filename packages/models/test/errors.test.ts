import { describe, expect, it } from "vitest";
import { ModelUnavailableError } from "../src/index";

describe("ModelUnavailableError.permanent", () => {
  const err = (statusCode?: number) =>
    new ModelUnavailableError("x", { statusCode, providerMessage: "x", usage: { inputTokens: 0, outputTokens: 0 }, latencyMs: 0 });

  it("is true for refusals that asking again cannot fix", () => {
    for (const s of [400, 401, 403, 404, 422]) expect(err(s).permanent).toBe(true);
  });

  it("is false for busy, down or unreachable providers", () => {
    for (const s of [408, 409, 429, 500, 502, 503, undefined]) expect(err(s).permanent).toBe(false);
  });
});
