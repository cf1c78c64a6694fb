// Benchmark: the console's goals page with --goals goals in the tenant (default 10,000), in Debian's
// Chromium against a real API process. Prints, from one run, side by side:
// - GET /goals?limit=50 as the page asks for it, timed from this process (the baseline: what any client
//   waits for the same data);
// - the page's time to first render: from the start of navigation to the first goal row in the table
//   (a fresh page load each time: HTML, the script, sign-in state from the tab, the request, the render),
//   and the same request's duration as the page's own resource timing saw it.
//
//   npx tsx bench/console.ts [--goals 10000] [--loads 15]
import { parseArgs } from "node:util";
import { DEFAULT_DATABASE_URL } from "@loopsmith/core";
import { createPrisma } from "@loopsmith/db";
import { demoGoal } from "../scripts/demo/scenario";
import { ensureBuilt, spawnTs } from "../scripts/lib/proc";
import { createTenantWithCli, freePort } from "../scripts/lib/stack";
import { buildConsole } from "../scripts/build";
import { launchBrowser } from "../tests/support/browser";
import { stat } from "./lib/stats";

const { values } = parseArgs({ options: { goals: { type: "string", default: "10000" }, loads: { type: "string", default: "15" } } });
const goals = Number(values.goals);
const loads = Number(values.loads);

ensureBuilt();
await buildConsole();
const port = await freePort();
const env = { ...process.env, PORT: String(port), LOG_LEVEL: "info", LOOPSMITH_SCRIPTED_MODEL: "true", QUEUE_PREFIX: `loopsmith-bench-console-${process.pid}` };
const tenant = await createTenantWithCli(env, `bench-console-${process.pid}`);
const prisma = createPrisma(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
const api = spawnTs("apps/api/dist/server.mjs", env);
const base = `http://127.0.0.1:${port}`;
const browser = await launchBrowser();
try {
  await api.waitFor(/Server listening/, 60_000);
  // The goals, written straight to the table (no runner drains them): a mix of states and ages.
  const states = ["verified", "failed", "cancelled", "plan", "execute"];
  const body = demoGoal();
  const t0 = performance.now();
  for (let i = 0; i < goals; i += 1000) {
    await prisma.goal.createMany({
      data: Array.from({ length: Math.min(1000, goals - i) }, (_, j) => {
        const n = i + j;
        const state = states[n % states.length]!;
        return {
          tenantId: tenant.tenant_id,
          objective: `${body.objective} (#${n})`,
          inputs: [],
          maxAttempts: 5,
          budgets: {},
          state,
          attempts: n % 4,
          verified: state === "verified",
          failureReason: state === "failed" ? "budget_attempts" : null,
          createdAt: new Date(Date.now() - (goals - n) * 60_000),
        };
      }),
    });
  }
  console.log(`${goals} goals written for the tenant in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // The baseline: the request the page makes, from this process.
  const url = `${base}/goals?limit=50`;
  const requestMs: number[] = [];
  for (let i = 0; i < loads + 3; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${tenant.api_key}` } });
    const page = (await res.json()) as { goals: unknown[] };
    if (res.status !== 200 || page.goals.length !== 50) throw new Error(`GET /goals: ${res.status}`);
    if (i >= 3) requestMs.push(performance.now() - t);
  }

  const context = await browser.newContext();
  const page = await context.newPage();
  // The moment the first goal row is in the document, recorded by the page itself (an init script, which
  // the page's CSP does not apply to): not when a poll from here happens to look.
  // (Strings: this code runs in the page, not here.)
  await page.addInitScript(`
    new MutationObserver((_, observer) => {
      if (window.firstRowAt === undefined && document.querySelector("tr[data-goal]")) {
        window.firstRowAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  `);
  await page.goto(`${base}/console/`);
  await page.getByLabel("API key").fill(tenant.api_key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("tr[data-goal]").first().waitFor();
  const renderMs: number[] = [];
  const inPageMs: number[] = [];
  for (let i = 0; i < loads + 2; i++) {
    await page.reload();
    await page.locator("tr[data-goal]").nth(49).waitFor();
    const [render, request] = await page.evaluate<[number, number]>(`[
      window.firstRowAt,
      performance.getEntriesByType("resource").find((e) => e.name.includes("/goals?"))?.duration ?? NaN,
    ]`);
    if (i >= 2) {
      renderMs.push(render);
      inPageMs.push(request);
    }
  }
  console.log(`GET /goals?limit=50 from this process   ${stat(requestMs)}`);
  console.log(`the same request, as the page saw it     ${stat(inPageMs)}`);
  console.log(`goals page, navigation to first render   ${stat(renderMs)}`);
} finally {
  await browser.close();
  api.child.kill("SIGTERM");
  await api.exited;
  await prisma.tenant.delete({ where: { id: tenant.tenant_id } }).catch(() => undefined);
  await prisma.$disconnect();
}
