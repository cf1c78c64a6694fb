// The goal console: a browser front end (apps/console, built by Vite into apps/console/dist) served as
// static files under /console/. The files are public: the page itself holds nothing; it asks the person for
// an API key, keeps it for the tab, and reads everything through the public API like any client.
//
// The pages may run no script but their own files and talk to no other origin: a Content-Security-Policy
// with no inline script, no eval, no framing. Built assets have content-hashed names and are cached for
// good; index.html is revalidated on every load, so a new build is picked up at once.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync } from "fastify";
import { LoopSmithError } from "@loopsmith/core";

/** apps/console/dist, from apps/api/src/ or the bundle in apps/api/dist/ (both three levels below the root). */
export const CONSOLE_DIR = fileURLToPath(new URL("../../console/dist/", import.meta.url));
export const CONSOLE_PATH = "/console/";

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const consoleRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, opts) => {
  const dir = opts.dir ?? CONSOLE_DIR;
  app.addHook("onSend", async (_req, reply) => {
    reply.header("content-security-policy", CONSOLE_CSP);
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
    reply.header("x-frame-options", "DENY");
  });
  if (!existsSync(`${dir}/index.html`)) {
    // Not built in this checkout: say how to build it rather than 404.
    const notBuilt = async () => {
      throw new LoopSmithError("LS_ERR_NOT_READY", "The console is not built in this installation: run `npm run build` (setup does).");
    };
    app.get("/console", { schema: { hide: true } }, notBuilt);
    app.get("/console/*", { schema: { hide: true } }, notBuilt);
    return;
  }
  app.get("/console", { schema: { hide: true } }, async (_req, reply) => reply.redirect(CONSOLE_PATH, 301));
  await app.register(fastifyStatic, {
    root: dir,
    prefix: CONSOLE_PATH,
    decorateReply: false,
    index: ["index.html"],
    // Dotfiles and source maps stay where they are; everything the page loads is a hashed asset.
    serveDotFiles: false,
    cacheControl: false,
    setHeaders: (res, path) => {
      res.header("cache-control", path.endsWith(".html") ? "no-cache" : "public, max-age=31536000, immutable");
    },
  });
};
