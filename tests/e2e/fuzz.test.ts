// Malformed requests against the real app (Postgres, Redis; no runner: nothing here may start a goal).
// Every answer must be a 4xx in the catalog's shape: {error: {code, message, details}} with a code from
// ERROR_CATALOG whose status is the answer's, and validation errors must name the field (details[].path).
// A 5xx, a 2xx or a foreign error shape is a failure. The generator is seeded: FUZZ_SEED=<n> replays a run.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CATALOG, type ErrorCode } from "@loopsmith/core";
import { createTenant } from "@loopsmith/db";
import { demoGoal } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";

const SEED = Number(process.env.FUZZ_SEED ?? 20_240_611);
const SMALL_BODY_LIMIT = 64 * 1024;

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const sample = <T>(xs: readonly T[], n: number): T[] => {
  const copy = [...xs];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
};
/** n code points from the alphabet (never half a surrogate pair). */
const randomText = (n: number, alphabet: string) => {
  const chars = Array.from(alphabet);
  return Array.from({ length: n }, () => chars[int(chars.length)]).join("");
};
const IDENT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789";
const UNICODE = "aZ09 é漢字🙂\t\"\\/<>{}[]'";

type Method = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";
interface Case {
  name: string;
  method?: Method;
  url?: string;
  /** JSON-encoded; the strings DEEP_ARRAY / DEEP_OBJECT are replaced by 10k-deep JSON (too deep for JSON.stringify). */
  body?: unknown;
  /** Sent as is. */
  raw?: string | Buffer;
  /** Default: application/json when there is a body; null sends none. */
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Default: the tenant's key; null sends no Authorization header. */
  key?: string | null;
  on?: "main" | "small";
  status?: number | number[];
  code?: ErrorCode | ErrorCode[];
  /** A validation detail's path must start with this. */
  path?: string;
}

const DEPTH = 10_000;
const DEEP_ARRAY = "[".repeat(DEPTH) + "1" + "]".repeat(DEPTH);
const DEEP_OBJECT = '{"a":'.repeat(DEPTH) + "1" + "}".repeat(DEPTH);
const encode = (body: unknown) => JSON.stringify(body).replaceAll('"DEEP_ARRAY"', DEEP_ARRAY).replaceAll('"DEEP_OBJECT"', DEEP_OBJECT);

/** A valid goal touching every field of createGoalBody (checked to be accepted before the fuzzing). */
function base(): Record<string, unknown> {
  const g = structuredClone(demoGoal()) as Record<string, unknown>;
  return {
    ...g,
    inputs: [...(g.inputs as object[]), { name: "blob.bin", content_base64: "AAEC/w==" }],
    checks: [...(g.checks as object[]), { id: "judge_clarity", kind: "judgement", params: { tone: "plain" }, description: "Readable." }],
    execution_timeout_seconds: 30,
    budget: { max_tokens: 100_000, max_cost_usd: 2, max_wall_seconds: 900 },
    approval_threshold_usd: 1,
    // Loopback is on the test allow list (WEBHOOK_ALLOW_CIDRS), and nothing is delivered: no runner.
    webhook: { url: "http://127.0.0.1:9999/hook" },
  };
}

function setPath(obj: unknown, path: string, value: unknown): unknown {
  const keys = path.split(".");
  let o = obj as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) o = o[k] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (value === undefined) delete o[last];
  else o[last] = value;
  return obj;
}
const withField = (path: string, value: unknown) => setPath(base(), path, value);
const top = (path: string) => `body.${path.split(".")[0]}`;

// ---------------------------------------------------------------------------------------------------------
// The generators: one list of cases per kind of malformation.

type Kind = "string" | "int" | "number" | "boolean" | "array" | "object" | "enum";
const WRONG: unknown[] = [null, true, false, 0, -1, 2.5, "", "text", [], [1, "a"], {}, { k: "v" }];
const wrongFor = (kind: Kind) =>
  WRONG.filter((v) => {
    if (kind === "string") return typeof v !== "string";
    if (kind === "int") return !Number.isInteger(v);
    if (kind === "number") return typeof v !== "number";
    if (kind === "boolean") return typeof v !== "boolean";
    if (kind === "array") return !Array.isArray(v) || v.length > 0;
    if (kind === "object") return v === null || typeof v !== "object" || Array.isArray(v);
    return true; // enum: none of WRONG is a member
  });

/** Every field of createGoalBody (and of the scripted model's script) with its type. */
const FIELDS: [string, Kind][] = [
  ["objective", "string"],
  ["success", "string"],
  ["checks", "array"],
  ["checks.0", "object"],
  ["checks.0.id", "string"],
  ["checks.0.params", "object"],
  ["checks.0.kind", "enum"],
  ["checks.1.description", "string"],
  ["inputs", "array"],
  ["inputs.0", "object"],
  ["inputs.0.name", "string"],
  ["inputs.0.text", "string"],
  ["inputs.1.content_base64", "string"],
  ["max_attempts", "int"],
  ["execution_timeout_seconds", "int"],
  ["model", "object"],
  ["model.provider", "enum"],
  ["model.script", "object"],
  ["model.script.plan", "object"],
  ["model.script.plan.objective", "string"],
  ["model.script.plan.approach", "array"],
  ["model.script.plan.output_contract", "string"],
  ["model.script.plan.checks", "array"],
  ["model.script.generate", "object"],
  ["model.script.generate.filename", "string"],
  ["model.script.generate.language", "enum"],
  ["model.script.generate.source", "string"],
  ["model.script.inspect", "array"],
  ["model.script.inspect.0.verified", "boolean"],
  ["model.script.inspect.0.failing_checks", "array"],
  ["model.script.refine", "array"],
  ["budget", "object"],
  ["budget.max_tokens", "int"],
  ["budget.max_cost_usd", "number"],
  ["budget.max_wall_seconds", "int"],
  ["approval_threshold_usd", "number"],
  ["webhook", "object"],
  ["webhook.url", "string"],
  ["webhook.payload", "enum"],
];

function wrongTypes(): Case[] {
  return FIELDS.flatMap(([path, kind]) => {
    const values = wrongFor(kind);
    // Top-level fields get every wrong value; nested ones a seeded sample.
    const chosen = path.includes(".") ? sample(values, 4) : values;
    return chosen.map((v) => ({ name: `wrong type: ${path} = ${JSON.stringify(v)}`, body: withField(path, v), code: "LS_ERR_VALIDATION" as const, path: top(path) }));
  });
}

function missingRequired(): Case[] {
  const required = [
    "objective",
    "checks.0.id",
    "inputs.0.name",
    "inputs.0.text",
    "inputs.1.content_base64",
    "model.provider",
    "model.script",
    "model.script.plan",
    "model.script.plan.objective",
    "model.script.plan.approach",
    "model.script.plan.output_contract",
    "model.script.plan.checks",
    "model.script.generate",
    "model.script.generate.source",
    "model.script.generate.filename",
    "model.script.generate.language",
    "model.script.inspect",
    "model.script.inspect.0.verified",
    "model.script.inspect.0.diagnosis",
    "webhook.url",
  ];
  return [
    ...required.map((p) => ({ name: `missing: ${p}`, body: withField(p, undefined), code: "LS_ERR_VALIDATION" as const, path: top(p) })),
    { name: "missing: everything ({})", body: {}, code: "LS_ERR_VALIDATION", path: "body" },
  ];
}

function unknownFields(): Case[] {
  // The levels whose schema is closed (additionalProperties: false in the OpenAPI document).
  const levels = ["", "inputs.0", "inputs.1", "budget", "webhook", "model"];
  const names = () => [randomText(1 + int(12), IDENT), "constructor", "toString", pick(["prototype", "hasOwnProperty", "valueOf"])];
  const values = [1, "x", null, { nested: { deeper: [1, 2] } }, "DEEP_ARRAY", "DEEP_OBJECT"];
  const cases: Case[] = [];
  for (const level of levels)
    for (const name of names()) {
      const body = base();
      const target = level ? (level.split(".").reduce((o: Record<string, unknown>, k) => o[k] as Record<string, unknown>, body) as Record<string, unknown>) : body;
      const value = pick(values);
      target[name] = value;
      cases.push({ name: `unknown field ${name} (${String(value).slice(0, 12)}) at ${level || "top"}`, body, code: "LS_ERR_VALIDATION", path: level ? `body.${level}` : "body" });
    }
  // Prototype pollution attempts are refused by the JSON parser itself.
  const text = encode(base());
  cases.push({ name: "__proto__ key", raw: text.replace("{", '{"__proto__":{"polluted":true},'), code: "LS_ERR_VALIDATION", path: "body" });
  cases.push({ name: "constructor.prototype key", raw: text.replace("{", '{"constructor":{"prototype":{"polluted":true}},'), code: "LS_ERR_VALIDATION", path: "body" });
  return cases;
}

function hugeStrings(): Case[] {
  // No whitespace: objective is trimmed before its length is checked.
  const long = (n: number) => randomText(n, UNICODE.replace(/\s/g, ""));
  const many = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));
  const cases: [string, unknown, string][] = [
    ["objective", long(10_001), "body.objective"],
    ["objective", "x".repeat(1_000_000), "body.objective"],
    ["success", long(10_001), "body.success"],
    ["checks.0.id", "c".repeat(101), "body.checks.0.id"],
    ["checks.1.description", long(2001), "body.checks.1.description"],
    ["inputs.0.name", "n".repeat(129), "body.inputs.0.name"],
    ["webhook.url", `http://example.com/${"a".repeat(2049)}`, "body.webhook.url"],
    ["model.script.generate.source", "#".repeat(200_001), "body.model"],
    ["inputs", many(21, (i) => ({ name: `f${i}.csv`, text: "a" })), "body.inputs"],
    ["checks", many(51, () => ({ id: "exits_clean" })), "body.checks"],
    ["inputs", [{ name: "big.csv", text: "x".repeat(10 * 1024 * 1024 + 1) }], "body.inputs"],
    ["model", { provider: "openai-compatible", model: "m".repeat(201) }, "body.model"],
  ];
  return [
    ...cases.map(([p, v, path]) => ({ name: `too long: ${p} (${typeof v === "string" ? v.length : (v as unknown[]).length})`, body: withField(p, v), code: "LS_ERR_VALIDATION" as const, path })),
    { name: "too long: Idempotency-Key (256)", body: base(), headers: { "idempotency-key": "k".repeat(256) }, code: "LS_ERR_VALIDATION", path: "headers.idempotency-key" },
    { name: "too long: an unknown key's name (10k)", body: { ...base(), ["k".repeat(10_000)]: 1 }, code: "LS_ERR_VALIDATION", path: "body" },
    { name: "too long: ?cursor= (201)", method: "GET", url: `/goals?cursor=${"c".repeat(201)}`, code: "LS_ERR_VALIDATION", path: "querystring.cursor" },
  ];
}

function deepNesting(): Case[] {
  const check = (c: object) => {
    const b = base();
    (b.checks as object[]).unshift(c);
    return b;
  };
  const script = (params: unknown) => {
    const b = base();
    const plan = ((b.model as { script: { plan: { checks: object[] } } }).script.plan);
    plan.checks.push({ id: "schema_ok", params: { deep: params } });
    return b;
  };
  return [
    { name: "deep: array in a known check's params", body: check({ id: "reconciles_total", params: { values_path: "DEEP_ARRAY", total_path: "t" } }), status: 400 },
    { name: "deep: object in an unknown check's params", body: check({ id: "no_such_check", params: { x: "DEEP_OBJECT" } }), status: 400 },
    { name: "deep: object in a judgement check's params", body: check({ id: "judge", kind: "judgement", params: { x: "DEEP_OBJECT" } }), status: 400 },
    { name: "deep: array in a judgement check's params", body: check({ id: "judge", kind: "judgement", params: { x: "DEEP_ARRAY" } }), status: 400 },
    { name: "deep: array in the scripted plan's check params", body: script("DEEP_ARRAY"), status: 400 },
    { name: "deep: array as the objective", body: withField("objective", "DEEP_ARRAY"), code: "LS_ERR_VALIDATION", path: "body.objective" },
    { name: "deep: object as the budget", body: withField("budget", "DEEP_OBJECT"), code: "LS_ERR_VALIDATION", path: "body.budget" },
    { name: "deep: array as the whole body", raw: DEEP_ARRAY, code: "LS_ERR_VALIDATION", path: "body" },
    { name: "deep: object as the whole body", raw: DEEP_OBJECT, code: "LS_ERR_VALIDATION", path: "body" },
    { name: "deep: [[[… as ?state=", method: "GET", url: `/goals?state=${encodeURIComponent("[".repeat(DEPTH))}`, code: "LS_ERR_VALIDATION", path: "querystring" },
  ];
}

function badBase64(): Case[] {
  const fixed = ["!!!", "abc", "YQ", "YQ===", "Y Q==", "YQ==\n", "-_-_", "é", "====", "A", "AAEC/w==AAEC", "data:;base64,AAEC"];
  const random = Array.from({ length: 6 }, () => randomText(1 + int(30), "!#$%&*()-_.,;:~`é漢 \\\""));
  return [...fixed, ...random].map((v) => ({
    name: `base64: ${JSON.stringify(v)}`,
    body: withField("inputs.1.content_base64", v),
    code: "LS_ERR_VALIDATION" as const,
    path: "body.inputs.1.content_base64",
  }));
}

function badBytes(): Case[] {
  const json = encode(base());
  // Raw bytes spliced into the objective's string: invalid UTF-8 must not be silently rewritten to U+FFFD.
  const objective = json.indexOf('"objective":"') + '"objective":"'.length;
  const splice = (bytes: number[]) => Buffer.concat([Buffer.from(json.slice(0, objective)), Buffer.from(bytes), Buffer.from(json.slice(objective))]);
  const invalidUtf8: [string, number[]][] = [
    ["0xff 0xfe", [0xff, 0xfe]],
    ["overlong '/'", [0xc0, 0xaf]],
    ["lone continuation byte", [0x80]],
    ["truncated 3-byte sequence", [0xe2, 0x82]],
    ["UTF-8-encoded surrogate", [0xed, 0xa0, 0x80]],
    ["5-byte sequence", [0xf8, 0x88, 0x80, 0x80, 0x80]],
  ];
  const nul = (path: string, value: unknown) => ({ name: `NUL (\\u0000) in ${path}`, body: withField(path, value), status: 400 });
  return [
    ...invalidUtf8.map(([label, bytes]) => ({ name: `invalid UTF-8 in objective: ${label}`, raw: splice(bytes), status: 400 })),
    { name: "raw NUL byte inside a string", raw: splice([0x00]), code: "LS_ERR_VALIDATION", path: "body" },
    { name: "raw NUL byte between tokens", raw: Buffer.concat([Buffer.from("{"), Buffer.from([0]), Buffer.from(json.slice(1))]), code: "LS_ERR_VALIDATION", path: "body" },
    nul("objective", "count\u0000rows"),
    nul("success", "\u0000"),
    nul("checks.1.description", "a\u0000b"),
    nul("checks.1.params", { tone: "pl\u0000ain" }),
    nul("model.script.generate.source", "print(1)\u0000"),
    nul("model.script.plan.objective", "\u0000"),
    nul("webhook.url", "http://127.0.0.1:9999/\u0000"),
  ];
}

function contentTypes(): Case[] {
  const json = encode(base());
  const cases: Case[] = [
    { name: "content-type: text/plain", raw: json, contentType: "text/plain", code: ["LS_ERR_VALIDATION", "LS_ERR_UNSUPPORTED_MEDIA_TYPE"] },
    { name: "content-type: application/xml", raw: "<goal><objective>x</objective></goal>", contentType: "application/xml", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: text/xml", raw: json, contentType: "text/xml", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: form", raw: "objective=x&max_attempts=2", contentType: "application/x-www-form-urlencoded", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    {
      name: "content-type: multipart",
      raw: '--b\r\ncontent-disposition: form-data; name="objective"\r\n\r\nx\r\n--b--\r\n',
      contentType: "multipart/form-data; boundary=b",
      code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE",
    },
    { name: "content-type: none", raw: json, contentType: null, code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: text/html", raw: json, contentType: "text/html", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: octet-stream", raw: json, contentType: "application/octet-stream", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: image/png", raw: Buffer.from([0x89, 0x50, 0x4e, 0x47]), contentType: "image/png", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: application/json-patch+json", raw: json, contentType: "application/json-patch+json", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: application/vnd.api+json", raw: json, contentType: "application/vnd.api+json", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
    { name: "content-type: json, body UTF-16", raw: Buffer.from(json, "utf16le"), contentType: "application/json; charset=utf-16", status: [400, 415] },
    { name: "content-type: garbage", raw: json, contentType: "%%%/???", code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" },
  ];
  const id = "00000000-0000-4000-8000-000000000000";
  for (const c of [cases[0]!, cases[1]!, cases[3]!])
    cases.push({ ...c, name: `${c.name} on approve`, url: `/goals/${id}/approve`, raw: c.raw === json ? "{}" : c.raw, code: [...[c.code ?? []].flat(), "LS_ERR_NOT_FOUND"] as ErrorCode[] });
  return cases;
}

function oversize(): Case[] {
  const padded = (n: number) => {
    const b = base();
    const text = encode(b);
    return text.replace('"objective":"', `"objective":"${"x".repeat(Math.max(0, n - text.length))}`);
  };
  return [
    { name: "oversize: limit + 1 byte", on: "small", raw: padded(SMALL_BODY_LIMIT + 1), code: "LS_ERR_PAYLOAD_TOO_LARGE" },
    { name: "oversize: 1 MiB", on: "small", raw: padded(1024 * 1024), code: "LS_ERR_PAYLOAD_TOO_LARGE" },
    { name: "oversize: text/plain", on: "small", raw: "x".repeat(SMALL_BODY_LIMIT * 2), contentType: "text/plain", code: "LS_ERR_PAYLOAD_TOO_LARGE" },
    { name: "oversize: approve body", on: "small", url: `/goals/${randomUUID()}/approve`, raw: `{"budget":{"max_tokens":1},"x":"${"y".repeat(SMALL_BODY_LIMIT)}"}`, code: "LS_ERR_PAYLOAD_TOO_LARGE" },
    { name: "oversize: Content-Length claims 1 TB", raw: encode(base()), headers: { "content-length": String(1e12) }, code: "LS_ERR_PAYLOAD_TOO_LARGE" },
    { name: "oversize: 16 MiB + 1 (the default limit)", raw: padded(16 * 1024 * 1024 + 1), code: "LS_ERR_PAYLOAD_TOO_LARGE" },
  ];
}

function malformedJson(): Case[] {
  const json = encode(base());
  const truncations = Array.from({ length: 12 }, () => 1 + int(json.length - 2)).map((at) => ({
    name: `malformed JSON: truncated at ${at}/${json.length}`,
    raw: json.slice(0, at),
  }));
  const garbage = Array.from({ length: 8 }, () => {
    const text = randomText(1 + int(40), '{}[]":,0123456789.eE+-truefalsn \\ab');
    return { name: `malformed JSON: random ${JSON.stringify(text)}`, raw: text };
  });
  const fixed: [string, string][] = [
    ["trailing comma", '{"objective":"x",}'],
    ["single quotes", "{'objective':'x'}"],
    ["comment", '{"objective":"x" /* c */}'],
    ["NaN", '{"objective":"x","max_attempts":NaN}'],
    ["Infinity", '{"objective":"x","max_attempts":Infinity}'],
    ["1e400 (Infinity after parsing)", json.replace('"max_attempts":5', '"max_attempts":1e400')],
    ["unquoted key", "{objective:\"x\"}"],
    ["lone {", "{"],
    ["lone }", "}"],
    ["two documents", `${json}${json}`],
    ["trailing garbage", `${json}garbage`],
    ["empty body", ""],
    ["whitespace only", " \n\t "],
    ["null", "null"],
    ["a number", "123"],
    ["a string", '"goal"'],
    ["an array", "[]"],
    ["true", "true"],
    ["unterminated string", '{"objective":"x'],
    ["bad escape", '{"objective":"\\x41"}'],
    ["control character in a string", '{"objective":"a\nb"}'],
    ["hex number", '{"objective":"x","max_attempts":0x5}'],
  ];
  return [...truncations, ...garbage, ...fixed.map(([label, raw]) => ({ name: `malformed JSON: ${label}`, raw }))].map((c) => ({ ...c, status: 400 }));
}

function badQueries(): Case[] {
  const queries = [
    "limit=-1",
    "limit=0",
    "limit=101",
    "limit=abc",
    "limit=1.5",
    "limit=1e3",
    "limit=",
    "limit=Infinity",
    "limit=NaN",
    "limit=1&limit=2",
    "state=bogus",
    "state=PLAN",
    "state=",
    "state=plan,verified",
    "state=plan&state=failed",
    "state[]=plan",
    "cursor=@@@",
    "cursor=%00",
    "cursor===",
    `cursor=${Buffer.from("x|y").toString("base64url")}`,
    `cursor=${Buffer.from(`2024-13-45T00:00:00Z|${randomUUID()}`).toString("base64url")}`,
    `cursor=${Buffer.from("2024-01-01T00:00:00Z|not-a-uuid").toString("base64url")}`,
    "foo=bar",
    "%zz=1",
    "limit=5&extra=1",
  ];
  const randomCursors = Array.from({ length: 8 }, () => `cursor=${randomText(4 + int(60), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}`);
  const randomKeys = Array.from({ length: 8 }, () => `${encodeURIComponent(randomText(1 + int(10), "%[]{}<>!$'()*+,;:@|^~`\"0123456789 "))}=${encodeURIComponent(randomText(int(10), UNICODE))}`);
  return [...queries, ...randomCursors, ...randomKeys].map((q) => ({
    name: `GET /goals?${q}`,
    method: "GET" as const,
    url: `/goals?${q}`,
    code: "LS_ERR_VALIDATION" as const,
    path: "querystring",
  }));
}

function badIds(): Case[] {
  const ids = [
    "not-a-uuid",
    "123",
    "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz",
    "%00",
    "%20",
    "..%2F..%2Fetc%2Fpasswd",
    "%E2%80%AE",
    "'%20OR%201%3D1--",
    randomUUID(),
    randomUUID().toUpperCase(),
    "00000000-0000-0000-0000-000000000000",
    encodeURIComponent(randomText(1 + int(30), UNICODE)),
  ];
  const routes: [Method, (id: string) => string][] = [
    ["GET", (id) => `/goals/${id}`],
    ["POST", (id) => `/goals/${id}/cancel`],
    ["POST", (id) => `/goals/${id}/approve`],
    ["POST", (id) => `/goals/${id}/reject`],
    ["GET", (id) => `/goals/${id}/deliveries`],
    ["GET", (id) => `/goals/${id}/events`],
    ["POST", (id) => `/deliveries/${id}/redeliver`],
  ];
  const cases: Case[] = routes.flatMap(([method, url]) => sample(ids, 6).map((id) => ({ name: `bad id: ${method} ${url(id)}`, method, url: url(id), code: "LS_ERR_NOT_FOUND" as const })));
  // Ids the router itself refuses (longer than its parameter limit, broken percent-encoding).
  for (const [method, url] of [routes[0]!, routes[5]!]) {
    cases.push({ name: `bad id: ${method} ${url("<150 chars>")}`, method, url: url("a".repeat(150)), status: [400, 404, 414] });
    cases.push({ name: `bad id: ${method} ${url("%E0%A4%A")}`, method, url: url("%E0%A4%A"), status: [400, 404] });
  }
  return cases;
}

function badIdempotencyKeys(): Case[] {
  const keys = ["", " ", "a b", "ключ", "é", "tab\there", "k".repeat(256), "\u007f", `${randomText(8, IDENT)} ${randomText(8, IDENT)}`];
  return keys.map((k) => ({
    name: `Idempotency-Key ${JSON.stringify(k.length > 20 ? `${k.slice(0, 10)}…(${k.length})` : k)}`,
    body: base(),
    headers: { "idempotency-key": k },
    code: "LS_ERR_VALIDATION" as const,
    path: "headers.idempotency-key",
  }));
}

function badWebhooks(): Case[] {
  const schemes = ["ftp://example.com/hook", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)", "http://", "ws://example.com/", "not a url", "//example.com/hook", "http://user:pass@127.0.0.1:9/"];
  const privateAddresses = [
    "http://10.0.0.1/hook",
    "http://192.168.1.1/",
    "http://172.16.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/",
    "http://0.0.0.0/",
    "http://127.0.0.2/",
    "http://[fc00::1]/",
    "http://100.64.0.1/",
    "http://[::ffff:10.0.0.1]/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://0x0a.0.0.1/",
    "https://10.1.2.3:8443/x",
    "http://nonexistent.invalid/",
  ];
  return [
    ...schemes.map((url) => ({ name: `webhook URL ${url}`, body: withField("webhook.url", url), code: ["LS_ERR_VALIDATION", "LS_ERR_WEBHOOK_URL"] as ErrorCode[], path: "body.webhook.url" })),
    ...privateAddresses.map((url) => ({ name: `webhook URL ${url}`, body: withField("webhook.url", url), code: "LS_ERR_WEBHOOK_URL" as const, path: "body.webhook.url" })),
  ];
}

function badBudgets(): Case[] {
  const cases: [string, unknown, string][] = [
    ["budget.max_tokens", 0, "body.budget.max_tokens"],
    ["budget.max_tokens", -5, "body.budget.max_tokens"],
    ["budget.max_tokens", 1.5, "body.budget.max_tokens"],
    ["budget.max_tokens", 100_000_001, "body.budget.max_tokens"],
    ["budget.max_tokens", 6_000_000, "body.budget.max_tokens"], // over the server's LIMIT_MAX_TOKENS
    ["budget.max_cost_usd", 0, "body.budget.max_cost_usd"],
    ["budget.max_cost_usd", -1, "body.budget.max_cost_usd"],
    ["budget.max_cost_usd", 1_000_001, "body.budget.max_cost_usd"],
    ["budget.max_cost_usd", 501, "body.budget.max_cost_usd"], // over LIMIT_MAX_COST_USD
    ["budget.max_wall_seconds", 0, "body.budget.max_wall_seconds"],
    ["budget.max_wall_seconds", 2.5, "body.budget.max_wall_seconds"],
    ["budget.max_wall_seconds", 30 * 24 * 3600 + 1, "body.budget.max_wall_seconds"],
    ["budget.max_wall_seconds", 24 * 3600 + 1, "body.budget.max_wall_seconds"], // over LIMIT_MAX_WALL_SECONDS
    ["approval_threshold_usd", -1, "body.approval_threshold_usd"],
    ["approval_threshold_usd", 1_000_001, "body.approval_threshold_usd"],
    ["max_attempts", 0, "body.max_attempts"],
    ["max_attempts", 21, "body.max_attempts"],
    ["execution_timeout_seconds", 0, "body.execution_timeout_seconds"],
    ["execution_timeout_seconds", 601, "body.execution_timeout_seconds"],
  ];
  return cases.map(([p, v, path]) => ({ name: `budget: ${p} = ${v}`, body: withField(p, v), code: "LS_ERR_VALIDATION" as const, path }));
}

function badApprovals(goalId: string, otherTenantGoalId: string): Case[] {
  const url = `/goals/${goalId}/approve`;
  const bodies: [string, string, Case["code"]][] = [
    ["[]", "[]", "LS_ERR_VALIDATION"],
    ["a string", '"yes"', "LS_ERR_VALIDATION"],
    ["a number", "1", "LS_ERR_VALIDATION"],
    ["threshold -1", '{"approval_threshold_usd":-1}', "LS_ERR_VALIDATION"],
    ["threshold as a string", '{"approval_threshold_usd":"1"}', "LS_ERR_VALIDATION"],
    ["threshold too large", '{"approval_threshold_usd":1e7}', "LS_ERR_VALIDATION"],
    ["max_tokens 0", '{"budget":{"max_tokens":0}}', "LS_ERR_VALIDATION"],
    ["max_tokens huge", '{"budget":{"max_tokens":1e12}}', "LS_ERR_VALIDATION"],
    ["unknown budget field", '{"budget":{"max_tokenz":5}}', "LS_ERR_VALIDATION"],
    ["budget as an array", '{"budget":[1]}', "LS_ERR_VALIDATION"],
    ["unknown field", '{"approve":true}', "LS_ERR_VALIDATION"],
    ["deep unknown field", `{"x":${DEEP_ARRAY}}`, "LS_ERR_VALIDATION"],
    ["malformed JSON", '{"budget":', "LS_ERR_VALIDATION"],
    // Well-formed, but the goal is in plan, not awaiting approval.
    ["valid, wrong state", '{"approval_threshold_usd":5}', "LS_ERR_GOAL_STATE"],
    ["empty object, wrong state", "{}", "LS_ERR_GOAL_STATE"],
  ];
  return [
    ...bodies.map(([label, raw, code]) => ({ name: `approve: ${label}`, url, raw, code, ...(code === "LS_ERR_VALIDATION" ? { path: "body" } : {}) })),
    { name: "approve: another tenant's goal", url: `/goals/${otherTenantGoalId}/approve`, raw: "{}", code: "LS_ERR_NOT_FOUND" },
    { name: "reject: wrong state", url: `/goals/${goalId}/reject`, code: "LS_ERR_GOAL_STATE" },
  ];
}

function badAuth(): Case[] {
  const headersFor = (auth: string | null): Pick<Case, "key" | "headers"> => (auth === null ? { key: null } : { key: null, headers: { authorization: auth } });
  const auths = [null, "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", `Bearer lsk_${randomText(32, IDENT)}`, `Bearer ${randomText(300, IDENT)}`, "bearer", "Token abc"];
  const routes: [Method, string][] = [
    ["GET", "/goals"],
    ["POST", "/goals"],
    ["GET", `/goals/${randomUUID()}`],
    ["GET", `/goals/${randomUUID()}/events`],
  ];
  return routes.flatMap(([method, url]) =>
    sample(auths, 4).map((a) => ({
      name: `auth ${JSON.stringify(a)?.slice(0, 30)}: ${method} ${url}`,
      method,
      url,
      ...(method === "POST" ? { body: base() } : {}),
      ...headersFor(a),
      code: "LS_ERR_UNAUTHORIZED" as const,
    })),
  );
}

function unknownRoutes(): Case[] {
  return [
    { name: "DELETE /goals", method: "DELETE", url: "/goals", code: "LS_ERR_NOT_FOUND" },
    { name: "PUT /goals/:id", method: "PUT", url: `/goals/${randomUUID()}`, body: base(), code: "LS_ERR_NOT_FOUND" },
    { name: "PATCH /goals", method: "PATCH", url: "/goals", body: {}, code: "LS_ERR_NOT_FOUND" },
    { name: "GET /goals/:id/nope", method: "GET", url: `/goals/${randomUUID()}/nope`, code: "LS_ERR_NOT_FOUND" },
  ];
}

// ---------------------------------------------------------------------------------------------------------

let loop: Loop;
let small: Loop;
const statuses = new Map<number, number>();
let sent = 0;

type Answer = { status: number; body: string; headers: Record<string, unknown> };

async function send(c: Case): Promise<Answer> {
  const app = (c.on === "small" ? small : loop).app;
  const key = c.key === undefined ? (c.on === "small" ? small : loop).tenant.api_key : c.key;
  const payload = c.raw ?? (c.body === undefined ? undefined : encode(c.body));
  const contentType = c.contentType === undefined ? (payload === undefined ? undefined : "application/json") : c.contentType;
  const res = await app.inject({
    method: c.method ?? "POST",
    url: c.url ?? "/goals",
    payload,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(contentType ? { "content-type": contentType } : {}),
      ...c.headers,
    },
  });
  sent++;
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
  return { status: res.statusCode, body: res.body, headers: res.headers };
}

/** What is wrong with the answer to `c`; empty when it is a proper 4xx. */
function problemsWith(c: Case, a: Answer): string[] {
  const out: string[] = [];
  const said = `${a.status} ${a.body.slice(0, 200)}`;
  const statusesWanted = c.status === undefined ? undefined : [c.status].flat();
  if (a.status < 400 || a.status >= 500) out.push(`status ${a.status}, want ${statusesWanted?.join("|") ?? "4xx"}: ${said}`);
  else if (statusesWanted && !statusesWanted.includes(a.status)) out.push(`status ${a.status}, want ${statusesWanted.join("|")}: ${said}`);
  let body: { error?: { code?: unknown; message?: unknown; details?: unknown } };
  try {
    body = JSON.parse(a.body) as typeof body;
  } catch {
    return [...out, `not JSON: ${said}`];
  }
  if (!String(a.headers["content-type"] ?? "").startsWith("application/json")) out.push(`content-type ${String(a.headers["content-type"])}`);
  const e = body.error;
  if (!e || typeof e !== "object" || !("details" in e) || typeof e.message !== "string" || typeof e.code !== "string")
    return [...out, `not the error shape {error:{code,message,details}}: ${said}`];
  if (!(e.code in ERROR_CATALOG)) return [...out, `code ${e.code} is not in ERROR_CATALOG`];
  const code = e.code as ErrorCode;
  if (ERROR_CATALOG[code].status !== a.status) out.push(`code ${code} has status ${ERROR_CATALOG[code].status} in the catalog, answered ${a.status}`);
  const codesWanted = c.code === undefined ? undefined : [c.code].flat();
  if (codesWanted && !codesWanted.includes(code)) out.push(`code ${code}, want ${codesWanted.join("|")}: ${said}`);
  if (code === "LS_ERR_VALIDATION") {
    const details = e.details as { path?: unknown; message?: unknown }[] | null;
    if (!Array.isArray(details) || details.length === 0) out.push(`validation error without details: ${said}`);
    else {
      if (!details.every((d) => typeof d.path === "string" && /^(body|querystring|headers|params)\b/.test(d.path) && typeof d.message === "string"))
        out.push(`validation details without a proper path: ${JSON.stringify(details).slice(0, 200)}`);
      if (c.path && !details.some((d) => typeof d.path === "string" && (d.path === c.path || d.path.startsWith(`${c.path}.`))))
        out.push(`no detail at ${c.path}: ${JSON.stringify(details).slice(0, 300)}`);
    }
  }
  return out;
}

async function fuzz(cases: Case[]): Promise<void> {
  const failures: string[] = [];
  for (const c of cases) {
    const problems = problemsWith(c, await send(c));
    if (problems.length) failures.push(`${c.name}\n    ${problems.join("\n    ")}`);
  }
  expect(failures, `FUZZ_SEED=${SEED}: ${failures.length} of ${cases.length} answers were wrong:\n  ${failures.join("\n  ")}`).toEqual([]);
}

let goalId: string;
let otherGoalId: string;

beforeAll(async () => {
  loop = await startLoop({ runner: false });
  small = await startLoop({ runner: false, bodyLimit: SMALL_BODY_LIMIT });
  const other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
  const mine = await loop.post(base());
  expect(mine.status, `the base goal must be valid: ${JSON.stringify(mine.body)}`).toBe(202);
  goalId = mine.body.id as string;
  const theirs = await loop.post(base(), { key: other.api_key });
  expect(theirs.status).toBe(202);
  otherGoalId = theirs.body.id as string;
});
afterAll(async () => {
  const dist = [...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(", ");
  console.log(`fuzz (FUZZ_SEED=${SEED}): ${sent} requests; statuses ${dist}`);
  await loop?.close();
  await small?.close();
});

describe(`malformed requests (FUZZ_SEED=${SEED})`, () => {
  it("wrong types for every field", () => fuzz(wrongTypes()));
  it("missing required fields", () => fuzz(missingRequired()));
  it("unknown fields at every closed level", () => fuzz(unknownFields()));
  it("strings and lists beyond their limits", () => fuzz(hugeStrings()));
  it("10k-deep nesting", () => fuzz(deepNesting()));
  it("invalid base64", () => fuzz(badBase64()));
  it("invalid UTF-8 and NUL", () => fuzz(badBytes()));
  it("wrong content types", () => fuzz(contentTypes()));
  it("bodies over the limit", () => fuzz(oversize()));
  it("malformed JSON", () => fuzz(malformedJson()));
  it("bad query strings on GET /goals", () => fuzz(badQueries()));
  it("bad ids on every goal route", () => fuzz(badIds()));
  it("bad Idempotency-Key headers", () => fuzz(badIdempotencyKeys()));
  it("bad webhook URLs", () => fuzz(badWebhooks()));
  it("bad budgets", () => fuzz(badBudgets()));
  it("bad approve bodies", () => fuzz(badApprovals(goalId, otherGoalId)));
  it("bad or missing API keys", () => fuzz(badAuth()));
  it("unknown routes and methods", () => fuzz(unknownRoutes()));

  it("leaves the API healthy: /healthz is 200 and a valid goal is still accepted", async () => {
    expect(sent, "the fuzz must have run").toBeGreaterThanOrEqual(200);
    const health = await loop.request("GET", "/healthz", { key: null });
    expect(health.status).toBe(200);
    const ok = await loop.post(base());
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    const view = await loop.get(ok.body.id as string);
    expect(view.body.state).toBe("plan");
  });
});
