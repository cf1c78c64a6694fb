// Issue 11.3: provenance on every run, all of it in GET /goals/:id: each model call's provider, model and
// the sha256 of the prompts it sent (checked against what a fake OpenAI-compatible server received), each
// execution's image, script hash and limits, and the LoopSmith version that accepted the goal.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loopsmithVersion } from "@loopsmith/core";
import { sha256Hex } from "@loopsmith/receipts";
import { DEFAULT_LIMITS, describeLimits, dockerClient, sandboxImageTag } from "@loopsmith/sandbox";
import { startFakeOpenAI, type FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { demoGoal, demoScript, SCRIPT_CORRECT } from "../../scripts/demo/scenario";
import { repoRoot } from "../../scripts/lib/proc";
import { startLoop, type Loop } from "../support/loop";

let fake: FakeOpenAI | undefined;
let loop: Loop | undefined;
afterEach(async () => {
  await loop?.close();
  await fake?.close();
  loop = fake = undefined;
});

type ChatRequest = { model: string; messages: { role: string; content: string }[] };
const reply = (o: unknown, prompt_tokens: number, completion_tokens: number) => ({ content: JSON.stringify(o), usage: { prompt_tokens, completion_tokens } });

describe("provenance in GET /goals/:id", () => {
  it("each model call's prompt hashes are those of what the provider received; each execution says what ran and how", async () => {
    const { plan } = demoScript();
    fake = await startFakeOpenAI([
      reply(plan, 420, 90),
      reply({ filename: "analysis.py", language: "python", source: SCRIPT_CORRECT, notes: "" }, 500, 400),
      reply({ verified: true, failing_checks: [], diagnosis: "All checks pass.", fix_hint: "" }, 700, 30),
    ]);
    loop = await startLoop({ env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: "fake-coder-7b" } });
    const goal = await loop.run(demoGoal({ model: { provider: "openai-compatible" }, execution_timeout_seconds: 45 }));
    expect(goal.state, goal.tape).toBe("verified");

    const sent = fake.requests as ChatRequest[];
    expect(sent).toHaveLength(3);
    expect(goal.model_calls.map((c) => [c.state, c.attempt, c.provider, c.model, c.tokens_in, c.tokens_out, c.error_kind])).toEqual([
      ["plan", 0, "openai-compatible", "fake-coder-7b", 420, 90, null],
      ["generate", 0, "openai-compatible", "fake-coder-7b", 500, 400, null],
      ["inspect", 1, "openai-compatible", "fake-coder-7b", 700, 30, null],
    ]);
    goal.model_calls.forEach((call, i) => {
      const [system, user] = sent[i]!.messages;
      expect([system!.role, user!.role]).toEqual(["system", "user"]);
      expect(call.system_sha256).toBe(sha256Hex(system!.content));
      expect(call.prompt_sha256).toBe(sha256Hex(user!.content));
      expect(call.latency_ms).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(Date.parse(call.created_at))).toBe(false);
    });
    // Not vacuous: the turns' prompts differ, and so do their hashes.
    expect(new Set(goal.model_calls.map((c) => c.prompt_sha256)).size).toBe(3);

    const image = await dockerClient().getImage(sandboxImageTag()).inspect();
    expect(goal.executions).toHaveLength(1);
    const exec = goal.executions[0]!;
    expect(exec.image_id).toBe(image.Id);
    expect(exec.image_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    // Built offline by docker import here: no registry digest, and the view says so rather than inventing one.
    expect(exec.image_digest).toBe(image.RepoDigests?.[0] ?? null);
    expect(exec.script_sha256).toBe(sha256Hex(SCRIPT_CORRECT));
    expect(exec.limits).toEqual(describeLimits(DEFAULT_LIMITS, 45_000));
    expect(exec.limits).toMatchObject({ timeout_ms: 45_000, memory_bytes: 512 * 1024 * 1024, pids_limit: 128 });
    const row = await loop.prisma.execution.findFirstOrThrow({ where: { goalId: goal.id } });
    expect([row.imageId, row.imageDigest, row.scriptSha256]).toEqual([exec.image_id, exec.image_digest, exec.script_sha256]);

    // The version of the checkout that accepted the goal.
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
    expect(goal.loopsmith_version).toMatch(new RegExp(`^git:${head}(-dirty)?$`));
    // And the receipt carries the same facts.
    expect(goal.receipt).toMatchObject({
      loopsmith_version: goal.loopsmith_version,
      image: { id: exec.image_id, repo_digest: exec.image_digest },
      model_calls: goal.model_calls.map((c) => ({ state: c.state, attempt: c.attempt, provider: c.provider, model: c.model, system_sha256: c.system_sha256, prompt_sha256: c.prompt_sha256 })),
    });
  });
});

describe("loopsmithVersion", () => {
  it("is the git commit in a checkout, else LOOPSMITH_VERSION, else the root package.json version", async () => {
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
    expect(loopsmithVersion({ configured: "v9-image" })).toMatch(new RegExp(`^git:${head}(-dirty)?$`));
    const dir = await mkdtemp(path.join(tmpdir(), "version-"));
    try {
      expect(loopsmithVersion({ repoRoot: dir })).toBe("unknown");
      await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "loopsmith", version: "1.2.3" }));
      expect(loopsmithVersion({ repoRoot: dir })).toBe("package:1.2.3");
      expect(loopsmithVersion({ repoRoot: dir, configured: "v9-image" })).toBe("v9-image");
      // A directory inside another repository is not a checkout of its own.
      const inner = path.join(repoRoot, "packages", "receipts");
      expect(loopsmithVersion({ repoRoot: inner, configured: "v9-image" })).toBe("v9-image");
      execFileSync("git", ["init", "-q", dir]);
      execFileSync("git", ["-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"]);
      const commit = execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
      expect(loopsmithVersion({ repoRoot: dir, configured: "v9-image" })).toBe(`git:${commit}`);
      execFileSync("git", ["-C", dir, "add", "package.json"]);
      expect(loopsmithVersion({ repoRoot: dir })).toBe(`git:${commit}-dirty`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
