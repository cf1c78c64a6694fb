// Issue 13.1: the CLI's pure parts: the command line, the goal body it builds, the SSE reader and the
// progress line. No services (tests/e2e/cli.test.ts runs the binary against a real stack).
import { describe, expect, it } from "vitest";
import { parseCheck, parseCommand, parseFileArg, UsageError } from "../src/args";
import { fileEntry, goalBody } from "../src/main";
import { exitCodeFor, progressLine } from "../src/progress";
import { readEvents } from "../src/sse";

const env = { LOOPSMITH_URL: "http://api.test:3000", LOOPSMITH_API_KEY: "lsk_env" };

describe("parseCommand", () => {
  it("reads goal flags, with config from the environment unless flags override it", () => {
    const cmd = parseCommand(
      ["goal", "--objective", "clean it", "--check", 'row_count:{"artifact":"a.csv","equals":3}', "--check", "exits_clean", "--input", "dir/people.csv", "--input", "x.csv=other.csv", "--max-iterations", "3", "--model", "openai-compatible:qwen", "--wait", "--output-format", "json", "--api-key", "lsk_flag"],
      env,
    );
    expect(cmd).toMatchObject({
      kind: "goal",
      url: "http://api.test:3000",
      apiKey: "lsk_flag",
      output: "json",
      objective: "clean it",
      checks: [{ id: "row_count", params: { artifact: "a.csv", equals: 3 } }, { id: "exits_clean", params: {} }],
      inputs: [{ name: "people.csv", path: "dir/people.csv" }, { name: "x.csv", path: "other.csv" }],
      maxAttempts: 3,
      model: { provider: "openai-compatible", model: "qwen" },
      wait: true,
    });
    expect(parseCommand(["checks"], {})).toMatchObject({ url: "http://127.0.0.1:3000", apiKey: undefined, output: "text" });
    expect(parseCommand(["goal", "--objective", "x", "--deliverable="], env)).toMatchObject({ deliverable: null });
    expect(parseCommand(["artifacts", "get", "G", "reports/a.csv", "-o", "a.csv", "--attempt", "2"], env)).toMatchObject({ kind: "artifacts-get", id: "G", name: "reports/a.csv", out: "a.csv", attempt: 2 });
    expect(parseCommand(["goals", "approve", "G", "--threshold", "none"], env)).toMatchObject({ kind: "goals-approve", threshold: null });
    expect(parseCommand(["goals", "tail", "G", "--help"], env)).toEqual({ kind: "help", topic: "goals" });
  });

  it("suggests the closest command, subcommand or option for a typo, and nothing for a word far from all (issue 28)", () => {
    const typos: [string[], string][] = [
      [["gaols", "list"], 'unknown command "gaols" (did you mean goals?)'],
      [["chekcs"], 'unknown command "chekcs" (did you mean checks?)'],
      [["artifact", "list", "G"], 'unknown command "artifact" (did you mean artifacts?)'],
      [["goals", "lst"], 'unknown goals subcommand "lst" (did you mean list?)'],
      [["goals", "cancle", "G"], 'unknown goals subcommand "cancle" (did you mean cancel?)'],
      [["artifacts", "gte", "G", "n"], 'unknown artifacts subcommand "gte" (did you mean get?)'],
      [["goal", "--objective", "x", "--wiat"], "unknown option --wiat (did you mean --wait?)"],
      [["goal", "--objective", "x", "--chek", "a:{}"], "unknown option --chek (did you mean --check?)"],
      [["goals", "list", "--limt", "2"], "unknown option --limt (did you mean --limit?)"],
      [["goals", "tail", "G", "--wait-time", "5"], "unknown option --wait-time (did you mean --wait-timeout?)"],
      // Far from every name: no guess.
      [["deploy"], 'unknown command "deploy"'],
      [["goals", "x"], 'unknown goals subcommand "x"'],
      [["goal", "--objective", "x", "--zzzzzz"], "unknown option --zzzzzz"],
      // An option another command has is not offered where it does not apply.
      [["checks", "--wait"], "unknown option --wait"],
    ];
    for (const [argv, message] of typos) expect(() => parseCommand(argv, env), argv.join(" ")).toThrow(new UsageError(message));
  });

  it("refuses bad usage with a UsageError that says what is wrong", () => {
    const bad: [string[], RegExp][] = [
      [["goal"], /--objective/],
      [["goal", "--objective", "x", "--max-iterations", "0"], /positive integer/],
      [["goal", "--objective", "x", "--bogus"], /^unknown option --bogus$/],
      [["goal", "--objective", "x", "--output-format", "yaml"], /text or json/],
      [["goal", "--objective", "x", "--url", "ftp://x"], /http\(s\) URL/],
      [["goal", "--objective", "x", "--script", "s.json", "--model", "anthropic"], /scripted/],
      [["goals", "show"], /missing GOAL/],
      [["goals", "show", "a", "b"], /unexpected argument "b"/],
      [["goals", "frob"], /^unknown goals subcommand "frob"$/],
      [["artifacts", "program", "G", "x"], /ATTEMPT must be a positive integer/],
      [["nope"], /^unknown command "nope"$/],
    ];
    for (const [argv, message] of bad) expect(() => parseCommand(argv, env), argv.join(" ")).toThrow(message);
    expect(() => parseCommand(["goal"], env)).toThrow(UsageError);
  });

  it("parses --check and --input forms", () => {
    expect(parseCheck("row_count")).toEqual({ id: "row_count", params: {} });
    expect(() => parseCheck("row_count:[1]")).toThrow(/JSON object/);
    expect(() => parseCheck(':{"a":1}')).toThrow(/check id must come first/);
    expect(parseFileArg("--input", "a=b=c")).toEqual({ name: "a", path: "b=c" });
    expect(() => parseFileArg("--input", "name=")).toThrow(/NAME=FILE/);
  });
});

describe("goalBody", () => {
  const files: Record<string, Buffer> = {
    "body.json": Buffer.from(JSON.stringify({ objective: "from body", checks: [{ id: "exits_clean" }], execution_timeout_seconds: 9 })),
    "script.json": Buffer.from('{"plan": {}}'),
    "people.csv": Buffer.from("id\n1\n"),
    "blob.bin": Buffer.from([0, 255, 1]),
  };
  const io = { readFile: async (p: string) => files[p] ?? Promise.reject(Object.assign(new Error("no"), { code: "ENOENT" })) };
  const base = { objective: "", checks: [], inputs: [], checkerFiles: [], wait: false };

  it("merges --body with the flags, reads the files as text or base64 and the script as the scripted model", async () => {
    const body = await goalBody(
      { ...base, bodyPath: "body.json", checks: [{ id: "row_count", params: { equals: 1 } }], inputs: [{ name: "people.csv", path: "people.csv" }], checkerFiles: [{ name: "b.bin", path: "blob.bin" }], scriptPath: "script.json", maxAttempts: 2 },
      io,
    );
    expect(body).toEqual({
      objective: "from body",
      execution_timeout_seconds: 9,
      checks: [{ id: "exits_clean" }, { id: "row_count", params: { equals: 1 } }],
      inputs: [{ name: "people.csv", text: "id\n1\n" }],
      checker_files: [{ name: "b.bin", content_base64: "AP8B" }],
      max_attempts: 2,
      model: { provider: "scripted", script: { plan: {} } },
    });
  });

  it("says which file it could not read or parse", async () => {
    await expect(goalBody({ ...base, objective: "x", inputs: [{ name: "a", path: "missing.csv" }] }, io)).rejects.toThrow(/--input missing.csv: cannot read \(ENOENT\)/);
    await expect(goalBody({ ...base, objective: "x", scriptPath: "people.csv" }, io)).rejects.toThrow(/--script people.csv: not JSON/);
  });

  it("sends text only when the bytes round-trip as UTF-8", () => {
    expect(fileEntry("a", Buffer.from("héllo"))).toEqual({ name: "a", text: "héllo" });
    expect(fileEntry("a", Buffer.from([0xc3]))).toEqual({ name: "a", content_base64: "ww==" });
  });
});

describe("readEvents", () => {
  async function* chunks(...parts: string[]) {
    for (const p of parts) yield new TextEncoder().encode(p);
  }
  const all = async (parts: string[], maxBuffer?: number) => {
    const got = [];
    for await (const e of readEvents(chunks(...parts), maxBuffer)) got.push(e);
    return got;
  };
  it("splits events across chunk boundaries, skips comments, and joins multi-line data", async () => {
    expect(await all(["retry: 1000\n\n: ping\n\nid: 0\nevent: tran", "sition\ndata: {\"seq\":0}\n\r\n", "event: end\ndata: a\ndata: b\n\n"])).toEqual([
      { id: "0", event: "transition", data: '{"seq":0}' },
      { event: "end", data: "a\nb" },
    ]);
    // CR alone ends a line too, an unnamed event is a message, and a multi-byte character may be split.
    const snow = new TextEncoder().encode("data: \u2603\r\rdata: b\n\n");
    const split = async function* () {
      yield snow.subarray(0, 7);
      yield snow.subarray(7);
    };
    const got = [];
    for await (const e of readEvents(split())) got.push(e);
    expect(got).toEqual([
      { event: "message", data: "\u2603" },
      { event: "message", data: "b" },
    ]);
  });

  it("drops an event the stream ends before its blank line, so a cut-off end is no end (issue 28)", async () => {
    // The reader it replaced took what was left at the end of the stream for an event.
    expect(await all(["id: 3\nevent: transition\ndata: {\"seq\":3}\n\n", "event: end\ndata: {\"state\":"])).toEqual([{ id: "3", event: "transition", data: '{"seq":3}' }]);
    expect(await all(["event: end\ndata: {}\n"])).toEqual([]);
  });

  it("fails a stream that holds more than its buffer without ending an event, after the events before it (issue 28)", async () => {
    const stream = readEvents(chunks("data: ok\n\n", "data: ", "x".repeat(40)), 32);
    expect(await stream.next()).toEqual({ done: false, value: { event: "message", data: "ok" } });
    await expect(stream.next()).rejects.toThrow("the event stream held more than 32 characters without ending a line or an event");
  });
});

describe("progressLine", () => {
  it("shows the move, the attempt of N from entering execute on, the elapsed time and the spend", () => {
    const state = { attempt: 0 };
    const o = { state, maxAttempts: 3, createdAt: "2026-01-01T00:00:00.000Z", costUsd: 0.0123 };
    expect(progressLine({ seq: 0, from: null, to: "plan", at: "2026-01-01T00:00:00.500Z" }, o)).toBe("[   0.5s]  plan                    spend $0.0123");
    expect(progressLine({ seq: 2, from: "generate", to: "execute", at: "2026-01-01T00:00:02.000Z" }, o)).toMatch(/generate → execute\s+attempt 1\/3/);
    expect(progressLine({ seq: 3, from: "execute", to: "inspect", at: "2026-01-01T00:00:03.000Z", detail: { exit_code: 1, timed_out: true } }, o)).toMatch(/attempt 1\/3  spend \$0\.0123  · exit 1 \(timed out\)$/);
    expect(progressLine({ seq: 5, from: "refine", to: "execute", at: "2026-01-01T00:01:05.000Z" }, { ...o, costUsd: null })).toBe("[  65.0s]  refine → execute        attempt 2/3");
  });

  it("maps final states to exit codes", () => {
    expect([exitCodeFor("verified"), exitCodeFor("failed"), exitCodeFor("cancelled"), exitCodeFor("errored"), exitCodeFor("awaiting_approval")]).toEqual([0, 1, 1, 6, 7]);
  });
});
