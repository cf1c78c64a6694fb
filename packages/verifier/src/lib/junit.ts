// JUnit XML as pytest (xunit2) and Node's test runner (--test-reporter=junit) write it: test cases under
// <testsuite> elements, which may nest (node: one per describe) or be absent (node: top-level tests sit
// directly under <testsuites>). Shared by test_suite and command.
import { XMLParser } from "fast-xml-parser";
import { findArtifact } from "../artifacts";
import { preview } from "../format";
import type { RunEvidence } from "../types";

export const JUNIT = "junit.xml";

export interface TestCase {
  /** "<classname>::<name>"; classname is the suite path for node's reports. */
  id: string;
  name: string;
  outcome: "passed" | "failed" | "error" | "skipped";
  type?: string;
  message?: string;
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (name) => ["testsuite", "testcase", "failure", "error", "skipped"].includes(name), processEntities: true, htmlEntities: false });

export function readJunit(run: RunEvidence, writer = "pytest"): { ok: true; cases: TestCase[] } | { ok: false; message: string } {
  const file = findArtifact(run, JUNIT);
  if (!file.ok) return { ok: false, message: `${writer} wrote no JUnit report` };
  let doc: Record<string, unknown>;
  try {
    doc = xml.parse(file.value.toString("utf8")) as Record<string, unknown>;
  } catch (e) {
    return { ok: false, message: `the JUnit report is not valid XML (${preview((e as Error).message, 200)})` };
  }
  const top = (doc.testsuites ?? (doc.testsuite ? { testsuite: doc.testsuite } : undefined)) as Suite | undefined;
  // Absent, or an element with only text (an empty <testsuites></testsuites> parses as ""): neither has suites or cases.
  if (top?.testsuite === undefined && top?.testcase === undefined) return { ok: false, message: "the JUnit report has no testsuite" };
  const cases: TestCase[] = [];
  walk(top as Suite, [], cases, 0);
  return { ok: true, cases };
}

interface Suite {
  name?: unknown;
  testsuite?: Suite[];
  testcase?: Record<string, unknown>[];
}

function walk(suite: Suite, path: string[], cases: TestCase[], depth: number): void {
  if (depth > 32) return;
  for (const tc of suite.testcase ?? []) {
    // An element with neither attributes nor children parses as its text ("" when empty, which is falsy):
    // it is there all the same, so presence is `!== undefined`, and a bare text is its message.
    const first = (k: string): Record<string, unknown> | undefined => {
      const el = (tc[k] as unknown[] | undefined)?.[0];
      return el === undefined ? undefined : typeof el === "object" ? (el as Record<string, unknown>) : { "#text": String(el) };
    };
    const f = first("failure") ?? first("error");
    const outcome: TestCase["outcome"] = first("failure") !== undefined ? "failed" : first("error") !== undefined ? "error" : first("skipped") !== undefined ? "skipped" : "passed";
    const detail = f ?? first("skipped");
    const message = detail ? [detail.message, detail["#text"]].filter((x): x is string => typeof x === "string" && x !== "").map(decodeCharRefs).join("\n") : undefined;
    // pytest names the exception on the report's last line ("tests/test_x.py:4: AssertionError").
    // Stryker disable next-line StringLiteral: equivalent; a text without a line number matches nothing, like no text
    const type = f?.type ? String(f.type) : /:\d+: ([A-Za-z_][\w.]*)\s*$/.exec(String(f?.["#text"] ?? ""))?.[1];
    const classname = path.length > 0 ? path.join(" > ") : String(tc.classname ?? "");
    const name = String(tc.name ?? "");
    cases.push({ id: `${classname}::${name}`, name, outcome, ...(type ? { type } : {}), ...(message ? { message } : {}) });
  }
  // Stryker disable next-line ArrayDeclaration: equivalent; a suite that is a bare string holds no cases
  for (const s of suite.testsuite ?? []) {
    // pytest's one suite ("pytest") keeps its cases' classnames; node's suites are describe blocks.
    // Stryker disable next-line ArrayDeclaration: equivalent; every() over a bare string's missing classname is true, as over no cases
    const nested = s.name !== undefined && s.name !== "pytest" && (s.testcase ?? []).every((c) => c.classname === "test" || c.classname === undefined);
    walk(s, nested ? [...path, String(s.name)] : path, cases, depth + 1);
  }
}

/** pytest writes newlines in attributes as &#10;, which the XML parser leaves as they are. */
function decodeCharRefs(text: string): string {
  return text.replace(/&#(x[0-9a-fA-F]+|\d+);/g, (m, code: string) => {
    const n = code.startsWith("x") ? parseInt(code.slice(1), 16) : Number(code);
    return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : m;
  });
}
