// The console's files as the API serves them: public, under a strict Content-Security-Policy, cached by
// content hash, nothing outside the build reachable, and a clear 503 where the console was not built.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../src/app";
import { CONSOLE_DIR } from "../src/console";

type App = Awaited<ReturnType<typeof build>>;
const readiness = { postgres: async () => "", redis: async () => "", docker: async () => "", sandbox_image: async () => "" };
let app: App;
beforeAll(async () => {
  // The suite's global setup builds the console (scripts/build.ts buildConsole).
  app = await build({ readiness, logger: false });
});
afterAll(async () => {
  await app?.close();
});

describe("the console's files", () => {
  it("serves the page without a key, under a CSP that allows only its own scripts and origin", async () => {
    const redirect = await app.inject({ url: "/console" });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe("/console/");
    const page = await app.inject({ url: "/console/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect(page.headers["cache-control"]).toBe("no-cache");
    // No inline script: every <script> has a src under /console/.
    const scripts = [...page.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/console\/assets\//);
      expect(body!.trim()).toBe("");
    }
  });

  it("caches hashed assets for good", async () => {
    const asset = readdirSync(path.join(CONSOLE_DIR, "assets")).find((f) => f.endsWith(".js"))!;
    const res = await app.inject({ url: `/console/assets/${asset}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["cache-control"]).toContain("immutable");
    expect(res.body).toBe(readFileSync(path.join(CONSOLE_DIR, "assets", asset), "utf8"));
  });

  it.each(["/console/../package.json", "/console/%2e%2e/package.json", "/console/..%2fpackage.json", "/console/%2e%2e%2f%2e%2e%2f.env", "/console/.vite/manifest.json"])(
    "serves nothing outside the build: %s",
    async (url) => {
      const res = await app.inject({ url });
      expect([400, 403, 404]).toContain(res.statusCode);
      expect(res.body).not.toContain('"workspaces"');
    },
  );

  it("leaves the API's own routes behind their keys and out of the OpenAPI document", async () => {
    expect((await app.inject({ url: "/goals" })).statusCode).toBe(401);
    const doc = app.swagger() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/console"))).toEqual([]);
  });

  it("answers 503 with how to build it where the console was not built", async () => {
    const empty = mkdtempSync(path.join(tmpdir(), "console-"));
    writeFileSync(path.join(empty, "not-index.txt"), "x");
    const bare = await build({ readiness, logger: false, consoleDir: empty });
    try {
      for (const url of ["/console", "/console/", "/console/assets/x.js"]) {
        const res = await bare.inject({ url });
        expect(res.statusCode, url).toBe(503);
        expect(res.json()).toMatchObject({ error: { code: "LS_ERR_NOT_READY", message: expect.stringContaining("npm run build") } });
      }
    } finally {
      await bare.close();
    }
  });
});
