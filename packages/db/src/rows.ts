// The rows a move writes beside its tape row (the plan, an execution and its artifacts and check runs,
// check results), as data: advanceGoal inserts them in the move's own SQL statement, so that a step's
// commit is one round trip instead of an interactive transaction of one round trip per row (issue 29).
// Table and column names come from the builders here only; values always travel as parameters.
import { randomUUID } from "node:crypto";

/** A parameter and the SQL type it is cast to. */
export interface SqlValue {
  value: unknown;
  cast: "uuid" | "text" | "int" | "bigint" | "boolean" | "jsonb" | "bytea" | "timestamptz";
}

export interface RowInsert {
  table: "plans" | "executions" | "check_runs" | "artifacts" | "check_results";
  /** Column name to value; every row of a table carries the same columns. */
  values: Record<string, SqlValue>;
}

const uuid = (value: string): SqlValue => ({ value, cast: "uuid" });
const text = (value: string | null): SqlValue => ({ value, cast: "text" });
const int = (value: number): SqlValue => ({ value, cast: "int" });
const bool = (value: boolean): SqlValue => ({ value, cast: "boolean" });
/** JSON text (Postgres parses it); null or undefined is SQL NULL. */
const json = (value: unknown): SqlValue => ({ value: value === null || value === undefined ? null : JSON.stringify(value), cast: "jsonb" });
const bytes = (value: Uint8Array): SqlValue => ({ value: new Uint8Array(value), cast: "bytea" });

export function planRow(p: { goalId: string; objective: string; approach: unknown; outputContract: string; checks: unknown }): RowInsert {
  return {
    table: "plans",
    values: { id: uuid(randomUUID()), goal_id: uuid(p.goalId), objective: text(p.objective), approach: json(p.approach), output_contract: text(p.outputContract), checks: json(p.checks) },
  };
}

export interface ExecutionData {
  goalId: string;
  attempt: number;
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutTruncated: number;
  stderrTruncated: number;
  durationMs: number;
  timedOut: boolean;
  oomKilled: boolean;
  artifacts: { name: string; size: number; sha256: string }[];
  imageId: string;
  imageDigest: string | null;
  sandboxRuntime: string | null;
  scriptSha256: string | null;
  limits: unknown;
  script: string;
}

/** An execution row and its id (its artifacts and check runs point at it). */
export function executionRow(e: ExecutionData): { id: string; row: RowInsert } {
  const id = randomUUID();
  return {
    id,
    row: {
      table: "executions",
      values: {
        id: uuid(id),
        goal_id: uuid(e.goalId),
        attempt: int(e.attempt),
        exit_code: int(e.exitCode),
        stdout: text(e.stdout),
        stderr: text(e.stderr),
        stdout_truncated: { value: String(e.stdoutTruncated), cast: "bigint" },
        stderr_truncated: { value: String(e.stderrTruncated), cast: "bigint" },
        duration_ms: int(e.durationMs),
        timed_out: bool(e.timedOut),
        oom_killed: bool(e.oomKilled),
        artifacts: json(e.artifacts),
        image_id: text(e.imageId),
        image_digest: text(e.imageDigest),
        sandbox_runtime: text(e.sandboxRuntime),
        script_sha256: text(e.scriptSha256),
        limits: json(e.limits),
        script: text(e.script),
      },
    },
  };
}

export function artifactRow(a: { goalId: string; executionId: string; name: string; sha256: string; size: number; content: Uint8Array }): RowInsert {
  return {
    table: "artifacts",
    values: { id: uuid(randomUUID()), goal_id: uuid(a.goalId), execution_id: uuid(a.executionId), name: text(a.name), sha256: text(a.sha256), size: int(a.size), content: bytes(a.content) },
  };
}

export function checkRunRow(r: { goalId: string; executionId: string; attempt: number; checkIndex: number; checkId: string; evidence: Uint8Array }): RowInsert {
  return {
    table: "check_runs",
    values: {
      id: uuid(randomUUID()),
      goal_id: uuid(r.goalId),
      execution_id: uuid(r.executionId),
      attempt: int(r.attempt),
      check_index: int(r.checkIndex),
      check_id: text(r.checkId),
      evidence: bytes(r.evidence),
    },
  };
}

export function checkResultRow(r: {
  goalId: string;
  executionId: string;
  attempt: number;
  checkId: string;
  params: unknown;
  passed: boolean;
  message: string;
  feedback: string;
  hidden: boolean;
  findings: unknown;
  flaky?: unknown;
}): RowInsert {
  return {
    table: "check_results",
    values: {
      id: uuid(randomUUID()),
      goal_id: uuid(r.goalId),
      execution_id: uuid(r.executionId),
      attempt: int(r.attempt),
      check_id: text(r.checkId),
      params: json(r.params),
      passed: bool(r.passed),
      message: text(r.message),
      feedback: text(r.feedback),
      hidden: bool(r.hidden),
      findings: json(r.findings ?? []),
      flaky: json(r.flaky ?? null),
    },
  };
}

/**
 * One statement's parameters: `p(value, cast)` adds one and returns its placeholder (`$n::cast`); `json`
 * passes JSON text cast to jsonb (null or undefined: SQL NULL).
 */
export function sqlParams() {
  const params: unknown[] = [];
  const p = (value: unknown, cast?: string) => {
    params.push(value);
    return `$${params.length}${cast ? `::${cast}` : ""}`;
  };
  const json = (value: unknown) => p(value === undefined || value === null ? null : JSON.stringify(value), "jsonb");
  return { params, p, json };
}

/**
 * The statement's parts that insert `rows`, each only when `guard` (a CTE of the same statement) returned
 * a row: `, name AS (INSERT ... SELECT ... FROM guard)` per table, one VALUES list per table.
 */
export function insertRowsSql(rows: RowInsert[], guard: string, p: (value: unknown, cast: string) => string): string {
  const byTable = new Map<string, RowInsert[]>();
  for (const r of rows) {
    const list = byTable.get(r.table) ?? [];
    list.push(r);
    byTable.set(r.table, list);
  }
  let sql = "";
  for (const [table, list] of byTable) {
    const columns = Object.keys(list[0]!.values);
    const tuples = list.map((r) => {
      if (Object.keys(r.values).join() !== columns.join()) throw new Error(`rows of ${table} with different columns`);
      return `(${columns.map((c) => p(r.values[c]!.value, r.values[c]!.cast)).join(", ")})`;
    });
    const cols = columns.map((c) => `"${c}"`).join(", ");
    sql += `, ins_${table} AS (INSERT INTO "${table}" (${cols}) SELECT v.* FROM ${guard}, (VALUES ${tuples.join(", ")}) AS v(${cols}))`;
  }
  return sql;
}
