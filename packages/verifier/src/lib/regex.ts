import { RE2JS } from "re2js";

// Every pattern a client or a planner writes runs through RE2 (re2js, a pure-JS port): matching is linear
// in the input, so no pattern can stall a check with catastrophic backtracking (^(a|a)*$ included).
// RE2 has no backreferences or lookaround; such patterns are refused when the check's params are read.

export interface Pattern {
  source: string;
  /** True when the pattern matches somewhere in `text` (use ^...$ to anchor). */
  test(text: string): boolean;
}

export const MAX_PATTERN_LENGTH = 1000;

// Stryker disable next-line StringLiteral: equivalent, any default without an "i" compiles case-sensitively
export function compilePattern(source: string, flags = ""): { ok: true; pattern: Pattern } | { ok: false; message: string } {
  if (source.length > MAX_PATTERN_LENGTH) return { ok: false, message: `pattern is ${source.length} characters, more than ${MAX_PATTERN_LENGTH}` };
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    return { ok: false, message: `pattern ${JSON.stringify(source)} is not a valid RE2 regular expression (${(e as Error).message}); RE2 has no backreferences or lookaround` };
  }
  return { ok: true, pattern: { source, test: (text) => re.matcher(text).find() } };
}
