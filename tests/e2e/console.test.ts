// The goal console in a real browser (Debian's Chromium through playwright-core) against a LoopSmith on the
// real services, with the scripted model: the console reads and acts only through the public API, under its
// Content-Security-Policy (any violation fails the test), and every page passes axe-core without serious
// violations. Each test saves a screenshot under test-artifacts/console/.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { advanceGoal, createTenant } from "@loopsmith/db";
import { startReceiver } from "../../packages/webhooks/test/support";
import { demoGoal, demoScript, OBJECTIVE, SALES_CSV, scriptedGoal } from "../../scripts/demo/scenario";
import { launchBrowser, newPage, screenshot, seriousViolations, serve } from "../support/browser";
import { checkedGoal } from "../support/checked-goal";
import { startLoop, type GoalView, type Loop } from "../support/loop";

let loop: Loop;
let site: { url: string; close: () => Promise<void> };
let browser: Browser;
let verified: GoalView;
let open: { page: Page; problems: string[]; close: () => Promise<void> } | undefined;

beforeAll(async () => {
  loop = await startLoop({ shared: true, preimport: true });
  site = await serve(loop.app);
  browser = await launchBrowser();
  verified = await loop.run(demoGoal());
  expect(verified.state).toBe("verified");
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await loop?.close();
});
afterEach(async (ctx) => {
  if (!open) return;
  const { page, problems, close } = open;
  open = undefined;
  await screenshot(page, ctx.task.name.replace(/[^a-z0-9]+/gi, "-").toLowerCase().slice(0, 80));
  await close();
  // Nothing the page did was refused by its CSP, and no script error escaped.
  expect(problems).toEqual([]);
});

async function page(): Promise<Page> {
  const { context, page: p, problems } = await newPage(browser);
  open = { page: p, problems, close: () => context.close() };
  return p;
}

async function signedIn(key = loop.tenant.api_key, start = "#/"): Promise<Page> {
  const p = await page();
  await p.goto(`${site.url}/console/${start}`);
  await p.getByLabel("API key").fill(key);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.getByRole("button", { name: "Sign out" }).waitFor();
  return p;
}

const noSerious = async (p: Page) => expect(await seriousViolations(p), "axe-core: serious or critical violations").toEqual([]);

describe("signing in", () => {
  it("refuses a wrong key, says so, and keeps no session", async () => {
    const p = await page();
    const res = await p.goto(`${site.url}/console/`);
    expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await p.getByLabel("API key").fill("lsk_not_a_real_key_at_all");
    await p.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => p.getByRole("alert").textContent()).toMatch(/The key was refused/);
    expect(await p.evaluate("sessionStorage.length")).toBe(0);
    expect(p.url()).not.toContain("lsk_");
    await noSerious(p);
  });

  it("keeps the key for the tab only: a new tab of the same browser asks again", async () => {
    const p = await signedIn();
    expect(await p.evaluate<string[]>("Object.values(sessionStorage)")).toContain(loop.tenant.api_key);
    const other = await p.context().newPage();
    await other.goto(`${site.url}/console/`);
    await other.getByLabel("API key").waitFor();
    await other.close();
    // The API docs (another page of this origin) open in a new tab without an opener, which gets no copy
    // of this tab's sessionStorage.
    const [docs] = await Promise.all([p.context().waitForEvent("page"), p.getByRole("link", { name: "API docs" }).click()]);
    await docs.waitForLoadState();
    expect(await docs.evaluate("sessionStorage.length")).toBe(0);
    expect(await docs.evaluate("window.opener")).toBeNull();
    await docs.close();
  });
});

describe("the goals page", () => {
  it("lists the tenant's goals, filters by state, searches, and shows a new goal without a reload", async () => {
    const p = await signedIn();
    const row = p.locator(`tr[data-goal="${verified.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("verified");
    await noSerious(p);
    await p.getByLabel("State").selectOption("failed");
    await expect.poll(() => p.locator(`tr[data-goal="${verified.id}"]`).count()).toBe(0);
    await p.getByLabel("State").selectOption("");
    await p.getByLabel("Search").fill("no objective says this");
    await p.getByRole("button", { name: "Search" }).click();
    await p.getByText("No goals match.").waitFor();
    await p.getByLabel("Search").fill("TOTAL REVENUE per region");
    await p.getByRole("button", { name: "Search" }).click();
    await row.waitFor();
    // Live: a goal submitted elsewhere appears within a refresh.
    await p.evaluate("window.marker = 1");
    const posted = await loop.post(checkedGoal({ objective: "Total revenue per region, submitted beside the console", checks: [], program: "print('hi')\n" }));
    await p.locator(`tr[data-goal="${posted.body.id as string}"]`).waitFor({ timeout: 10_000 });
    expect(await p.evaluate("window.marker")).toBe(1);
    await loop.waitForEnd(posted.body.id as string);
  });
});

describe("a goal's page", () => {
  it("submits a scripted goal from the form and fills the timeline live until verified", async () => {
    const p = await signedIn(undefined, "#/submit");
    await p.getByLabel("Objective").fill(OBJECTIVE);
    await p.getByLabel("Input files").setInputFiles({ name: "sales.csv", mimeType: "text/csv", buffer: Buffer.from(SALES_CSV) });
    await p.getByLabel("reconciles_total", { exact: true }).check();
    await p.getByLabel("Params of reconciles_total (JSON)").fill(JSON.stringify({ values_path: "by_region", total_path: "total_revenue", tolerance: 0.01 }));
    await p.getByLabel(/More fields of POST \/goals/).fill(JSON.stringify({ model: { provider: "scripted", script: demoScript() } }));
    await noSerious(p);
    await p.evaluate("window.marker = 1");
    await p.getByRole("button", { name: "Submit the goal" }).click();
    await p.waitForURL(/#\/goals\/[0-9a-f-]{36}$/);
    const id = p.url().split("/").pop()!;
    const counts = new Set<number>();
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      counts.add(await p.locator(".timeline li").count());
      if ((await p.getByTestId("goal-state").getAttribute("data-state")) === "verified") break;
      await p.waitForTimeout(50);
    }
    expect(await p.getByTestId("goal-state").getAttribute("data-state")).toBe("verified");
    // The rows arrived one after another on the open page (no reload), ending with the whole tape.
    const goal = (await loop.get(id)).body;
    expect(goal.tape).toBe(verified.tape);
    expect(await p.locator(".timeline li").count()).toBe(goal.transitions.length);
    expect([...counts].filter((n) => n > 0 && n < goal.transitions.length).length).toBeGreaterThanOrEqual(3);
    expect(await p.evaluate("window.marker")).toBe(1);
    const stored = await loop.prisma.goalInput.findFirstOrThrow({ where: { goalId: id } });
    expect(Buffer.from(stored.content).toString("utf8")).toBe(SALES_CSV);
  });

  it("shows the second attempt's program as a diff against the first", async () => {
    const p = await signedIn(undefined, `#/goals/${verified.id}`);
    await p.getByRole("tab", { name: /Attempt 2/ }).click();
    await p.getByRole("button", { name: "Diff against attempt 1" }).click();
    const diff = p.getByLabel("Attempt 2 against attempt 1");
    await diff.waitFor();
    const removed = await diff.locator("del").allTextContents();
    const added = await diff.locator("ins").allTextContents();
    expect(removed).toContain('- df["revenue"] = df["revenue"].astype(float)');
    expect(added.some((l) => l.startsWith("+ ") && l.includes('str.replace(r"[$,]", "", regex=True)'))).toBe(true);
    // Unchanged lines are neither.
    expect([...removed, ...added].some((l) => l.includes("import pandas as pd"))).toBe(false);
    expect(await p.getByTestId("exit-code").textContent()).toBe("0");
    await noSerious(p);
  });

  it("shows each attempt's failing check's findings as a table: where, expected, actual", async () => {
    const expected = "id,amount\n1,10.00\n2,20.00\n3,30.00\n";
    const writes = (csv: string) => `import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "out.csv"), "w").write(${JSON.stringify(csv)})\n`;
    const body = checkedGoal({
      objective: "Write out.csv",
      deliverable: "out.csv",
      checker_files: [{ name: "expected.csv", text: expected }],
      checks: [{ id: "csv_matches", params: { artifact: "out.csv", expected_file: "expected.csv" } }],
      program: writes("id,amount\n1,10.00\n2,20.01\n3,30.00\n"),
    });
    // Two attempts, each wrong in its own cell.
    const script = { ...body.model.script, refine: [{ ...body.model.script.generate, source: writes("id,amount\n1,10.00\n2,20.00\n3,30.02\n") }] };
    const goal = await loop.run({ ...body, max_attempts: 2, model: { provider: "scripted", script } });
    expect(goal.state).toBe("failed");
    const p = await signedIn(undefined, `#/goals/${goal.id}`);
    const table = p.getByRole("table", { name: "Findings of csv_matches" });
    const firstRow = async () => {
      await table.waitFor();
      const [where, , want, got] = await table.locator("tbody tr").first().locator("td").allTextContents();
      return { where, want, got };
    };
    expect(await firstRow()).toEqual({ where: expect.stringMatching(/amount/), want: "30.00", got: "30.02" });
    await p.getByRole("tab", { name: /Attempt 1/ }).click();
    await expect.poll(firstRow).toEqual({ where: expect.stringMatching(/amount/), want: "20.00", got: "20.01" });
    // The client sees its own hidden check, marked as hidden from the models.
    expect(await p.locator('tr[data-check="csv_matches"]').textContent()).toContain("hidden from models");
    await p.getByRole("heading", { name: "Why it failed" }).waitFor();
    // A CSV artifact is shown as a table.
    await p.getByRole("button", { name: "View out.csv of attempt 2" }).click();
    const csv = p.getByRole("table", { name: "out.csv" });
    await csv.waitFor();
    expect(await csv.locator("thead th").allTextContents()).toEqual(["id", "amount"]);
    expect(await csv.locator("tbody tr").last().locator("td").allTextContents()).toEqual(["3", "30.02"]);
  });

  it("downloads an artifact whose bytes hash to the sha256 the listing shows", async () => {
    const p = await signedIn(undefined, `#/goals/${verified.id}`);
    const row = p.locator('tr[data-artifact="3/result.json"]');
    await row.waitFor();
    const listed = (await row.locator(".sha").textContent())!;
    const [download] = await Promise.all([p.waitForEvent("download"), row.getByRole("button", { name: /Download/ }).click()]);
    const file = await download.path();
    const sha = createHash("sha256").update(readFileSync(file)).digest("hex");
    expect(sha).toBe(listed);
    expect(sha).toBe(verified.deliverable.artifact!.sha256);
    // Viewed in the page, the JSON is a tree with the report's values.
    await row.getByRole("button", { name: /View/ }).click();
    expect(await p.getByRole("region", { name: /result\.json/ }).textContent()).toContain("top_region");
  });

  it("verifies the receipt in the page, and refuses one changed on the way", async () => {
    const p = await signedIn(undefined, `#/goals/${verified.id}`);
    await p.getByRole("button", { name: "Verify the receipt" }).click();
    await expect.poll(() => p.getByTestId("receipt-result").textContent()).toMatch(/^Receipt verified: signature valid, key valid at issue time, tape matches/);
    // A receipt whose verified attempt was changed in transit does not verify.
    await p.route(`**/goals/${verified.id}/receipt`, async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as Record<string, unknown>;
      await route.fulfill({ response: res, json: { ...body, verified_attempt: 2 } });
    });
    await p.getByRole("button", { name: "Verify the receipt" }).click();
    await expect.poll(() => p.getByTestId("receipt-result").textContent()).toMatch(/Receipt NOT verified: signature invalid/);
  });

  it("approves a goal waiting at the gate, and it moves on", async () => {
    const giveUp = { verified: false, failing_checks: ["exits_clean"], diagnosis: "It crashed.", fix_hint: "", infeasible: { reason: "The objective contradicts itself." } };
    const posted = await loop.post(scriptedGoal({ inspect: [giveUp, { verified: true, failing_checks: [], diagnosis: "ok", fix_hint: "" }] }, { on_infeasible: "ask" }));
    const id = posted.body.id as string;
    expect((await loop.waitForEnd(id)).state).toBe("awaiting_approval");
    const p = await signedIn(undefined, `#/goals/${id}`);
    await p.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => p.getByTestId("goal-state").getAttribute("data-state"), { timeout: 30_000 }).not.toBe("awaiting_approval");
    const after = (await loop.get(id)).body;
    expect(after.tape).toMatch(/^plan → generate → execute → inspect → awaiting_approval → /);
  });

  it("cancels a running goal", async () => {
    const posted = await loop.post(checkedGoal({ checks: [], program: "import time\ntime.sleep(120)\n", timeoutSeconds: 120 }));
    const id = posted.body.id as string;
    await loop.waitForEnd(id, 60_000, ["execute"]);
    const p = await signedIn(undefined, `#/goals/${id}`);
    await p.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => p.getByTestId("goal-state").getAttribute("data-state"), { timeout: 30_000 }).toBe("cancelled");
    expect((await loop.get(id)).body.state).toBe("cancelled");
  });

  it("shows another tenant's goal as not found", async () => {
    const other = loop.withTenant(await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox }));
    const theirs = await other.post(checkedGoal({ checks: [], program: "print('theirs')\n" }));
    const id = theirs.body.id as string;
    const p = await signedIn(undefined, `#/goals/${id}`);
    await p.getByRole("heading", { name: "Goal not found" }).waitFor();
    expect(await p.locator("main").textContent()).not.toContain("theirs");
    await other.waitForEnd(id);
  });

  it("works from the keyboard: search, open a goal, switch attempts", async () => {
    const p = await signedIn();
    await p.locator(`tr[data-goal="${verified.id}"]`).first().waitFor();
    const focusOn = async (selector: string) => {
      for (let i = 0; i < 60; i++) {
        await p.keyboard.press("Tab");
        if (await p.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
      }
      throw new Error(`Tab never reached ${selector}`);
    };
    await focusOn("#goal-search");
    await p.keyboard.type(verified.id);
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator("tr[data-goal]").count()).toBe(1);
    await focusOn(`a[href="#/goals/${verified.id}"]`);
    await p.keyboard.press("Enter");
    await p.getByRole("heading", { name: "Timeline" }).waitFor();
    // One Tab stop for the attempts (the selected one, the last), then arrows and Home along them.
    await focusOn("#attempt-tab-3");
    await p.keyboard.press("ArrowLeft");
    expect(await p.getByRole("tab", { name: /Attempt 2/ }).getAttribute("aria-selected")).toBe("true");
    await p.keyboard.press("Home");
    expect(await p.evaluate("document.activeElement.id")).toBe("attempt-tab-1");
    expect(await p.getByRole("tab", { name: /Attempt 1/ }).getAttribute("aria-selected")).toBe("true");
    expect(await p.getByTestId("exit-code").textContent()).toBe("1");
  });
});

describe("webhook deliveries", () => {
  it("lists a goal's deliveries and redelivers one", async () => {
    const receiver = await startReceiver([200]);
    try {
      const goal = await loop.run({ ...checkedGoal({ checks: [], program: "print('hi')\n" }), webhook: { url: receiver.url } });
      await expect.poll(async () => (await loop.request("GET", `/goals/${goal.id}/deliveries`)).body.deliveries, { timeout: 20_000 }).toMatchObject([{ status: "delivered" }]);
      const p = await signedIn(undefined, `#/goals/${goal.id}`);
      const table = p.getByRole("table", { name: "Webhook deliveries" });
      await table.waitFor();
      expect(await table.locator("tbody tr").first().textContent()).toMatch(/goal\.failed.*delivered/);
      await p.getByRole("button", { name: "Redeliver goal.failed" }).click();
      await p.getByRole("status").filter({ hasText: "Redelivery queued." }).waitFor();
      await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(2);
      expect(receiver.received[1]!.headers["webhook-id"]).toBe(receiver.received[0]!.headers["webhook-id"]);
    } finally {
      await receiver.close();
    }
  });
});

describe("the operator's view", () => {
  it("opens the dead letters with the admin key and retries one", async () => {
    const ADMIN = `admin-${Date.now()}-console`;
    const adminLoop = await startLoop({ runner: false, env: { ADMIN_API_KEY: ADMIN } });
    const adminSite = await serve(adminLoop.app);
    try {
      // A goal parked in errored, as a runner whose step kept failing leaves it.
      const posted = await adminLoop.post(demoGoal({ objective: "Parked by a failing provider" }));
      const id = posted.body.id as string;
      await advanceGoal(adminLoop.prisma, { goalId: id, fromVersion: 0, from: "plan", to: "errored", detail: { error: "provider answered 503", error_code: "LS_ERR_MODEL_UNAVAILABLE", tries: 3 } });
      const p = await page();
      await p.goto(`${adminSite.url}/console/`);
      await p.getByLabel("API key").fill(ADMIN);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.getByRole("heading", { name: "Dead letters" }).waitFor();
      expect(await p.locator(".who").textContent()).toBe("admin key");
      const row = p.locator(`tr[data-goal="${id}"]`);
      expect(await row.textContent()).toContain("provider answered 503");
      await noSerious(p);
      await row.getByRole("button", { name: `Retry goal ${id}` }).click();
      await p.getByRole("status").filter({ hasText: `Goal ${id} resumed in plan.` }).waitFor();
      expect((await adminLoop.prisma.goal.findUniqueOrThrow({ where: { id } })).state).toBe("plan");
      await expect.poll(() => row.count()).toBe(0);
    } finally {
      await adminSite.close();
      await adminLoop.close();
    }
  });
});
