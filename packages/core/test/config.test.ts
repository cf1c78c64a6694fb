import { describe, expect, it } from "vitest";
import { z } from "zod";
import { baseConfigSchema, ConfigError, DEFAULT_DATABASE_URL, ERROR_CATALOG, LoopSmithError, errorCodeOf, parseConfig } from "../src/index";

describe("parseConfig", () => {
  it("applies defaults, treats empty strings as unset, and freezes the result", () => {
    const cfg = parseConfig(baseConfigSchema, { DATABASE_URL: "", LOG_LEVEL: "debug" });
    expect(cfg.DATABASE_URL).toBe(DEFAULT_DATABASE_URL);
    expect(cfg.LOG_LEVEL).toBe("debug");
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it("names every invalid variable", () => {
    const schema = baseConfigSchema.extend({ PORT: z.coerce.number().int() });
    try {
      parseConfig(schema, { REDIS_URL: "http://x", PORT: "abc" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      expect(msg).toMatch(/REDIS_URL/);
      expect(msg).toMatch(/PORT/);
    }
  });
});

describe("error catalog", () => {
  it("every code is LS_ERR_ prefixed with a 4xx/5xx status", () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      expect(code).toMatch(/^LS_ERR_[A-Z_]+$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
    }
  });

  it("errors carry code, status and body shape, and are matched by code across boundaries", () => {
    const err = new LoopSmithError("LS_ERR_NOT_FOUND", "No goal x.");
    expect(err.toBody()).toEqual({ error: { code: "LS_ERR_NOT_FOUND", message: "No goal x.", details: null } });
    expect(err.status).toBe(404);
    // A plain object from another process (e.g. a job's failure) still matches by code.
    expect(errorCodeOf(JSON.parse(JSON.stringify({ code: err.code })))).toBe("LS_ERR_NOT_FOUND");
    expect(errorCodeOf(new Error("x"))).toBeUndefined();
  });
});
