import type { z } from "zod";

export interface NamedFile {
  name: string;
  content: Buffer;
}

/** What one sandbox run produced: the program's run, or one of a check's own runs (cases, a test suite). */
export interface RunEvidence {
  exitCode: number;
  timedOut: boolean;
  oomKilled: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** Regular files left in the output directory; names are relative to it, e.g. "result.json". */
  artifacts: NamedFile[];
  /** Files that were not returned and collection failures, usually "<name>: <why>". */
  artifactErrors: string[];
  /** issue 26: the judge's outcome, for runs that asked for one (CheckRunRequest.judge). */
  judge?: { exitCode: number; files: NamedFile[]; errors: string[] };
  /** issue 26: what the run wrote to its channel (CheckRunRequest.channel), as text. */
  channel?: { text: string; clipped: boolean };
  /** Files and directories the run was given read-only (CheckRunRequest.protect, isolate's placeholders) that it replaced. */
  protectedReplaced?: string[];
  /** Which repetition of a check's runs this run belongs to (a check with `repeat` above 1), from 0. */
  repetition?: number;
}

/**
 * What the verifier sees of one attempt. Structural on purpose: the sandbox's RunResult satisfies the run
 * part, and the verifier stays free of the sandbox package and its Docker dependencies.
 */
export interface VerifyContext extends RunEvidence {
  /** The goal's input files, as the program received them (row_count can compare against one). */
  inputs: NamedFile[];
  /** The client's checker files: hidden material, never shown to a model nor placed in the program's container. */
  checkerFiles: NamedFile[];
  /** The program that ran. */
  program: { filename: string; source: string } | null;
  /** What this check's own sandbox runs produced (checks with `sandbox`), in request order. */
  runs: RunEvidence[];
  /** issue 14: for workspace goals, which paths the attempt changed and which the client locked. */
  workspace?: WorkspaceEvidence;
  /** issue 27: the check's own visibility (set by runCheck): what a model will be shown of its result. */
  visibility?: { hidden: boolean; reveal: "full" | "input" | "verdict" };
}

export interface WorkspaceEvidence {
  /** Paths whose content the attempt changed or added, against the original workspace. */
  changed: string[];
  /** The goal's locked paths (a directory with or without a trailing "/" locks everything under it). */
  locked: string[];
  /** issue 26: the original workspace's paths (the client's files; a command check's test files are among them). */
  original?: string[];
}

/** The languages a goal's program can be written in (issue 14). */
export type Language = "python" | "javascript" | "typescript";

/**
 * One difference between what was expected and what came out. What may reach a model depends on the
 * check's visibility and `reveal` (see reveal.ts): `where` always, `input` and `actual` from "input" up,
 * `expected` and `note` only at "full". So `where`, `input` and `actual` must never quote expected values.
 */
export interface Finding {
  /** Material-free locator: "row 5, column \"total\"", "/by_region/North", "case \"c3\"". */
  where: string;
  /** What the program was given there (a case's arguments, a row's key). */
  input?: string;
  /** What the program produced there. */
  actual?: string;
  /** What was expected there: hidden material when the check is hidden. */
  expected?: string;
  /** The comparison's verdict in words ("differs by 0.02, more than atol 0.01"); may imply the expected value. */
  note?: string;
}

export interface CheckResult {
  passed: boolean;
  /** The full one-line verdict, for the client; may quote expected values. */
  message: string;
  /**
   * The verdict without hidden material (counts, names, locators), for models when the check is hidden:
   * "3 cells differ in 2 of 120 rows". Without it a hidden check tells a model only "passed" or "failed".
   */
  publicMessage?: string;
  /** The first differences (bounded by the caller), most useful first. */
  findings?: Finding[];
  /**
   * issue 26: set when the run shows that the attempt tampered with what judges it (a locked file, the
   * runner's configuration, the report, the run cut short): what was seen, for the client. The check fails;
   * a model is told only that tampering was detected.
   */
  tampered?: string;
}

/** A sandbox run a check asks for, as data: the runner executes it in a fresh container and hands back the evidence. */
export interface CheckRunRequest {
  /** Files placed under /work at these relative paths; the program itself is added at /work/<filename>. */
  files: { path: string; content: Buffer }[];
  /** argv, run with cwd /work. */
  command: string[];
  /** Variables beyond the sandbox's basics. */
  env?: Record<string, string>;
  timeoutMs: number;
  /** The image the run needs: python (default) or node (JavaScript and TypeScript tooling). */
  runtime?: "python" | "node";
  /** issue 26: paths among `files` the run's processes may read but never change (root's, read-only, for the whole run). */
  protect?: string[];
  /**
   * issue 26: a judge process beside the program, under its own uid, in /work/<dir> (the files under <dir>/ are its
   * alone); `command` then runs the program's side. What the judge writes to <dir>/out comes back as `judge.files`.
   */
  judge?: { dir: string; command: string[]; env?: Record<string, string> };
  /** issue 26: the command gets fd 3, a pipe to the sandbox's own process; what it writes comes back as `channel`. */
  channel?: boolean;
  /** issue 26: HOME, caches and node_modules where the run's processes cannot plant code (see the sandbox's RunRequest.isolate). */
  isolate?: boolean;
  /** Which repetition of the check's runs this is (a check with `repeat` above 1), from 0; its evidence carries it back. */
  repetition?: number;
}

/** Params are always an object; the schema supplies defaults and rejects unknown keys. */
export type ParamsSchema = z.ZodType<Record<string, unknown>, Record<string, unknown>>;

/** One entry of the check library, with its params type erased so that entries can share one map. */
export interface CheckDef {
  description: string;
  params: ParamsSchema;
  /** A valid params object, for the catalogue (GET /checks) and the planner's prompt. */
  example: Record<string, unknown>;
  /** Set on aliases: the check whose logic this entry runs with its own defaults. */
  aliasOf?: string;
  /**
   * Params a model may see when the check is hidden: what the check reads and how (artifact names,
   * columns, tolerances), never its material (expected values, cases, test files).
   */
  publicParams: readonly string[];
  /** Its messages quote only the program's output and public params, never material: a model may see them as they are. */
  publicMessages?: boolean;
  /** The checker files the (parsed) params name; each must be one of the goal's checker files. */
  checkerFiles?(params: Record<string, unknown>): string[];
  /** Checks that run code: the sandbox runs they need, as data. Never given expected values. */
  sandbox?(params: Record<string, unknown>, ctx: SandboxPlanContext): CheckRunRequest[];
  /** Only ever called with the output of `params`; may throw (the runner turns a throw into a failure). */
  run(params: Record<string, unknown>, ctx: VerifyContext): CheckResult;
}

/** What a check may use to describe its sandbox runs: the program and the checker files it named. */
export interface SandboxPlanContext {
  program: { filename: string; source: string };
  checkerFiles: NamedFile[];
  inputs: NamedFile[];
  /** The goal's language (default python). */
  language?: Language;
  /** issue 14: the goal's original workspace, the attempt's files (the program included) and the locked paths. */
  workspace?: { original: { path: string; content: Buffer }[]; attempt: { path: string; content: Buffer }[]; locked: string[] };
}
