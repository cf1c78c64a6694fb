// issue 25: what Node's HTTP parser refuses before Fastify sees a request (headers too large, headers too
// slow, a malformed request, a NUL in a header, request smuggling) was answered in Fastify's own shape
// ({"error": "Bad Request", "statusCode": 400}). Clients parse one shape: each case below is sent over a
// raw socket to a listening API and must come back as {"error": {"code", "message", "details"}} with
// Connection: close, and the server must close the connection.
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../src/app";
import { clientErrorAnswer } from "../src/client-errors";

let app: Awaited<ReturnType<typeof build>>;
let port: number;
const HEADERS_TIMEOUT_MS = 300;

beforeAll(async () => {
  const up = async () => "up";
  app = await build({ logger: false, headersTimeoutMs: HEADERS_TIMEOUT_MS, readiness: { postgres: up, redis: up, docker: up, sandbox_image: up } });
  await app.listen({ port: 0, host: "127.0.0.1" });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `bytes` (in parts, `pauseMs` apart, when given several) and reads until the server closes. */
function exchange(parts: (string | Buffer)[], pauseMs = 0): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP status in ${JSON.stringify(text.slice(0, 200))}`));
      const head = text.slice(0, text.indexOf("\r\n\r\n"));
      const headers = Object.fromEntries(
        head
          .split("\r\n")
          .slice(1)
          .map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
      );
      resolve({ status: Number(m[1]), headers, body: text.slice(head.length + 4) });
    });
    let i = 0;
    const next = () => {
      if (i >= parts.length || socket.destroyed) return;
      socket.write(parts[i++]!);
      if (i < parts.length) setTimeout(next, pauseMs);
    };
    socket.on("connect", next);
  });
}

const expectCatalogue = (a: Answer, status: number, code: string) => {
  expect({ status: a.status, connection: a.headers.connection, type: a.headers["content-type"] }).toEqual({ status, connection: "close", type: "application/json; charset=utf-8" });
  const body = JSON.parse(a.body) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "details", "message"]);
  expect(Number(a.headers["content-length"])).toBe(Buffer.byteLength(a.body));
  return body.error;
};

describe("Node-level refusals answer in the catalogue's shape (issue 25)", () => {
  it("431 LS_ERR_HEADERS_TOO_LARGE: headers over Node's 16 KiB", async () => {
    const a = await exchange([`GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`]);
    expectCatalogue(a, 431, "LS_ERR_HEADERS_TOO_LARGE");
  });

  it("408 LS_ERR_HEADERS_TIMEOUT: headers still arriving after headersTimeout", async () => {
    // A header line now and then, never the blank line that ends them.
    const parts = ["GET /healthz HTTP/1.1\r\nhost: x\r\n", ...Array.from({ length: 40 }, (_, i) => `x-slow-${i}: 1\r\n`)];
    const a = await exchange(parts, HEADERS_TIMEOUT_MS / 4);
    expectCatalogue(a, 408, "LS_ERR_HEADERS_TIMEOUT");
  });

  it.each([
    ["a NUL in a header value", Buffer.from("GET /healthz HTTP/1.1\r\nhost: x\r\nx-a: a\u0000b\r\n\r\n", "latin1")],
    ["both Content-Length and Transfer-Encoding (smuggling)", "POST /goals HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"],
    ["two different Content-Lengths", "POST /goals HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab"],
    ["a malformed request line", "GET /healthz HTTP/9.Z\r\nhost: x\r\n\r\n"],
    ["a space before a header's colon", "GET /healthz HTTP/1.1\r\nhost : x\r\n\r\n"],
    ["a bad chunk size", "POST /goals HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ncontent-type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"],
  ])("400 LS_ERR_MALFORMED_REQUEST: %s", async (_, bytes) => {
    const error = expectCatalogue(await exchange([bytes]), 400, "LS_ERR_MALFORMED_REQUEST");
    expect(error.message).toMatch(/^The request is not valid HTTP\/1\.1/);
  });

  it("a valid request on the same server still gets its normal answer", async () => {
    const a = await exchange(["GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"]);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body)).toEqual({ status: "ok" });
  });
});

describe("clientErrorAnswer", () => {
  it("answers nobody on a reset connection, and never echoes a parser message it does not recognise", () => {
    expect(clientErrorAnswer({ code: "ECONNRESET" })).toBeUndefined();
    expect(clientErrorAnswer({ code: "HPE_INVALID_HEADER_TOKEN", message: "Parse Error: Invalid header value char" })?.message).toBe(
      "The request is not valid HTTP/1.1: Invalid header value char.",
    );
    const odd = clientErrorAnswer({ code: "HPE_X", message: 'Parse Error: <script>"' + "x".repeat(500) });
    expect(odd?.message).toBe("The request is not valid HTTP/1.1.");
    expect(odd?.details).toEqual({ parser_code: "HPE_X" });
  });
});
