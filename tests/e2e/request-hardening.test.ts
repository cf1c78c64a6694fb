// Requests an attacker (or a broken client) sends: what they get back, and that they cost the API little.
// Lone surrogates and duplicate keys, a body that never finishes arriving, large bodies, keys that are
// wrong in interesting ways, a model name the operator never priced.
import { connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGoal } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";
import { apiConfigSchema } from "../../apps/api/src/config";

type ErrorBody = { error: { code: string; message: string; details: { path: string; message: string }[] | null } };
const ADMIN = "admin-key-for-tests-0123456789abcdef";

let loop: Loop;
let base: { host: string; port: number };
let models: Loop;

beforeAll(async () => {
  loop = await startLoop({ runner: false, bodyTimeoutMs: 800, largeBodyConcurrency: 1, env: { ADMIN_API_KEY: ADMIN } });
  await loop.app.listen({ host: "127.0.0.1", port: 0 });
  base = { host: "127.0.0.1", port: (loop.app.server.address() as AddressInfo).port };
  models = await startLoop({
    runner: false,
    env: { OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_COMPATIBLE_MODEL: "local-coder-7b", ANTHROPIC_API_KEY: "sk-test" },
  });
});
afterAll(async () => {
  await loop?.close();
  await models?.close();
});

/** Posts raw JSON text (so that it can hold what JSON.stringify would never write). */
async function postText(l: Loop, text: string) {
  const res = await l.app.inject({
    method: "POST",
    url: "/goals",
    headers: { "content-type": "application/json", authorization: `Bearer ${l.tenant.api_key}` },
    payload: text,
  });
  return { status: res.statusCode, body: res.json() as ErrorBody };
}

const goalCount = (l: Loop) => l.prisma.goal.count({ where: { tenantId: l.tenant.tenant_id } });

/**
 * A raw HTTP exchange: headers now, the body as `send` decides. Resolves when the server closes the
 * connection (or after 5 s) with the response text, how long after the headers it started (ms), and
 * whether the server closed.
 */
function rawRequest(headers: string, send?: (s: Socket) => void, at: { host: string; port: number; waitMs?: number } = base) {
  const started = Date.now();
  const socket = connect(at.port, at.host);
  let text = "";
  let firstByte: number | undefined;
  socket.on("data", (d) => {
    firstByte ??= Date.now() - started;
    text += d.toString();
  });
  socket.write(headers);
  send?.(socket);
  return new Promise<{ text: string; ms: number; closed: boolean }>((resolve) => {
    const done = (closed: boolean) => resolve({ text, ms: firstByte ?? Date.now() - started, closed });
    socket.on("close", () => done(true));
    socket.on("error", () => undefined);
    setTimeout(() => {
      done(false);
      socket.destroy();
    }, at.waitMs ?? 5000);
  });
}

describe("JSON that JSON.parse accepts but a store must not", () => {
  it("refuses a lone surrogate with 400 and its path: in a check param (was a 500), the objective (was replaced by U+FFFD) and a key", async () => {
    const before = await goalCount(loop);
    const goal = JSON.stringify(demoGoal({ checks: [{ id: "json_assert", params: { path: "/x", op: "eq", value: "PLACEHOLDER" } }] }));
    const cases = [
      [goal.replace('"PLACEHOLDER"', '"a\\ud800b"'), "body.checks.0.params.value"],
      [JSON.stringify(demoGoal({ objective: "OBJ" })).replace('"OBJ"', '"sum \\udc00 the sales"'), "body.objective"],
      [goal.replace('"value":', '"\\ud83d":1,"value":'), "body.checks.0.params.\ufffd"],
    ] as const;
    for (const [text, path] of cases) {
      const res = await postText(loop, text);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe("LS_ERR_VALIDATION");
      expect(res.body.error.details?.[0]?.path).toBe(path);
      expect(res.body.error.details?.[0]?.message).toMatch(/lone UTF-16 surrogate/);
    }
    // A well-formed pair, escaped or not, is a character like any other.
    const pair = await postText(loop, JSON.stringify(demoGoal({ objective: "OBJ" })).replace('"OBJ"', '"sum the sales \\ud83d\\ude00 😀"'));
    expect(pair.status, JSON.stringify(pair.body)).toBe(202);
    expect(await goalCount(loop)).toBe(before + 1);
  });

  it("refuses a key that appears twice in one object, with its path, at any depth", async () => {
    const before = await goalCount(loop);
    const goal = JSON.stringify(demoGoal({ max_attempts: 2 }));
    const cases = [
      [goal.replace('"max_attempts":2', '"max_attempts":2,"max_attempts":5'), "body.max_attempts"],
      [goal.replace('"objective":', '"objective":"first","objective":'), "body.objective"],
      // The same key spelled with an escape is the same key.
      [goal.replace('"max_attempts":2', '"max_attempts":2,"max_\\u0061ttempts":5'), "body.max_attempts"],
      [goal.replace('"name":"sales.csv"', '"name":"sales.csv","name":"other.csv"'), "body.inputs.0.name"],
    ] as const;
    for (const [text, path] of cases) {
      const res = await postText(loop, text);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details?.[0]?.path).toBe(path);
      expect(res.body.error.details?.[0]?.message).toMatch(/appears more than once/);
    }
    // The same key in two different objects, and key-like text inside strings, are fine.
    const fine = JSON.stringify(demoGoal({ objective: 'say "max_attempts": 1, {"a":1,"a":2} \\ quoted', inputs: [{ name: "a.csv", text: "x" }, { name: "b.csv", text: "y" }] }));
    const ok = await postText(loop, fine);
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    expect(await goalCount(loop)).toBe(before + 1);
  });

  it("an Idempotency-Key retry with a duplicated key is refused, not matched against the merged body", async () => {
    const key = `dup-${Date.now()}`;
    const text = JSON.stringify(demoGoal({ max_attempts: 2 }));
    const first = await loop.app.inject({
      method: "POST",
      url: "/goals",
      headers: { "content-type": "application/json", authorization: `Bearer ${loop.tenant.api_key}`, "idempotency-key": key },
      payload: text,
    });
    expect(first.statusCode).toBe(202);
    const sneaky = await loop.app.inject({
      method: "POST",
      url: "/goals",
      headers: { "content-type": "application/json", authorization: `Bearer ${loop.tenant.api_key}`, "idempotency-key": key },
      payload: text.replace('"max_attempts":2', '"max_attempts":50,"max_attempts":2'),
    });
    expect(sneaky.statusCode).toBe(400);
    expect(sneaky.headers["idempotent-replayed"]).toBeUndefined();
  });
});

describe("bodies on the wire", () => {
  it("a body that trickles in is cut off with 408 LS_ERR_BODY_TIMEOUT and a closed connection", async () => {
    const before = await goalCount(loop);
    const body = JSON.stringify(demoGoal());
    let timer: NodeJS.Timeout | undefined;
    const res = await rawRequest(
      `POST /goals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${loop.tenant.api_key}\r\nContent-Length: ${body.length}\r\n\r\n`,
      (s) => {
        let i = 0;
        timer = setInterval(() => !s.destroyed && s.write(body[i++] ?? ""), 50);
      },
    );
    clearInterval(timer);
    expect(res.text).toMatch(/^HTTP\/1\.1 408/);
    expect(res.text).toContain("LS_ERR_BODY_TIMEOUT");
    expect(res.closed).toBe(true);
    expect(res.ms).toBeGreaterThanOrEqual(700);
    expect(res.ms).toBeLessThan(4000);
    expect(await goalCount(loop)).toBe(before);
  });

  it("a body refused mid-stream, its sender holding the connection open, leaves no timer to throw later (issue 28)", async () => {
    // A body deadline that fires after the answer (a 400 from the scan here, the rest of the body unread)
    // must not destroy the guarded stream with an error nobody listens to any more: that is an uncaught
    // exception, which ends an API process. (Seen once in a full run, from a 30 s deadline; not yet
    // reproduced alone, so this holds the one path found.)
    const thrown: unknown[] = [];
    const onUncaught = (e: unknown) => thrown.push(e);
    process.on("uncaughtException", onUncaught);
    try {
      // Refused by the scan in its first bytes, with far more than a stream buffers still to come.
      const text = `{"objective":"x","checks":${"[".repeat(100)}${" ".repeat(512 * 1024)}${"]".repeat(100)}}`;
      const res = await postText(loop, text);
      expect(res.status).toBe(400);
      // Past the 800 ms body deadline.
      await new Promise((r) => setTimeout(r, 1500));
      expect(thrown.map(String)).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("a request without a valid key is answered before its body is read: tenant and admin routes alike", async () => {
    const headers = (url: string, auth: string) =>
      `POST ${url} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${auth}Content-Length: ${10 * 1024 * 1024}\r\n\r\n`;
    // Not one byte of the promised 10 MB is ever sent: an answer can only come from the headers.
    const noKey = await rawRequest(headers("/goals", ""));
    expect(noKey.text).toMatch(/^HTTP\/1\.1 401/);
    expect(noKey.ms).toBeLessThan(2000);
    expect(noKey.closed).toBe(true);
    const wrongAdmin = await rawRequest(headers("/admin/dead-letters/00000000-0000-0000-0000-000000000000/retry", "Authorization: Bearer not-the-admin-key\r\n"));
    expect(wrongAdmin.text).toMatch(/^HTTP\/1\.1 403/);
    expect(wrongAdmin.ms).toBeLessThan(2000);
    expect(wrongAdmin.closed).toBe(true);
  });

  it("large bodies take turns (one slot here); small ones do not wait for them", async () => {
    // Its own API with a 3 s body deadline: the small submit must be answered while the holder still holds
    // the slot, and beside a loaded suite a submit took longer than the shared loop's 800 ms.
    const turns = await startLoop({ runner: false, bodyTimeoutMs: 3000, largeBodyConcurrency: 1 });
    try {
      await takeTurns(turns);
    } finally {
      await turns.close();
    }
  });
});

/** The turn-taking scenario against `loop`'s own listener (see the test). */
async function takeTurns(loop: Loop) {
  await loop.app.listen({ host: "127.0.0.1", port: 0 });
  const at = { host: "127.0.0.1", port: (loop.app.server.address() as AddressInfo).port, waitMs: 20_000 };
  const big = JSON.stringify(demoGoal({ inputs: [{ name: "big.csv", text: "a,b\n".repeat(300_000) }] }));
  const head = (len: number) =>
    `POST /goals HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${loop.tenant.api_key}\r\nContent-Length: ${len}\r\nConnection: close\r\n\r\n`;
  // The first holds the only large-body slot by sending half its body and stalling until its deadline.
  const holderStart = Date.now();
  const holder = rawRequest(head(big.length), (s) => s.write(big.slice(0, big.length / 2)), at);
  await new Promise((r) => setTimeout(r, 150));
  const small = JSON.stringify(demoGoal());
  const smallStart = Date.now();
  const [second, smallRes] = await Promise.all([
    rawRequest(head(big.length), (s) => s.write(big), at),
    rawRequest(head(small.length), (s) => s.write(small), at),
  ]);
  expect(smallRes.text).toMatch(/^HTTP\/1\.1 202/);
  const held = await holder;
  expect(held.text).toMatch(/^HTTP\/1\.1 408/);
  // The small body did not wait for the slot: it was answered before the holder's deadline freed it (an
  // order, not a time: a bound in ms failed on a loaded machine).
  expect(smallStart + smallRes.ms).toBeLessThan(holderStart + held.ms);
  // The second large body was only read once the slot was free: after the holder's 3 s deadline.
  expect(second.text).toMatch(/^HTTP\/1\.1 202/);
  expect(second.ms).toBeGreaterThanOrEqual(2000);
}

describe("keys", () => {
  it("a non-ASCII admin key of the admin key's length is a 403, not a 500", async () => {
    for (const key of ["é".repeat(ADMIN.length), "x".repeat(ADMIN.length), "ключ".repeat(3), `${ADMIN}x`]) {
      const res = await loop.request("GET", "/admin/dead-letters", { key });
      expect(res.status, key).toBe(403);
      expect((res.body as unknown as ErrorBody).error.code).toBe("LS_ERR_FORBIDDEN");
    }
    expect((await loop.request("GET", "/admin/dead-letters", { key: ADMIN })).status).toBe(200);
  });

  it("an address that keeps failing to authenticate is refused with 429 until the window ends, keys valid or not", async () => {
    const limited = await startLoop({ runner: false, env: { ADMIN_API_KEY: ADMIN, AUTH_FAILURES_PER_MINUTE: "3" } });
    try {
      const statuses: number[] = [];
      for (const [url, key] of [["/goals", "lsk_wrong1"], ["/admin/dead-letters", `${ADMIN}0`], ["/goals", "lsk_wrong3"]] as const)
        statuses.push((await limited.request("GET", url, { key })).status);
      expect(statuses).toEqual([401, 403, 401]);
      const refused = await limited.request("GET", "/goals", {});
      expect(refused.status).toBe(429);
      expect((refused.body as unknown as ErrorBody).error.code).toBe("LS_ERR_RATE_LIMITED");
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      // Health stays open to everyone.
      expect((await limited.request("GET", "/healthz", { key: null })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("X-Forwarded-For is not believed unless TRUST_PROXY says so: a spoofed header does not reset the count", async () => {
    const limited = await startLoop({ runner: false, env: { AUTH_FAILURES_PER_MINUTE: "2" } });
    try {
      const statuses: number[] = [];
      for (const ip of ["203.0.113.1", "203.0.113.2", "203.0.113.3"])
        statuses.push((await limited.request("GET", "/goals", { key: "lsk_wrong", headers: { "x-forwarded-for": ip } })).status);
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      await limited.close();
    }
  });

  it("behind a trusted proxy (TRUST_PROXY), each forwarded client address is counted on its own", async () => {
    // app.inject's peer is 127.0.0.1: the proxy.
    const limited = await startLoop({ runner: false, env: { AUTH_FAILURES_PER_MINUTE: "2", TRUST_PROXY: "127.0.0.1/32" } });
    try {
      const as = async (ip: string) => (await limited.request("GET", "/goals", { key: "lsk_wrong", headers: { "x-forwarded-for": ip } })).status;
      expect([await as("203.0.113.1"), await as("203.0.113.1"), await as("203.0.113.1")]).toEqual([401, 401, 429]);
      // Another client behind the same proxy is not the one that kept failing.
      expect(await as("203.0.113.2")).toBe(401);
      // A client cannot pose as another by adding its own X-Forwarded-For: the proxy appends the real one last.
      expect(await as("203.0.113.2, 203.0.113.1")).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it("TRUST_PROXY refuses a value that is neither a flag, a hop count nor addresses", () => {
    const parse = (v: string) => apiConfigSchema.shape.TRUST_PROXY.safeParse(v);
    expect(parse("true").data).toBe(true);
    expect(parse("false").data).toBe(false);
    expect(parse("2").data).toBe(2);
    expect(parse("10.0.0.0/8, ::1").data).toEqual(["10.0.0.0/8", "::1"]);
    for (const bad of ["yes", "10.0.0.0/33", "::1/129", "example.com", "10.0.0.1/8/8"]) expect(parse(bad).success, bad).toBe(false);
  });

  it("admin requests count against the request limit too", async () => {
    const limited = await startLoop({ runner: false, env: { ADMIN_API_KEY: ADMIN, RATE_LIMIT_PER_MINUTE: "2" } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await limited.request("GET", "/admin/dead-letters", { key: ADMIN })).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe("model names", () => {
  it("a model name not on the server's allow-list is a 400 at body.model.model, and nothing is stored", async () => {
    const before = await goalCount(models);
    for (const [provider, model] of [
      ["openai-compatible", "gpt-5-pro-unpriced"],
      ["anthropic", "claude-opus-99"],
      ["anthropic", "gemini-2.5-pro"],
    ] as const) {
      const res = await models.post(demoGoal({ model: { provider, model } }));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const err = (res.body as unknown as ErrorBody).error;
      expect(err.code).toBe("LS_ERR_MODEL_NOT_ALLOWED");
      expect(err.details).toEqual([{ path: "body.model.model", message: err.message }]);
      expect(err.message).toContain(`"${model}"`);
    }
    expect(await goalCount(models)).toBe(before);
    // The configured default and the built-in priced names are accepted.
    for (const model of [{ provider: "openai-compatible", model: "local-coder-7b" }, { provider: "anthropic", model: "claude-haiku-4-5" }, { provider: "anthropic" }]) {
      const res = await models.post(demoGoal({ model }));
      expect(res.status, JSON.stringify(res.body)).toBe(202);
    }
  });
});
