// Bugs the honesty suite (bench/honesty.ts) found, each pinned here so that it stays fixed.
import { describe, expect, it } from "vitest";
import { runChecks } from "../src/index";
import { check, ctxWith, emptyCtx, file } from "./support";

const one = (id: string, params: Record<string, unknown>, ctx: ReturnType<typeof emptyCtx>) => runChecks([check(id, params)], ctx)[0]!;

describe("an integer beyond 2^53 against a float is compared exactly, never as doubles", () => {
  it("csv_matches: a float sum (1e+18) is not the exact total 1000000000000000003, at any tolerance", () => {
    const ctx = emptyCtx({ artifacts: [file("t.csv", "account,total\na,1e+18\n")], checkerFiles: [file("e.csv", "account,total\na,1000000000000000003\n")] });
    for (const row_order of ["strict", "any", "key"]) {
      const params = { artifact: "t.csv", expected_file: "e.csv", row_order, ...(row_order === "key" ? { key: ["account"] } : {}), atol: 1, rtol: 0.001 };
      expect(one("csv_matches", params, ctx).passed, row_order).toBe(false);
    }
    // The same integer written as a float is that integer.
    const same = emptyCtx({ artifacts: [file("t.csv", "account,total\na,1e+18\n")], checkerFiles: [file("e.csv", "account,total\na,1000000000000000000\n")] });
    expect(one("csv_matches", { artifact: "t.csv", expected_file: "e.csv", row_order: "any" }, same).passed).toBe(true);
  });

  it("text_matches floats: total 1e+18 is not total 1000000000000000003", () => {
    const ctx = emptyCtx({ stdout: "total 1e+18\n" });
    expect(one("text_matches", { expected: "total 1000000000000000003\n", mode: "floats", atol: 1 }, ctx).passed).toBe(false);
  });

  it("json_assert le/between: 100000000000000000001 is above 1e20", () => {
    const ctx = ctxWith('{"n": 100000000000000000001}');
    expect(one("json_assert", { pointer: "/n", op: "le", value: 1e20 }, ctx).passed).toBe(false);
    expect(one("json_assert", { pointer: "/n", op: "between", value: [0, 1e20] }, ctx).passed).toBe(false);
    expect(one("json_assert", { pointer: "/n", op: "gt", value: 1e20 }, ctx).passed).toBe(true);
    expect(one("json_assert", { pointer: "/n", op: "lt", value: 1.5e20 }, ctx).passed).toBe(true);
  });
});

describe("csv_matches in any order pairs rows within tolerance whatever the order of their float noise", () => {
  it("0.1+0.34 and 0.03+0.41 both match 0.44, with their customers", () => {
    const ctx = emptyCtx({
      artifacts: [file("f.csv", "total_fees,customer\n0.44000000000000006,ana\n0.43999999999999995,bo\n")],
      checkerFiles: [file("e.csv", "total_fees,customer\n0.44,ana\n0.44,bo\n")],
    });
    expect(one("csv_matches", { artifact: "f.csv", expected_file: "e.csv", row_order: "any", atol: 1e-9 }, ctx).passed).toBe(true);
    // And a real difference still fails.
    const wrong = emptyCtx({ artifacts: [file("f.csv", "total_fees,customer\n0.44,bo\n0.45,ana\n")], checkerFiles: [file("e.csv", "total_fees,customer\n0.44,ana\n0.44,bo\n")] });
    expect(one("csv_matches", { artifact: "f.csv", expected_file: "e.csv", row_order: "any", atol: 1e-9 }, wrong).passed).toBe(false);
  });
});
