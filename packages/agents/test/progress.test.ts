// The progress guard's pieces, without services: what counts as the same program, how a run failed, the
// outcome hash, and the window a repeat is counted in.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { errorClass, normaliseScript, outcomeHash, stuckHashes } from "../src/progress";

describe("normaliseScript", () => {
  it("drops comments and every kind of whitespace, so reformatting is the same script", () => {
    expect(normaliseScript("x = 1  # set x\n\ty =\t2\r\n# only a comment\nprint( x+y )")).toBe("x=1y=2print(x+y)");
    expect(normaliseScript("a = 1\n\n\nb = 2")).toBe(normaliseScript("a=1\nb=2"));
  });

  it("keeps a # inside a string literal, either quote, and after an escaped quote", () => {
    expect(normaliseScript('s = "#not a comment" # but this is')).toBe('s="#notacomment"');
    expect(normaliseScript("s = '#x' # c")).toBe("s='#x'");
    expect(normaliseScript('s = "a\\"#b" # c')).toBe('s="a\\"#b"');
    expect(normaliseScript("s = \"it's #1\" # c")).toBe("s=\"it's#1\"");
    // A quote of the other kind does not close the string.
    expect(normaliseScript("s = '\"' # c")).toBe("s='\"'");
  });

  it("a different program is a different script", () => {
    expect(normaliseScript("x = 1")).not.toBe(normaliseScript("x = 2"));
    expect(normaliseScript("s = '#a'")).not.toBe(normaliseScript("s = '#b'"));
  });
});

describe("errorClass", () => {
  const run = (o: Partial<{ exitCode: number; timedOut: boolean; oomKilled: boolean; stderr: string }>) => ({
    exitCode: 1,
    timedOut: false,
    oomKilled: false,
    stderr: "",
    ...o,
  });

  it("timeout first, then OOM, then a clean exit", () => {
    expect(errorClass(run({ timedOut: true, oomKilled: true, exitCode: 0 }))).toBe("timeout");
    expect(errorClass(run({ oomKilled: true, exitCode: 0 }))).toBe("oom");
    expect(errorClass(run({ exitCode: 0, stderr: "ValueError: printed but exited 0" }))).toBe("ok");
  });

  it("the last exception class in the traceback names the failure", () => {
    const tb = "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'\n\nDuring handling...\n  File \"x.py\"\nValueError: bad\n\n";
    expect(errorClass(run({ stderr: tb }))).toBe("ValueError");
    expect(errorClass(run({ stderr: "json.decoder.JSONDecodeError: Expecting value" }))).toBe("json.decoder.JSONDecodeError");
    expect(errorClass(run({ stderr: "   SystemExit: 3" }))).toBe("SystemExit");
    expect(errorClass(run({ stderr: "KeyboardInterrupt" }))).toBe("KeyboardInterrupt");
    expect(errorClass(run({ stderr: "pandas.errors.ParserException: x" }))).toBe("pandas.errors.ParserException");
  });

  it("without an exception line, the exit code", () => {
    expect(errorClass(run({ exitCode: 3, stderr: "something went wrong" }))).toBe("exit_3");
    expect(errorClass(run({ exitCode: 137 }))).toBe("exit_137");
    // Not an exception class: a word ending in Error that is not at the start, or a prefix only.
    expect(errorClass(run({ exitCode: 2, stderr: "got an Error here" }))).toBe("exit_2");
    expect(errorClass(run({ exitCode: 2, stderr: "ErrorCount: 3" }))).toBe("exit_2");
    expect(errorClass(run({ exitCode: 2, stderr: "9Error: x" }))).toBe("exit_2");
    // A source line that raises is not the exception line: the class must start the line.
    expect(errorClass(run({ exitCode: 1, stderr: '  File "x.py", line 3, in <module>\n    raise ValueError("bad")\n' }))).toBe("exit_1");
  });
});

describe("outcomeHash", () => {
  const base = { script: "x = 1", failingChecks: ["b", "a"], errorClass: "ok" };
  it("is the first 16 hex of sha256 over the normalised script, the sorted distinct failing checks and the error class", () => {
    const want = createHash("sha256").update(JSON.stringify(["x=1", ["a", "b"], "ok"])).digest("hex").slice(0, 16);
    expect(outcomeHash(base)).toBe(want);
    expect(outcomeHash(base)).toMatch(/^[0-9a-f]{16}$/);
  });
  it("ignores order and repeats of failing checks and reformatting; sees any real change", () => {
    expect(outcomeHash({ ...base, failingChecks: ["a", "b", "a"] })).toBe(outcomeHash(base));
    expect(outcomeHash({ ...base, script: "x=1 # same" })).toBe(outcomeHash(base));
    expect(outcomeHash({ ...base, failingChecks: ["a"] })).not.toBe(outcomeHash(base));
    expect(outcomeHash({ ...base, errorClass: "ValueError" })).not.toBe(outcomeHash(base));
    expect(outcomeHash({ ...base, script: "x = 2" })).not.toBe(outcomeHash(base));
  });
});

describe("stuckHashes", () => {
  it("stuck at exactly `repeats` occurrences within the window, this one included", () => {
    expect(stuckHashes(["a", "a"], "a", 3, 6)).toEqual(["a", "a", "a"]);
    expect(stuckHashes(["a"], "a", 3, 6)).toBeNull();
    expect(stuckHashes(["a", "b", "a"], "a", 3, 6)).toEqual(["a", "a", "a"]);
    expect(stuckHashes(["b", "b", "b"], "a", 3, 6)).toBeNull();
  });

  it("counts only the last window outcomes: window-1 previous ones plus this one", () => {
    // Window 4: the previous three and this one. The oldest "a" falls out.
    expect(stuckHashes(["a", "b", "a", "c"], "a", 3, 4)).toBeNull();
    expect(stuckHashes(["b", "a", "c", "a"], "a", 3, 4)).toEqual(["a", "a", "a"]);
    // A window of 1 is this outcome alone.
    expect(stuckHashes(["a", "a", "a"], "a", 2, 1)).toBeNull();
    expect(stuckHashes(["a", "a", "a"], "a", 1, 1)).toEqual(["a"]);
  });
});
