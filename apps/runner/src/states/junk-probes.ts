// The self-test's junk deliverables: files that exist and parse but answer nothing. When the goal
// delivers a file, the empty run already fails the baseline (artifact_exists, json_parses), so it says
// nothing about the client's own checks; these do. A definition of done that passes one of them cannot
// tell a right answer from a header, `{}`, `[]`, an empty text or the input handed back, and would let a
// model stop there.
import type { SandboxFile } from "@loopsmith/sandbox";
import type { FrozenCheck } from "@loopsmith/schemas";
import { checkRegistry } from "@loopsmith/verifier";

export interface JunkProbe {
  /** Names the probe on the tape and in the failure message. */
  probe: string;
  artifacts: { name: string; content: Buffer }[];
}

/** The checks that read an artifact as a table: their artifacts get a header-only table, not `{}`. */
const TABLE_CHECKS = new Set(["csv_matches", "csv_schema", "row_count"]);

type Form = "table" | "json" | "text";

interface Read {
  artifact: string;
  check: FrozenCheck;
  params: Record<string, unknown>;
}

/** The artifact a check reads, its params' defaults applied (json checks default to result.json); none for stdout. */
function readOf(check: FrozenCheck): Read | null {
  if (check.kind === "judgement") return null;
  const def = checkRegistry.get(check.id);
  const parsed = def?.params.safeParse(check.params);
  if (!parsed?.success) return null;
  const params = parsed.data as Record<string, unknown>;
  const artifact = check.id === "artifact_exists" ? params.name : params.artifact;
  return typeof artifact === "string" && artifact !== "" ? { artifact, check, params } : null;
}

function formOf(artifact: string, reads: Read[]): Form {
  if (reads.some((r) => r.artifact === artifact && TABLE_CHECKS.has(r.check.id))) return "table";
  const lower = artifact.toLowerCase();
  if (lower.endsWith(".csv") || lower.endsWith(".tsv")) return "table";
  if (lower.endsWith(".json")) return "json";
  return "text";
}

function csvCell(name: string, delimiter: string): string {
  return name.includes(delimiter) || /["\r\n]/.test(name) || name !== name.trim() ? `"${name.replaceAll('"', '""')}"` : name;
}

const firstLine = (content: Buffer) => content.toString("utf8").replace(/^\uFEFF/, "").split(/\r?\n/, 1)[0] ?? "";

interface Header {
  line: string;
  /** Whether the line may be quoted in the probe's name: not when it comes from hidden material. */
  shown: boolean;
}

/**
 * The header an empty table gets: the expected file's own header line when a csv_matches names one, else
 * the columns the checks name (csv_schema's columns and rule keys, csv_matches' key), else the header of
 * the goal's one input; null when nothing says what the columns are.
 */
function headerOf(artifact: string, reads: Read[], inputs: SandboxFile[], checkerFiles: SandboxFile[]): Header | null {
  const mine = reads.filter((r) => r.artifact === artifact);
  for (const r of mine) {
    if (r.check.id !== "csv_matches" || typeof r.params.expected_file !== "string") continue;
    const file = checkerFiles.find((f) => f.name === r.params.expected_file);
    if (file) return { line: firstLine(file.content), shown: false };
  }
  const names: string[] = [];
  let delimiter = ",";
  let hidden = false;
  for (const r of mine) {
    const named = [
      ...(Array.isArray(r.params.columns) ? r.params.columns : []),
      ...(r.params.rules && typeof r.params.rules === "object" ? Object.keys(r.params.rules) : []),
      ...(Array.isArray(r.params.key) ? r.params.key : []),
    ].filter((n): n is string => typeof n === "string");
    if (named.length === 0) continue;
    if (typeof r.params.delimiter === "string") delimiter = r.params.delimiter;
    hidden ||= r.check.hidden;
    for (const n of named) if (!names.includes(n)) names.push(n);
  }
  if (names.length > 0) return { line: names.map((n) => csvCell(n, delimiter)).join(delimiter), shown: !hidden };
  if (inputs.length === 1) return { line: firstLine(inputs[0]!.content), shown: true };
  return null;
}

const files = (names: string[], content: (name: string) => Buffer) => names.map((name) => ({ name, content: content(name) }));
const quote = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 79)}…` : s);

/**
 * The junk deliverables for a goal's frozen checks, each writing every artifact the checks read. None when
 * no client check reads an artifact: the probes are there to make the client's checks say no, and a goal
 * judged by its program's runs alone was probed by the empty run.
 */
export function junkProbes(checks: FrozenCheck[], inputs: SandboxFile[], checkerFiles: SandboxFile[]): JunkProbe[] {
  const reads = checks.map(readOf).filter((r): r is Read => r !== null);
  if (!reads.some((r) => r.check.source === "client")) return [];
  const names = [...new Set(reads.map((r) => r.artifact))];
  const form = new Map(names.map((n) => [n, formOf(n, reads)] as const));
  const header = new Map(names.map((n) => [n, form.get(n) === "table" ? headerOf(n, reads, inputs, checkerFiles) : null] as const));
  const describe = (name: string, json: "{}" | "[]") => {
    const f = form.get(name);
    if (f === "json") return `${name} as ${json}`;
    if (f === "text") return `${name} as an empty text`;
    // The probe's name reaches the tape and the export: a header from hidden material is not quoted.
    const h = header.get(name);
    if (!h) return `${name} as an empty file`;
    return `${name} as an empty table with ${h.shown ? `the header ${quote(h.line)}` : "the expected header"}`;
  };
  const empty = (json: "{}" | "[]") => (name: string) => {
    const f = form.get(name);
    if (f === "json") return Buffer.from(json, "utf8");
    const h = header.get(name);
    return Buffer.from(f === "table" && h ? `${h.line}\n` : "", "utf8");
  };

  const probes: JunkProbe[] = [{ probe: `a junk deliverable: ${names.map((n) => describe(n, "{}")).join(", ")}`, artifacts: files(names, empty("{}")) }];
  if ([...form.values()].includes("json")) {
    probes.push({ probe: `a junk deliverable: ${names.map((n) => describe(n, "[]")).join(", ")}`, artifacts: files(names, empty("[]")) });
  }
  if (inputs.length === 1) {
    const input = inputs[0]!;
    probes.push({ probe: `a junk deliverable: the input ${quote(input.name)} copied through to ${names.join(", ")}`, artifacts: files(names, () => input.content) });
  }
  return probes;
}
