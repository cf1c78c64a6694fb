// What the socket proxy lets through to the Docker engine, as pure functions: the runner's sandbox needs
// a dozen Engine API calls, and the engine's socket grants everything else too (a privileged container
// with / bound in is root on the host). The server (server.ts) does the I/O; everything it decides is here.

/** The label every LoopSmith sandbox container carries (packages/sandbox SANDBOX_LABEL). */
export const SANDBOX_LABEL = "loopsmith.sandbox";
/**
 * The capabilities the sandbox's bootstrap keeps (packages/sandbox BOOTSTRAP_CAPS; a test checks the two
 * agree). It drops them all before the program starts; none of them reaches outside the container.
 */
export const ALLOWED_CAPS: readonly string[] = Object.freeze(["CHOWN", "SETUID", "SETGID", "SETPCAP", "KILL", "DAC_READ_SEARCH"]);
/** Engine API 1.24 moved HostConfig from start to create; older versions still read it from a start body. */
export const MIN_API_VERSION: readonly [number, number] = [1, 24];
export const DEFAULT_IMAGES: readonly string[] = Object.freeze(["loopsmith/sandbox-*"]);
/** The engine runtimes the sandbox uses: runc, and gVisor's runsc. */
export const DEFAULT_RUNTIMES: readonly string[] = Object.freeze(["runc", "runsc"]);
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The most of a dropped body (see Allowed.body) that is read; dockerode's option bodies are a few bytes. */
export const IGNORED_BODY_MAX_BYTES = 64 * 1024;

export interface Policy {
  /** Image references a container may be created from: exact, or a prefix when the entry ends in `*`. */
  images: readonly string[];
  /**
   * Engine runtimes a container may be created under (HostConfig.Runtime, required). An operator who runs
   * every sandbox under gVisor lists only runsc: a runner cannot then step down to runc.
   */
  runtimes: readonly string[];
  /** The largest JSON body (container create) read, in bytes. */
  maxBodyBytes: number;
}

export type Call =
  | "ping"
  | "version"
  | "info"
  | "image inspect"
  | "container create"
  | "container list"
  | "container inspect"
  | "container start"
  | "container attach"
  | "container wait"
  | "container kill"
  | "container remove"
  | "container rename"
  | "events";

export interface Allowed {
  ok: true;
  call: Call;
  /** Container references that must name LoopSmith sandbox containers; target() gets their full ids. */
  containers: string[];
  /** The request line's target for the engine: a canonical path and a re-encoded query. */
  target(ids: readonly string[]): string;
  /**
   * true: the body is JSON to check and forward (container create). false: the engine reads nothing from
   * it (dockerode sends its options as a JSON body as well as in the query), so it is dropped.
   */
  body: boolean;
  /** Whether the connection may be hijacked (`Upgrade: tcp`): attach streams stdin and output over it. */
  upgrade: boolean;
}

/** Error codes of the error catalog (packages/core ERROR_CATALOG) a refusal carries beside the engine-style message. */
export type RefusalCode = "LS_ERR_FORBIDDEN" | "LS_ERR_VALIDATION" | "LS_ERR_PAYLOAD_TOO_LARGE";

export interface Refused {
  ok: false;
  status: number;
  /** Set on the proxy's own refusals; an answer passed on from the engine (404, a 502) has none. */
  code?: RefusalCode;
  message: string;
}

export function refused(what: string, why: string, status = 403): Refused {
  const code: RefusalCode = status === 413 ? "LS_ERR_PAYLOAD_TOO_LARGE" : status === 400 ? "LS_ERR_VALIDATION" : "LS_ERR_FORBIDDEN";
  return { ok: false, status, code, message: `loopsmith socket proxy refused ${what}: ${why}` };
}

/** The engine's error shape, `{"message": ...}`, with the catalog's code beside it on the proxy's own refusals. */
export function refusalBody(r: Refused): string {
  return JSON.stringify(r.code ? { message: r.message, code: r.code } : { message: r.message });
}

// Docker's own grammar for container names (and ids are hex, a subset).
const CONTAINER_REF = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const FULL_ID = /^[0-9a-f]{64}$/;
// repository[:tag] in the lower-case form docker uses; no digest (see imageAllowed).
const IMAGE_NAME = /^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$/;

export function isFullId(ref: string): boolean {
  return FULL_ID.test(ref);
}

/**
 * Exact entries match exactly; `prefix*` entries match names of that prefix only, never a reference with a
 * digest: the engine resolves `any/name@sha256:<image id>` to that image, whatever the name says.
 */
export function imageAllowed(image: string, policy: Pick<Policy, "images">): boolean {
  for (const entry of policy.images) {
    if (entry.endsWith("*")) {
      if (IMAGE_NAME.test(image) && image.startsWith(entry.slice(0, -1))) return true;
    } else if (image === entry) return true;
  }
  return false;
}

/**
 * Decides a request from its method and request target. Paths are refused unless they are plain: no
 * percent-encoding, backslash, empty, `.` or `..` segment (the engine's router cleans and unescapes paths,
 * so a spelling the proxy did not match could reach another handler). The engine is sent a path rebuilt
 * from what was matched and a query rebuilt from what was parsed, never the client's own bytes.
 */
export function routeRequest(method: string, rawUrl: string, policy: Pick<Policy, "images">): Allowed | Refused {
  const q = rawUrl.indexOf("?");
  const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const rawQuery = q < 0 ? "" : rawUrl.slice(q + 1);
  const what = `${method} ${path.length > 200 ? `${path.slice(0, 200)}...` : path}`;
  if (!path.startsWith("/")) return refused(what, "the request target must be a path");
  if (/[%\\]/.test(path)) return refused(what, "percent-encoded or backslashed paths are not accepted");
  const segments = path.slice(1).split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) return refused(what, "empty, . and .. path segments are not accepted");

  let prefix = "";
  const v = /^v(\d+)\.(\d+)$/.exec(segments[0]!);
  if (v) {
    const [major, minor] = [Number(v[1]), Number(v[2])];
    if (major < MIN_API_VERSION[0] || (major === MIN_API_VERSION[0] && minor < MIN_API_VERSION[1])) {
      return refused(what, `Engine API versions below ${MIN_API_VERSION.join(".")} are not accepted`);
    }
    prefix = `/${segments.shift()}`;
  }
  if (segments.length === 0) return refused(what, "not an Engine API call");

  const multi = parseQuery(rawQuery);
  const params = new Map([...multi].map(([k, v]) => [k, v[0]!]));
  // A parameter the call reads must come once: the engine reads the first, the proxy would not know which.
  // Others may repeat (dockerode spells an array option as the key repeated), since they are dropped.
  const allow = (a: Allowed): Allowed | Refused => {
    const twice = QUERY[a.call].find((k) => (multi.get(k)?.length ?? 0) > 1);
    return twice === undefined ? a : refused(what, `the query parameter ${JSON.stringify(twice)} is given twice`, 400);
  };
  // Only the parameters the engine reads for the call go on: dockerode also sends every option (a create's
  // whole body, the bootstrap's source included) as a query parameter, which the engine ignores.
  const qs = (p: Map<string, string>, call: Call) => {
    const s = new URLSearchParams([...p].filter(([k]) => QUERY[call].includes(k))).toString();
    return s ? `?${s}` : "";
  };
  const fixed = (call: Call, opts: { body?: boolean } = {}): Allowed | Refused =>
    allow({
      ok: true,
      call,
      containers: [],
      target: () => `${prefix}/${segments.join("/")}${qs(params, call)}`,
      body: opts.body ?? false,
      upgrade: false,
    });
  const [head, second, third] = segments;

  if (segments.length === 1 && head === "_ping" && (method === "GET" || method === "HEAD")) return fixed("ping");
  if (segments.length === 1 && head === "version" && method === "GET") return fixed("version");
  // The runner asks which runtimes the engine offers (SANDBOX_RUNTIME=auto).
  if (segments.length === 1 && head === "info" && method === "GET") return fixed("info");

  if (head === "images" && segments.length >= 3 && segments.at(-1) === "json" && method === "GET") {
    const image = segments.slice(1, -1).join("/");
    if (!imageAllowed(image, policy)) return refused(`image inspect of ${JSON.stringify(image)}`, "not a sandbox image (SOCKET_PROXY_IMAGES)");
    return fixed("image inspect");
  }

  if (head === "containers" && segments.length === 2 && second === "create" && method === "POST") return fixed("container create", { body: true });

  if (head === "containers" && segments.length === 2 && second === "json" && method === "GET") {
    const filters = parseFilters(params.get("filters"));
    if (typeof filters === "string") return refused("container list", filters, 400);
    if (!filterValues(filters.label).includes(`${SANDBOX_LABEL}=1`)) {
      return refused("container list", `only LoopSmith's containers may be listed: filter by the label ${SANDBOX_LABEL}=1`);
    }
    params.set("filters", JSON.stringify(filters));
    return fixed("container list");
  }

  if (head === "containers" && second !== undefined && segments.length <= 3) {
    const op = segments.length === 2 ? (method === "DELETE" ? "remove" : undefined) : CONTAINER_OPS.get(`${method} ${third}`);
    if (op) {
      if (!CONTAINER_REF.test(second)) return refused(`container ${op}`, "not a container id or name");
      return allow({
        ok: true,
        call: `container ${op}` as Call,
        containers: [second],
        target: (ids) => `${prefix}/containers/${ids[0]}${third === undefined ? "" : `/${third}`}${qs(params, `container ${op}` as Call)}`,
        body: false,
        upgrade: op === "attach",
      });
    }
  }

  if (segments.length === 1 && head === "events" && method === "GET") {
    const filters = parseFilters(params.get("filters"));
    if (typeof filters === "string") return refused("events", filters, 400);
    const refs = filterValues(filters.container);
    if (refs.length === 0) return refused("events", "only the events of LoopSmith's containers may be read: filter by container");
    const bad = refs.find((r) => !CONTAINER_REF.test(r));
    if (bad !== undefined) return refused("events", `${JSON.stringify(bad)} is not a container id or name`);
    if (filters.type !== undefined && filterValues(filters.type).some((t) => t !== "container")) return refused("events", "only container events may be read");
    return allow({
      ok: true,
      call: "events",
      containers: refs,
      // The engine matches the container filter as a prefix of ids and names: only full ids go through.
      target: (ids) => {
        const p = new Map(params);
        p.set("filters", JSON.stringify({ ...filters, type: ["container"], container: [...ids] }));
        return `${prefix}/events${qs(p, "events")}`;
      },
      body: false,
      upgrade: false,
    });
  }

  return refused(what, "LoopSmith's runner does not make this Engine API call");
}

const QUERY: Record<Call, readonly string[]> = {
  ping: [],
  version: [],
  info: [],
  "image inspect": [],
  "container create": ["name", "platform"],
  "container list": ["all", "limit", "size", "filters"],
  "container inspect": ["size"],
  "container start": [],
  "container attach": ["stream", "stdin", "stdout", "stderr", "logs", "detachKeys"],
  "container wait": ["condition"],
  "container kill": ["signal"],
  "container remove": ["force", "v"],
  "container rename": ["name"],
  events: ["since", "until", "filters"],
};

const CONTAINER_OPS = new Map([
  ["GET json", "inspect"],
  ["POST start", "start"],
  ["POST attach", "attach"],
  ["POST wait", "wait"],
  ["POST kill", "kill"],
  ["POST rename", "rename"],
]);

function parseQuery(raw: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(raw)) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

type Filters = Record<string, unknown>;

function parseFilters(raw: string | undefined): Filters | string {
  if (raw === undefined || raw === "") return {};
  try {
    const f = JSON.parse(raw) as unknown;
    if (f === null || typeof f !== "object" || Array.isArray(f)) return "filters must be a JSON object";
    return f as Filters;
  } catch {
    return "filters is not valid JSON";
  }
}

/** A filter's values, in either of the engine's forms: `["a", "b"]` or `{"a": true, "b": true}`. */
function filterValues(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === "string");
  if (v !== null && typeof v === "object") return Object.entries(v).filter(([, on]) => on === true).map(([k]) => k);
  return [];
}

// ------------------------------------------------------------------------------------- container create

type Json = Record<string, unknown>;
type Rule = (value: unknown, where: string) => string | undefined;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const unset = (v: unknown) => v === undefined || v === null;

const bool: Rule = (v, w) => (unset(v) || typeof v === "boolean" ? undefined : `${w} must be a boolean`);
const str: Rule = (v, w) => (unset(v) || typeof v === "string" ? undefined : `${w} must be a string`);
const num: Rule = (v, w) => (unset(v) || (typeof v === "number" && Number.isFinite(v)) ? undefined : `${w} must be a number`);
const positive: Rule = (v, w) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? undefined : `${w} must be set, above 0`);
const strings: Rule = (v, w) => (unset(v) || (Array.isArray(v) && v.every((x) => typeof x === "string")) ? undefined : `${w} must be a list of strings`);
const argv: Rule = (v, w) => (typeof v === "string" ? undefined : strings(v, w));
const stringMap: Rule = (v, w) => (unset(v) || (isObject(v) && Object.values(v).every((x) => typeof x === "string")) ? undefined : `${w} must map strings to strings`);
const empty: Rule = (v, w) => (unset(v) || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0) ? undefined : `${w} is not allowed`);
const oneOf =
  (...allowed: string[]): Rule =>
  (v, w) =>
    unset(v) || (typeof v === "string" && allowed.includes(v)) ? undefined : `${w} must be ${allowed.map((a) => JSON.stringify(a)).join(" or ")}`;
/**
 * An object whose keys are all listed with a rule. The engine decodes JSON with Go, which matches field
 * names case-insensitively (and folds `ſ` to `s`): a key spelt any other way than listed would reach the
 * engine as the field it folds to, so an unlisted key may only be null (which Go ignores).
 */
const shape =
  (rules: Record<string, Rule>): Rule =>
  (v, w) => {
    if (unset(v)) return undefined;
    if (!isObject(v)) return `${w} must be an object`;
    for (const [k, val] of Object.entries(v)) {
      const rule = Object.hasOwn(rules, k) ? rules[k] : undefined;
      const why = rule ? rule(val, `${w}.${k}`) : val === null ? undefined : `${w}.${k} is not allowed`;
      if (why) return why;
    }
    for (const [k, rule] of Object.entries(rules)) if (!Object.hasOwn(v, k)) {
      const why = rule(undefined, `${w}.${k}`);
      if (why) return why;
    }
    return undefined;
  };

const list =
  (rule: Rule): Rule =>
  (v, w) => {
    if (unset(v)) return undefined;
    if (!Array.isArray(v)) return `${w} must be a list`;
    for (const [i, x] of v.entries()) {
      const why = rule(x, `${w}[${i}]`);
      if (why) return why;
    }
    return undefined;
  };

const capName = (c: string) => c.toUpperCase().replace(/^CAP_/, "");
const capAdd: Rule = (v, w) => {
  const why = strings(v, w);
  if (why || unset(v)) return why;
  const extra = (v as string[]).filter((c) => !ALLOWED_CAPS.includes(capName(c)));
  return extra.length ? `${w} may only hold ${ALLOWED_CAPS.join(", ")} (the sandbox bootstrap's), not ${extra.join(", ")}` : undefined;
};
const NO_NEW_PRIVILEGES = /^no-new-privileges([:=]true)?$/;
const securityOpt: Rule = (v, w) => {
  const why = strings(v, w);
  if (why) return why;
  const opts = (v ?? []) as string[];
  const unconfined = opts.find((o) => /unconfined/i.test(o));
  if (unconfined !== undefined) return `${w} must not hold ${JSON.stringify(unconfined)}`;
  const other = opts.find((o) => !NO_NEW_PRIVILEGES.test(o));
  if (other !== undefined) return `${w} may only hold no-new-privileges, not ${JSON.stringify(other)}`;
  return opts.length > 0 ? undefined : `${w} must hold no-new-privileges`;
};
const notTrue: Rule = (v, w) => (unset(v) || v === false ? undefined : `${w} must not be true`);
const required =
  (rule: Rule): Rule =>
  (v, w) =>
    v === undefined || v === null ? `${w} is required` : rule(v, w);
const noHostNamespace: Rule = (v, w) => (unset(v) || v === "" ? undefined : `${w} must not be set (${JSON.stringify(v)} joins a namespace outside the sandbox)`);

const tmpfsMount = shape({
  Type: required((v, w) => (v === "tmpfs" ? undefined : `${w} must be "tmpfs" (bind and volume mounts are not allowed)`)),
  Target: required(str),
  ReadOnly: bool,
  TmpfsOptions: shape({ SizeBytes: num, Mode: num }),
});

const HOST_CONFIG = shape({
  // Checked against SOCKET_PROXY_RUNTIMES by checkCreateBody.
  Runtime: required(str),
  NetworkMode: (v, w) => (v === "none" ? undefined : `${w} must be "none"`),
  Privileged: notTrue,
  Binds: empty,
  Mounts: list(tmpfsMount),
  Devices: empty,
  DeviceCgroupRules: empty,
  DeviceRequests: empty,
  VolumesFrom: empty,
  CapAdd: capAdd,
  CapDrop: strings,
  SecurityOpt: securityOpt,
  PidMode: noHostNamespace,
  UTSMode: noHostNamespace,
  UsernsMode: noHostNamespace,
  IpcMode: oneOf("", "private", "none"),
  CgroupnsMode: oneOf("", "private"),
  ReadonlyRootfs: bool,
  Tmpfs: stringMap,
  PidsLimit: positive,
  Memory: positive,
  MemorySwap: num,
  NanoCpus: num,
  ShmSize: num,
  Ulimits: list(shape({ Name: required(str), Soft: num, Hard: num })),
  Init: bool,
  AutoRemove: bool,
  // A logging driver ships output off the host (syslog, gelf, fluentd over the network) or onto its disk.
  LogConfig: shape({ Type: oneOf("", "none"), Config: empty }),
});

const CREATE_BODY = shape({
  // dockerode sends its whole options object as the body, the query's name included; the engine reads
  // the name from the query and no config field is called that.
  name: str,
  Image: required(str),
  Entrypoint: argv,
  Cmd: argv,
  User: str,
  WorkingDir: str,
  Env: strings,
  Labels: stringMap,
  AttachStdin: bool,
  AttachStdout: bool,
  AttachStderr: bool,
  OpenStdin: bool,
  StdinOnce: bool,
  Tty: bool,
  NetworkDisabled: bool,
  HostConfig: required(HOST_CONFIG),
});

/**
 * Why a container create body is not a LoopSmith sandbox, or undefined when it is. Every field is listed
 * with what it may hold (what packages/sandbox sends); anything else is refused, so a field the engine adds
 * later is refused until someone decides it is safe.
 */
export function checkCreateBody(body: unknown, policy: Pick<Policy, "images" | "runtimes">): string | undefined {
  if (!isObject(body)) return "the body must be a JSON object";
  const why = CREATE_BODY(body, "body");
  if (why) return why;
  const image = body.Image as string;
  if (!imageAllowed(image, policy)) return `body.Image ${JSON.stringify(image)} is not a sandbox image (SOCKET_PROXY_IMAGES)`;
  const runtime = (body.HostConfig as { Runtime: string }).Runtime;
  if (!policy.runtimes.includes(runtime)) return `body.HostConfig.Runtime ${JSON.stringify(runtime)} is not allowed (SOCKET_PROXY_RUNTIMES: ${policy.runtimes.join(", ")})`;
  const labels = (body.Labels ?? {}) as Record<string, string>;
  if (labels[SANDBOX_LABEL] !== "1") return `body.Labels must hold ${SANDBOX_LABEL}=1`;
  return undefined;
}

/** What GET /info answers through the proxy: the engine's runtimes by name, and its default. */
export function engineInfoShown(info: unknown): { Runtimes: Record<string, object>; DefaultRuntime: string | null } {
  const i = isObject(info) ? info : {};
  const runtimes = isObject(i.Runtimes) ? Object.keys(i.Runtimes) : [];
  return { Runtimes: Object.fromEntries(runtimes.map((r) => [r, {}])), DefaultRuntime: typeof i.DefaultRuntime === "string" ? i.DefaultRuntime : null };
}

/** Whether an inspected container (GET /containers/{id}/json) is a LoopSmith sandbox container. */
export function isSandboxContainer(inspect: unknown): boolean {
  if (!isObject(inspect) || !isObject(inspect.Config)) return false;
  const labels = inspect.Config.Labels;
  return isObject(labels) && labels[SANDBOX_LABEL] === "1";
}

export interface ProxyConfig {
  host: string;
  port: number;
  socketPath: string;
  policy: Policy;
}

/** Every variable loadProxyConfig reads (tests/compose.test.ts checks compose gives it nothing else). */
export const PROXY_ENV_VARS: readonly string[] = Object.freeze([
  "SOCKET_PROXY_HOST",
  "SOCKET_PROXY_PORT",
  "DOCKER_SOCKET",
  "SOCKET_PROXY_IMAGES",
  "SOCKET_PROXY_RUNTIMES",
  "SOCKET_PROXY_MAX_BODY_BYTES",
]);

/** The proxy's settings from its environment, read once at start-up. */
export function loadProxyConfig(env: Record<string, string | undefined>): Readonly<ProxyConfig> {
  const get = (k: (typeof PROXY_ENV_VARS)[number]) => {
    if (!PROXY_ENV_VARS.includes(k)) throw new Error(`${k} is not listed in PROXY_ENV_VARS`);
    return env[k] === undefined || env[k] === "" ? undefined : env[k];
  };
  const port = Number(get("SOCKET_PROXY_PORT") ?? 2375);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`SOCKET_PROXY_PORT must be a port number, got ${JSON.stringify(get("SOCKET_PROXY_PORT"))}`);
  const maxBodyBytes = Number(get("SOCKET_PROXY_MAX_BODY_BYTES") ?? DEFAULT_MAX_BODY_BYTES);
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new Error("SOCKET_PROXY_MAX_BODY_BYTES must be a positive integer");
  const images = (get("SOCKET_PROXY_IMAGES") ?? DEFAULT_IMAGES.join(","))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (images.length === 0) throw new Error("SOCKET_PROXY_IMAGES names no image");
  if (images.some((i) => i === "*")) throw new Error("SOCKET_PROXY_IMAGES: a bare * would allow every image");
  const runtimes = (get("SOCKET_PROXY_RUNTIMES") ?? DEFAULT_RUNTIMES.join(","))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (runtimes.length === 0) throw new Error("SOCKET_PROXY_RUNTIMES names no runtime");
  return Object.freeze({
    host: get("SOCKET_PROXY_HOST") ?? "127.0.0.1",
    port,
    socketPath: (get("DOCKER_SOCKET") ?? "/var/run/docker.sock").replace(/^unix:\/\//, ""),
    policy: Object.freeze({ images: Object.freeze(images), runtimes: Object.freeze(runtimes), maxBodyBytes }),
  });
}
