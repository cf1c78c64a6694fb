// The command line, parsed into a command as data (pure: no files, no network). Usage errors are thrown
// as UsageError, which main() turns into exit code 2.
import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Optimal string alignment distance: edits, with a swap of two neighbours counted as one. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * " (did you mean X?)" for the closest candidate, as git and gh suggest: within two edits and less than
 * half the word; a prefix of a candidate counts too (`--wait-t` for `--wait-timeout`). "" when none is close.
 */
export function didYouMean(word: string, candidates: readonly string[]): string {
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = c.startsWith(word) && word.length >= 3 ? 1 : editDistance(word.toLowerCase(), c.toLowerCase());
    if (d <= 2 && d * 2 < Math.max(word.length, 2) && (best === undefined || d < best.d)) best = { c, d };
  }
  return best ? ` (did you mean ${best.c}?)` : "";
}

export const COMMAND_NAMES = ["goal", "goals", "artifacts", "checks", "help"] as const;
const GOALS_SUBCOMMANDS = ["list", "show", "tail", "cancel", "approve", "reject", "export"] as const;
const ARTIFACTS_SUBCOMMANDS = ["list", "get", "program"] as const;

export type OutputFormat = "text" | "json";

export interface Common {
  url: string;
  apiKey: string | undefined;
  output: OutputFormat;
}

export interface GoalOptions {
  objective: string;
  success?: string;
  checks: { id: string; params: Record<string, unknown> }[];
  inputs: { name: string; path: string }[];
  checkerFiles: { name: string; path: string }[];
  maxAttempts?: number;
  model?: { provider: string; model?: string };
  scriptPath?: string;
  bodyPath?: string;
  /** undefined: the server's default; null: the program itself is the deliverable. */
  deliverable?: string | null;
  idempotencyKey?: string;
  wait: boolean;
  waitTimeoutMs?: number;
  /** Ctrl-C while waiting cancels the goal (otherwise it keeps running). */
  cancelOnInterrupt?: boolean;
}

export type Command =
  | { kind: "help"; topic?: string }
  | { kind: "version" }
  | ({ kind: "goal" } & GoalOptions & Common)
  | ({ kind: "goals-list"; state?: string; limit?: number; cursor?: string } & Common)
  | ({ kind: "goals-show" | "goals-cancel" | "goals-reject"; id: string } & Common)
  | ({ kind: "goals-approve"; id: string; threshold?: number | null } & Common)
  | ({ kind: "goals-tail"; id: string; waitTimeoutMs?: number; cancelOnInterrupt?: boolean } & Common)
  | ({ kind: "goals-export"; id: string; out?: string } & Common)
  | ({ kind: "artifacts-list"; id: string; attempt?: number } & Common)
  | ({ kind: "artifacts-get"; id: string; name: string; attempt?: number; out?: string } & Common)
  | ({ kind: "artifacts-program"; id: string; attempt: number; out?: string } & Common)
  | ({ kind: "checks" } & Common);

/** What a script can tell apart by the exit code alone (docs/cli.md). */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4, refused: 5, retryable: 6, waiting: 7, interrupted: 130 } as const;
export const EXIT_CODES_TEXT = `exit codes: 0 verified (or the command succeeded); 1 the goal failed or was cancelled; 2 usage;
  3 authentication (401, 403); 4 not found (404); 5 the request was refused (another 4xx);
  6 worth retrying (server unreachable, 5xx, 429, --wait-timeout passed, the goal parked in errored);
  7 the goal waits for a decision (awaiting_approval); 130 interrupted (Ctrl-C).`;

const COMMANDS = {
  goal: `  goal --objective TEXT [--success TEXT] [--check ID[:PARAMS_JSON] ...] [--input [NAME=]FILE ...]
       [--checker-file [NAME=]FILE ...] [--max-iterations N] [--model PROVIDER[:NAME]] [--script FILE]
       [--deliverable NAME] [--body FILE] [--idempotency-key KEY] [--wait] [--wait-timeout SECONDS]
       [--cancel-on-interrupt]
                         submit a goal; with --wait, follow it live and exit by its outcome`,
  goals: `  goals list [--state STATE] [--limit N] [--cursor C]
  goals show GOAL        the goal as GET /goals/:id returns it
  goals tail GOAL [--wait-timeout SECONDS] [--cancel-on-interrupt]
                         follow a goal live until it ends (exit code as for goal --wait)
  goals cancel GOAL
  goals approve GOAL [--threshold USD|none]
  goals reject GOAL
  goals export GOAL [-o FILE]
                         the ended goal as a replayable script (GET /goals/:id/script); replay it with
                         jq .body FILE > body.json && loopsmith goal --body body.json --wait`,
  artifacts: `  artifacts list GOAL [--attempt N]
  artifacts get GOAL NAME [-o FILE] [--attempt N]
                         download an artifact (the newest attempt's unless --attempt; to stdout without -o)
  artifacts program GOAL ATTEMPT [-o FILE]
                         download the program an attempt ran`,
  checks: `  checks                 the check catalogue`,
};
const COMMON_OPTIONS = `options for every command:
  --url URL              the API (default $LOOPSMITH_URL, else http://127.0.0.1:3000)
  --api-key KEY          a tenant API key (default $LOOPSMITH_API_KEY)
  --output-format text|json
                         json: one JSON document on stdout (the final goal for goal --wait), nothing else
  -h, --help`;
const GOAL_OPTIONS = `goal options:
  --check ID:JSON        an acceptance check, e.g. --check 'row_count:{"artifact":"clean.csv","equals":3}'
  --input [NAME=]FILE    an input file (NAME defaults to the file's base name); repeatable
  --checker-file [NAME=]FILE
                         hidden material a check reads (never shown to the models or the program)
  --max-iterations N     attempts before the goal fails (the API's max_attempts)
  --model PROVIDER[:NAME]  e.g. openai-compatible:qwen2.5-coder, anthropic, scripted (with --script)
  --script FILE          a scripted model's script (JSON), see docs/api.md "The scripted model"
  --deliverable NAME     the file the goal delivers (default result.json); --deliverable= for the program
  --body FILE            a JSON body to start from (any POST /goals field); the flags above override it
  --cancel-on-interrupt  with --wait (and goals tail): Ctrl-C cancels the goal; without it, Ctrl-C leaves
                         the goal running and says how to follow or cancel it`;
const TAIL = `${EXIT_CODES_TEXT}
Progress (each state as it happens, attempt k of N, elapsed, spend) goes to stderr.`;

export const USAGE = `usage: loopsmith <command> [options]

commands:
${Object.values(COMMANDS).join("\n")}

${COMMON_OPTIONS}

${GOAL_OPTIONS}

${TAIL}`;

/** The help of one command (goal, goals, artifacts, checks), or the whole usage for anything else. */
export function helpFor(topic?: string): string {
  if (topic === undefined || !Object.hasOwn(COMMANDS, topic)) return USAGE;
  const name = topic as keyof typeof COMMANDS;
  return [`usage: loopsmith ${name} ...`, "", COMMANDS[name], "", COMMON_OPTIONS, ...(name === "goal" ? ["", GOAL_OPTIONS] : []), "", TAIL].join("\n");
}



const common = {
  url: { type: "string" },
  "api-key": { type: "string" },
  "output-format": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

function parse<O extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: O, positionals: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...common, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec((e as Error).message);
    if (unknown) {
      const flags = Object.entries({ ...common, ...options }).flatMap(([name, o]) => [`--${name}`, ...("short" in o && o.short ? [`-${o.short}`] : [])]);
      throw new UsageError(`unknown option ${unknown[1]}${didYouMean(unknown[1]!, flags)}`);
    }
    throw new UsageError((e as Error).message);
  }
  if (parsed.positionals.length !== positionals.length)
    throw new UsageError(
      parsed.positionals.length < positionals.length
        ? `missing ${positionals.slice(parsed.positionals.length).join(" ")}`
        : `unexpected argument ${JSON.stringify(parsed.positionals[positionals.length])}`,
    );
  return parsed;
}

function commonOf(values: Record<string, unknown>, env: Record<string, string | undefined>): Common {
  const output = (values["output-format"] as string | undefined) ?? "text";
  if (output !== "text" && output !== "json") throw new UsageError(`--output-format must be text or json, not ${JSON.stringify(output)}`);
  const url = (values.url as string | undefined) ?? env.LOOPSMITH_URL ?? "http://127.0.0.1:3000";
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new UsageError(`--url / LOOPSMITH_URL is not an http(s) URL: ${JSON.stringify(url)}`);
  }
  const apiKey = (values["api-key"] as string | undefined) ?? (env.LOOPSMITH_API_KEY || undefined);
  return { url, apiKey, output };
}

export function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,9}$/.test(v) || Number(v) < 1) throw new UsageError(`${flag} must be a positive integer, not ${JSON.stringify(v)}`);
  return Number(v);
}

/** --check row_count:{"artifact":"a.csv","equals":3}, or a bare id (no params). */
export function parseCheck(spec: string): { id: string; params: Record<string, unknown> } {
  const colon = spec.indexOf(":");
  const id = colon < 0 ? spec : spec.slice(0, colon);
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(id)) throw new UsageError(`--check ${JSON.stringify(spec)}: the check id must come first (ID or ID:PARAMS_JSON); loopsmith checks lists them`);
  if (colon < 0) return { id, params: {} };
  let params: unknown;
  try {
    params = JSON.parse(spec.slice(colon + 1));
  } catch (e) {
    throw new UsageError(`--check ${id}: its params are not JSON (${(e as Error).message})`);
  }
  if (!params || typeof params !== "object" || Array.isArray(params)) throw new UsageError(`--check ${id}: its params must be a JSON object`);
  return { id, params: params as Record<string, unknown> };
}

/** --input data.csv, or --input name.csv=path/to/file. */
export function parseFileArg(flag: string, v: string): { name: string; path: string } {
  const eq = v.indexOf("=");
  const path = eq < 0 ? v : v.slice(eq + 1);
  const name = eq < 0 ? (v.split(/[\\/]/).pop() ?? v) : v.slice(0, eq);
  if (!name || !path) throw new UsageError(`${flag} ${JSON.stringify(v)}: give FILE or NAME=FILE`);
  return { name, path };
}

function parseModel(v: string | undefined): GoalOptions["model"] {
  if (v === undefined) return undefined;
  const colon = v.indexOf(":");
  const provider = colon < 0 ? v : v.slice(0, colon);
  const model = colon < 0 ? undefined : v.slice(colon + 1);
  if (!provider || model === "") throw new UsageError(`--model ${JSON.stringify(v)}: give PROVIDER or PROVIDER:NAME`);
  return { provider, ...(model ? { model } : {}) };
}

function seconds(flag: string, v: string | undefined): number | undefined {
  const n = positiveInt(flag, v);
  return n === undefined ? undefined : n * 1000;
}

export function parseCommand(argv: string[], env: Record<string, string | undefined>): Command {
  const [first, ...rest] = argv;
  if (first === undefined || first === "help" || first === "--help" || first === "-h") return { kind: "help" };
  if (first === "--version") return { kind: "version" };
  if (rest.includes("--help") || rest.includes("-h")) return { kind: "help", topic: first };

  if (first === "goal") {
    const { values } = parse(
      rest,
      {
        objective: { type: "string" },
        success: { type: "string" },
        check: { type: "string", multiple: true },
        input: { type: "string", multiple: true },
        "checker-file": { type: "string", multiple: true },
        "max-iterations": { type: "string" },
        model: { type: "string" },
        script: { type: "string" },
        deliverable: { type: "string" },
        body: { type: "string" },
        "idempotency-key": { type: "string" },
        wait: { type: "boolean" },
        "wait-timeout": { type: "string" },
        "cancel-on-interrupt": { type: "boolean" },
      },
      [],
    );
    if (values.objective === undefined && values.body === undefined) throw new UsageError("goal needs --objective TEXT (or a --body FILE that has one)");
    if (values.script !== undefined && values.model !== undefined && values.model !== "scripted") throw new UsageError("--script goes with the scripted model: drop --model or use --model scripted");
    return {
      kind: "goal",
      ...commonOf(values, env),
      objective: values.objective ?? "",
      success: values.success,
      checks: (values.check ?? []).map(parseCheck),
      inputs: (values.input ?? []).map((v) => parseFileArg("--input", v)),
      checkerFiles: (values["checker-file"] ?? []).map((v) => parseFileArg("--checker-file", v)),
      maxAttempts: positiveInt("--max-iterations", values["max-iterations"]),
      model: parseModel(values.model),
      scriptPath: values.script,
      bodyPath: values.body,
      deliverable: values.deliverable === undefined ? undefined : values.deliverable === "" ? null : values.deliverable,
      idempotencyKey: values["idempotency-key"],
      wait: values.wait ?? false,
      waitTimeoutMs: seconds("--wait-timeout", values["wait-timeout"]),
      cancelOnInterrupt: values["cancel-on-interrupt"] === true,
    };
  }

  if (first === "goals") {
    const [sub, ...args] = rest;
    if (sub === "list") {
      const { values } = parse(args, { state: { type: "string" }, limit: { type: "string" }, cursor: { type: "string" } }, []);
      return { kind: "goals-list", ...commonOf(values, env), state: values.state, limit: positiveInt("--limit", values.limit), cursor: values.cursor };
    }
    if (sub === "show" || sub === "cancel" || sub === "reject") {
      const { values, positionals } = parse(args, {}, ["GOAL"]);
      return { kind: `goals-${sub}`, ...commonOf(values, env), id: positionals[0]! };
    }
    if (sub === "tail") {
      const { values, positionals } = parse(args, { "wait-timeout": { type: "string" }, "cancel-on-interrupt": { type: "boolean" } }, ["GOAL"]);
      return { kind: "goals-tail", ...commonOf(values, env), id: positionals[0]!, waitTimeoutMs: seconds("--wait-timeout", values["wait-timeout"]), cancelOnInterrupt: values["cancel-on-interrupt"] === true };
    }
    if (sub === "export") {
      const { values, positionals } = parse(args, { output: { type: "string", short: "o" } }, ["GOAL"]);
      return { kind: "goals-export", ...commonOf(values, env), id: positionals[0]!, out: values.output };
    }
    if (sub === "approve") {
      const { values, positionals } = parse(args, { threshold: { type: "string" } }, ["GOAL"]);
      const t = values.threshold;
      let threshold: number | null | undefined;
      if (t === "none") threshold = null;
      else if (t !== undefined) {
        threshold = Number(t);
        if (!/^\d+(\.\d+)?$/.test(t)) throw new UsageError(`--threshold must be a USD amount or none, not ${JSON.stringify(t)}`);
      }
      return { kind: "goals-approve", ...commonOf(values, env), id: positionals[0]!, threshold };
    }
    throw new UsageError(sub === undefined ? "goals needs a subcommand: list, show, tail, cancel, approve, reject, export" : `unknown goals subcommand ${JSON.stringify(sub)}${didYouMean(sub, GOALS_SUBCOMMANDS)}`);
  }

  if (first === "artifacts") {
    const [sub, ...args] = rest;
    if (sub === "list") {
      const { values, positionals } = parse(args, { attempt: { type: "string" } }, ["GOAL"]);
      return { kind: "artifacts-list", ...commonOf(values, env), id: positionals[0]!, attempt: positiveInt("--attempt", values.attempt) };
    }
    if (sub === "get") {
      const { values, positionals } = parse(args, { attempt: { type: "string" }, output: { type: "string", short: "o" } }, ["GOAL", "NAME"]);
      return { kind: "artifacts-get", ...commonOf(values, env), id: positionals[0]!, name: positionals[1]!, attempt: positiveInt("--attempt", values.attempt), out: values.output };
    }
    if (sub === "program") {
      const { values, positionals } = parse(args, { output: { type: "string", short: "o" } }, ["GOAL", "ATTEMPT"]);
      return { kind: "artifacts-program", ...commonOf(values, env), id: positionals[0]!, attempt: positiveInt("ATTEMPT", positionals[1])!, out: values.output };
    }
    throw new UsageError(sub === undefined ? "artifacts needs a subcommand: list, get, program" : `unknown artifacts subcommand ${JSON.stringify(sub)}${didYouMean(sub, ARTIFACTS_SUBCOMMANDS)}`);
  }

  if (first === "checks") {
    const { values } = parse(rest, {}, []);
    return { kind: "checks", ...commonOf(values, env) };
  }
  throw new UsageError(`unknown command ${JSON.stringify(first)}${didYouMean(first, COMMAND_NAMES)}`);
}
