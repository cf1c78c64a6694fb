import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_RESPONSE_BYTES, postPinned } from "../src/index";
import { startReceiver, waitFor } from "./support";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function listen(srv: http.Server | https.Server): Promise<number> {
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  );
  return (srv.address() as AddressInfo).port;
}

const post = (url: string, extra: Partial<Parameters<typeof postPinned>[0]> = {}) =>
  postPinned({ url, address: "127.0.0.1", family: 4, headers: { "webhook-id": "msg_1" }, body: '{"a":1}', timeoutMs: 3000, ...extra });

describe("postPinned: one HTTP attempt", () => {
  it("connects to the pinned address whatever the host name, and sends Host, content-type and user-agent", async () => {
    const r = await startReceiver([200]);
    closers.push(r.close);
    // hooks.invalid cannot resolve: the only way to reach the receiver is the pinned address.
    const res = await post(`http://hooks.invalid:${r.port}/in?x=1`);
    expect(res).toMatchObject({ statusCode: 200, error: null });
    expect(r.received).toHaveLength(1);
    expect(r.received[0]).toMatchObject({
      method: "POST",
      url: "/in?x=1",
      body: '{"a":1}',
      headers: { host: `hooks.invalid:${r.port}`, "content-type": "application/json", "user-agent": "LoopSmith-Webhooks/1", "webhook-id": "msg_1" },
    });
  });

  it("does not follow redirects: a 302 is a failed attempt", async () => {
    const hits: string[] = [];
    const srv = http.createServer((req, res) => {
      hits.push(req.url ?? "");
      req.resume();
      req.on("end", () => res.writeHead(302, { location: "/elsewhere" }).end());
    });
    const port = await listen(srv);
    expect(await post(`http://127.0.0.1:${port}/hook`)).toMatchObject({ statusCode: 302, error: "HTTP 302" });
    expect(hits).toEqual(["/hook"]);
  });

  it("gives up after the timeout with no status", async () => {
    const srv = http.createServer(() => {
      /* never answers */
    });
    const port = await listen(srv);
    const res = await post(`http://127.0.0.1:${port}/hook`, { timeoutMs: 200 });
    expect(res).toMatchObject({ statusCode: null, error: "timed out after 200 ms" });
    expect(res.latencyMs).toBeGreaterThanOrEqual(190);
    expect(res.latencyMs).toBeLessThan(2000);
  });

  it("reads at most 64 KiB of an endless answer, then hangs up", async () => {
    let sent = 0;
    let hungUp = false;
    const srv = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200);
      res.on("close", () => (hungUp = true));
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      const pump = () => {
        let more = true;
        while (!res.destroyed && more) {
          more = res.write(chunk);
          sent += chunk.length;
        }
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    const port = await listen(srv);
    const res = await post(`http://127.0.0.1:${port}/hook`, { timeoutMs: 10_000 });
    expect(res).toMatchObject({ statusCode: 200, error: null });
    // Well before the deadline: the answer was cut, not read to the end.
    expect(res.latencyMs).toBeLessThan(5000);
    expect(sent).toBeGreaterThan(MAX_RESPONSE_BYTES);
    await waitFor("the client to hang up", async () => hungUp, 3000);
  });

  it("reports a refused connection", async () => {
    const srv = http.createServer();
    const port = await listen(srv);
    await new Promise<void>((r) => srv.close(() => r()));
    const res = await post(`http://127.0.0.1:${port}/hook`);
    expect(res.statusCode).toBeNull();
    expect(res.error).toMatch(/ECONNREFUSED/);
  });

  it("over https: sends the URL's host as SNI and still verifies the certificate", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ls-tls-"));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    // prettier-ignore
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-subj", "/CN=hooks.test", "-addext", "subjectAltName=DNS:hooks.test",
      "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    const creds = { key: readFileSync(path.join(dir, "key.pem")), cert: readFileSync(path.join(dir, "cert.pem")) };
    const sni: string[] = [];
    let requests = 0;
    const srv = https.createServer(
      {
        ...creds,
        SNICallback: (servername, cb) => {
          sni.push(servername);
          cb(null, tls.createSecureContext(creds));
        },
      },
      (_req, res) => {
        requests++;
        res.end();
      },
    );
    srv.on("tlsClientError", () => undefined);
    const port = await listen(srv);
    const res = await post(`https://hooks.test:${port}/hook`);
    expect(sni).toEqual(["hooks.test"]);
    // Self-signed: refused, which shows certificate verification is on.
    expect(res.statusCode).toBeNull();
    expect(res.error).toMatch(/self-signed certificate|DEPTH_ZERO_SELF_SIGNED_CERT/);
    expect(requests).toBe(0);
  });
});
