// Issue 11.4: the signed receipt of a verified goal, end to end through the public API (real Postgres,
// Redis and Docker, the scripted model). A receipt verifies offline with the published key, the files
// beside it and the tape; any changed byte of the receipt, an artifact or a tape row fails with a message
// naming what did not match.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "@loopsmith/db";
import { canonicalJson, chainHashes, sha256Hex, verifyReceipt, type Receipt } from "@loopsmith/receipts";
import type { GoalView } from "@loopsmith/schemas";
import { startReceiver, type Receiver } from "../../packages/webhooks/test/support";
import { repoRoot } from "../../scripts/lib/proc";
import { checkedGoal } from "../support/checked-goal";
import { startLoop, type Loop } from "../support/loop";

const CANARY = "canary-7f3a-expected-only";
const PROGRAM = `import csv, os
rows = list(csv.DictReader(open(os.environ["INPUT_PATH"], newline="")))
w = csv.writer(open(os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"), "w", newline=""))
w.writerow(["id", "name"])
for r in rows:
    w.writerow([r["id"], r["name"].strip().title()])
open(os.path.join(os.environ["OUTPUT_DIR"], "notes.txt"), "w").write("cleaned\\n")
`;
const goalBody = (program = PROGRAM, webhookUrl?: string) => ({
  ...checkedGoal({
    objective: "Clean people.csv into clean.csv: names trimmed and in title case.",
    inputs: [{ name: "people.csv", text: "id,name\n1,  ada lovelace\n2,ALAN TURING \n" }],
    checker_files: [{ name: "expected.csv", text: `id,name\n1,Ada Lovelace\n2,Alan Turing\n` }],
    deliverable: "clean.csv",
    checks: [
      // Hidden (it reads a checker file), and its params carry a canary: neither may leak into the receipt.
      { id: "csv_matches", params: { artifact: "clean.csv", expected_file: "expected.csv", null_values: ["", CANARY] } },
      { id: "row_count", params: { artifact: "clean.csv", equals: 2 } },
    ],
    program,
  }),
  ...(webhookUrl ? { webhook: { url: webhookUrl } } : {}),
});

let loop: Loop;
let receiver: Receiver;
let goal: GoalView;
let receipt: Receipt;
let keys: unknown;
let artifact: Buffer;

beforeAll(async () => {
  loop = await startLoop();
  receiver = await startReceiver([204]);
  goal = await loop.run(goalBody(PROGRAM, receiver.url));
  expect(goal.state, goal.tape).toBe("verified");
  const res = await loop.request("GET", `/goals/${goal.id}/receipt`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  receipt = res.body as unknown as Receipt;
  // No API key: anyone handed a receipt can fetch the keys.
  const k = await loop.request("GET", "/.well-known/loopsmith-receipt-keys", { key: null });
  expect(k.status).toBe(200);
  keys = k.body;
  const row = await loop.prisma.artifact.findFirstOrThrow({ where: { goalId: goal.id, name: "clean.csv" } });
  artifact = Buffer.from(row.content);
  // The webhook is built when it is sent, from the rows as they are then; a test below edits a tape row
  // (and restores it), so the delivery must have arrived first. (The flake of stops 21 and 23: on a loaded
  // machine the delivery came while row 3 was edited, and carried the edit.)
  const deadline = Date.now() + 30_000;
  while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(receiver.received.length, "the goal.verified webhook did not arrive within 30 s").toBeGreaterThan(0);
});
afterAll(async () => {
  await receiver?.close();
  await loop?.close();
});

const given = () => ({ artifacts: [{ name: "clean.csv", content: artifact }], program: Buffer.from(PROGRAM), tape: goal.transitions });
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe("the receipt of a verified goal", () => {
  it("verifies offline with the published key, the deliverable, the program and the tape", () => {
    const v = verifyReceipt(receipt, keys, given());
    expect(v.problems).toEqual([]);
    expect(v.checked).toEqual([`signature (key ${receipt.key_id})`, "artifact clean.csv", "program solution.py", `tape (${goal.transitions.length} rows, head ${receipt.tape.head})`]);
  });

  it("says what was verified, and shows hidden material by hash only", () => {
    expect(receipt).toMatchObject({
      format: "loopsmith-receipt/1",
      alg: "Ed25519",
      goal_id: goal.id,
      state: "verified",
      verified_attempt: 1,
      objective_sha256: sha256Hex(goal.objective),
      deliverable: { name: "clean.csv", sha256: sha256Hex(artifact) },
      program: { filename: "solution.py", sha256: sha256Hex(PROGRAM) },
      image: { id: goal.executions[0]!.image_id, repo_digest: goal.executions[0]!.image_digest },
      loopsmith_version: goal.loopsmith_version,
      checker_files: goal.checker_files.map((f) => ({ name: f.name, sha256: f.sha256 })),
    });
    expect(receipt.tenant_id).toBe(loop.tenant.tenant_id);
    expect(receipt.artifacts.map((a) => a.name)).toEqual(["clean.csv", "notes.txt"]);
    expect(receipt.checks.map((c) => [c.id, c.source, c.hidden, c.result?.passed])).toEqual([
      ["exits_clean", "baseline", false, true],
      ["artifact_exists", "baseline", false, true],
      ["csv_matches", "client", true, true],
      ["row_count", "client", false, true],
    ]);
    const hidden = receipt.checks[2]!;
    expect(hidden.params).toBeNull();
    expect(hidden.result?.message).toBeNull();
    expect(hidden.params_sha256).toBe(sha256Hex(canonicalJson(goal.checks[2]!.params)));
    expect(receipt.checks[3]).toMatchObject({ params: { artifact: "clean.csv", equals: 2 }, result: { passed: true, message: expect.any(String) } });
    expect(JSON.stringify(receipt)).not.toContain(CANARY);
    // Every model call, with the hashes GET /goals/:id shows.
    expect(receipt.model_calls).toEqual(goal.model_calls.map((m) => ({ state: m.state, attempt: m.attempt, provider: m.provider, model: m.model, system_sha256: m.system_sha256, prompt_sha256: m.prompt_sha256 })));
    expect(receipt.model_calls.map((m) => m.state)).toEqual(["plan", "generate", "inspect"]);
    // The whole tape, `verified` included, chained.
    expect(goal.tape).toBe("plan → generate → execute → inspect → verified");
    expect(receipt.tape.hashes).toEqual(goal.transitions.map((t) => t.hash));
    expect(receipt.tape.hashes).toEqual(chainHashes(goal.transitions));
    expect(receipt.tape).toMatchObject({ length: goal.transitions.length, head: goal.transitions.at(-1)!.hash });
    // The goal view and GET /receipt serve the same receipt.
    expect(goal.receipt).toEqual(receipt);
  });

  it("the well-known route lists the key the receipt names", () => {
    const list = (keys as { keys: { key_id: string; alg: string; public_key_pem: string; created_at: string }[] }).keys;
    const key = list.find((k) => k.key_id === receipt.key_id);
    expect(key).toMatchObject({ alg: "Ed25519", public_key_pem: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----/) });
    expect(Number.isNaN(Date.parse(key!.created_at))).toBe(false);
    // issue 25: the key's validity window; this test's runner sets neither an expiry nor a revocation.
    expect(key).toMatchObject({ not_before: key!.created_at, not_after: null, revoked_at: null });
    expect(Date.parse(key!.created_at)).toBeLessThanOrEqual(Date.parse(receipt.issued_at));
  });

  const bad = (key: string) => `signature does not verify with key ${key}`;
  const receiptEdits: [string, (r: Receipt) => void][] = [
    ["a check result", (r) => (r.checks[3]!.result!.passed = false)],
    ["a check message", (r) => (r.checks[0]!.result!.message = "all good")],
    ["a hidden check's params hash", (r) => (r.checks[2]!.params_sha256 = sha256Hex("{}"))],
    ["the objective hash", (r) => (r.objective_sha256 = sha256Hex("Something else."))],
    ["the deliverable's hash", (r) => (r.deliverable.sha256 = sha256Hex("forged"))],
    ["the tape head", (r) => (r.tape.head = r.tape.hashes[0]!)],
    ["the tenant", (r) => (r.tenant_id = "00000000-0000-4000-8000-000000000000")],
    ["the signature", (r) => (r.signature = (r.signature[0] === "A" ? "B" : "A") + r.signature.slice(1))],
  ];
  it.each(receiptEdits)("changing %s makes it fail, naming the signature", (_what, edit) => {
    const r = clone(receipt);
    edit(r);
    expect(verifyReceipt(r, keys, given()).problems).toContain(bad(receipt.key_id));
  });

  it("a changed byte of an artifact or of the program is named with both hashes", () => {
    const flipped = Buffer.from(artifact);
    flipped[flipped.length - 2] = flipped[flipped.length - 2]! ^ 0x20;
    expect(verifyReceipt(receipt, keys, { artifacts: [{ name: "clean.csv", content: flipped }] }).problems).toEqual([
      `artifact clean.csv: sha256 ${sha256Hex(flipped)} expected ${sha256Hex(artifact)}`,
    ]);
    const program = Buffer.from(PROGRAM.replace("title()", "upper()"));
    expect(verifyReceipt(receipt, keys, { program }).problems).toEqual([`program: sha256 ${sha256Hex(program)} expected ${sha256Hex(PROGRAM)}`]);
  });

  it("a changed tape row is named by its seq", () => {
    const exitCode = clone(goal.transitions);
    (exitCode[3]!.detail as { exit_code: number }).exit_code = 0 + 1;
    expect(verifyReceipt(receipt, keys, { tape: exitCode }).problems).toEqual(["tape row 3: hash mismatch"]);
    const verdict = clone(goal.transitions);
    (verdict[4]!.detail as { checks_passed: boolean }).checks_passed = false;
    expect(verifyReceipt(receipt, keys, { tape: verdict }).problems).toEqual(["tape row 4: hash mismatch"]);
    const retimed = clone(goal.transitions);
    retimed[2]!.at = new Date(Date.parse(retimed[2]!.at) + 1).toISOString();
    expect(verifyReceipt(receipt, keys, { tape: retimed }).problems).toEqual(["tape row 2: hash mismatch"]);
    expect(verifyReceipt(receipt, keys, { tape: goal.transitions.slice(0, -1) }).problems).toEqual([`tape: 4 rows given, the receipt covers 5`]);
  });

  it("a tape row edited in the database no longer verifies against the receipt", async () => {
    const row = await loop.prisma.transition.findFirstOrThrow({ where: { goalId: goal.id, seq: 3 } });
    const detail = { ...(row.detail as Record<string, unknown>), stderr_tail: "" };
    try {
      await loop.prisma.transition.update({ where: { id: row.id }, data: { detail: { ...detail, stderr_tail: "edited later" } } });
      const edited = (await loop.get(goal.id)).body;
      expect(verifyReceipt(receipt, keys, { tape: edited.transitions }).problems).toEqual(["tape row 3: hash mismatch"]);
    } finally {
      await loop.prisma.transition.update({ where: { id: row.id }, data: { detail: row.detail as object } });
    }
    expect(verifyReceipt(receipt, keys, { tape: (await loop.get(goal.id)).body.transitions }).ok).toBe(true);
  });

  it("npm run receipt:verify checks the saved files: exit 0 when they match, 1 naming the row that does not", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "receipt-"));
    try {
      const file = (name: string) => path.join(dir, name);
      await writeFile(file("receipt.json"), JSON.stringify(receipt, null, 2));
      await writeFile(file("keys.json"), JSON.stringify(keys));
      await writeFile(file("clean.csv"), artifact);
      await writeFile(file("solution.py"), PROGRAM);
      await writeFile(file("goal.json"), JSON.stringify(goal));
      const tampered = clone(goal.transitions);
      (tampered[4]!.detail as { checks_passed: boolean }).checks_passed = false;
      await writeFile(file("tampered.json"), JSON.stringify(tampered));
      const verify = (...args: string[]) =>
        promisify(execFile)("npm", ["run", "-s", "receipt:verify", "--", file("receipt.json"), "--keys", file("keys.json"), ...args], { cwd: repoRoot }).then(
          (r) => ({ code: 0, ...r }),
          (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
        );
      const ok = await verify("--artifact", `clean.csv=${file("clean.csv")}`, "--program", file("solution.py"), "--tape", file("goal.json"));
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/^receipt OK\n/);
      expect(ok.stdout).toContain("artifact clean.csv");
      const failed = await verify("--artifact", `clean.csv=${file("clean.csv")}`, "--tape", file("tampered.json"));
      expect(failed.code).toBe(1);
      expect(failed.stderr).toBe("receipt FAILED\n  tape row 4: hash mismatch\n");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the goal.verified webhook carries the receipt", () => {
    const event = JSON.parse(receiver.received[0]!.body) as { type: string; data: GoalView };
    expect(event.type).toBe("goal.verified");
    expect(event.data.receipt).toEqual(receipt);
    expect(verifyReceipt(event.data.receipt, keys, { tape: event.data.transitions }).problems).toEqual([]);
  });
});

describe("GET /goals/:id/receipt", () => {
  it("is a 409 for a goal that is not verified, a 404 for another tenant's goal or an unknown id", async () => {
    const failed = await loop.run(goalBody(PROGRAM.replace(".title()", "")));
    expect(failed.state).toBe("failed");
    expect(failed.receipt).toBeNull();
    // Every goal's tape is chained, not only verified ones.
    expect(failed.transitions.map((t) => t.hash)).toEqual(chainHashes(failed.transitions));
    const res = await loop.request("GET", `/goals/${failed.id}/receipt`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: { code: "LS_ERR_GOAL_STATE", details: { state: "failed" } } });

    const other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
    for (const [id, key] of [
      [goal.id, other.api_key],
      ["00000000-0000-4000-8000-000000000000", loop.tenant.api_key],
      ["not-a-uuid", loop.tenant.api_key],
    ] as const) {
      const r = await loop.request("GET", `/goals/${id}/receipt`, { key });
      expect(r.status, id).toBe(404);
      expect(r.body).toMatchObject({ error: { code: "LS_ERR_NOT_FOUND" } });
    }
    expect((await loop.request("GET", `/goals/${goal.id}/receipt`, { key: null })).status).toBe(401);
  });
});
