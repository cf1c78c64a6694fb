// A real browser for the console's end-to-end tests: Debian's Chromium (installed by setup.sh) driven by
// playwright-core. No browser download: a missing Chromium fails the test file loudly, saying how to
// install it. Each test saves a screenshot under test-artifacts/console/.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import type { FastifyInstance } from "fastify";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const root = fileURLToPath(new URL("../..", import.meta.url));
export const SCREENSHOTS = path.join(root, "test-artifacts/console");

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not at ${CHROMIUM}: run \`bash scripts/setup.sh\` (it installs Debian's chromium) or set CHROMIUM_PATH.`);
  return chromium.launch({
    executablePath: CHROMIUM,
    // As root on a machine with a closed network: no sandbox (root), no background connections.
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
}

/**
 * Serves a Fastify app (one built by startLoop) on a loopback port for the browser, beside its inject()
 * users: requests go through the app's full routing. Answers the base URL and a close function.
 */
export async function serve(app: FastifyInstance): Promise<{ url: string; close: () => Promise<void> }> {
  await app.ready();
  const server: Server = createServer((req, res) => app.routing(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fresh context (its own sessionStorage and downloads) whose pages record CSP violations and page errors. */
export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return { context, page, problems };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

const AXE = readFileSync(path.join(root, "node_modules/axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it is now (WCAG 2 A and AA rules). Loaded
 * through the debugging protocol, not a script tag, so the page's CSP stays as strict as it is.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate(() =>
    (globalThis as unknown as { axe: { run: (o: unknown) => Promise<unknown> } }).axe.run({ runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } }),
  )) as { violations: AxeViolation[] };
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}
