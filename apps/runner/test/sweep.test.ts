// The runner's housekeeping (issue #5, "never silently lost"): a goal in a working state whose step job
// vanished from Redis, and a webhook delivery whose job was never queued, are found and rescheduled by the
// sweep. Real Postgres, Redis and Docker; the lost jobs are staged by deleting them from the queue.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGoal } from "../../../scripts/demo/scenario";
import { startReceiver, type Receiver } from "../../../packages/webhooks/test/support";
import { startLoop, type Loop } from "../../../tests/support/loop";

let loop: Loop;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver([204]);
  // Only the sweeps this test calls: the periodic one would race it.
  loop = await startLoop({ runner: false, runnerEnv: { SWEEP_QUIET_MS: "1000", SWEEP_INTERVAL_MS: "3600000" } });
});
afterAll(async () => {
  await loop?.close();
  await receiver?.close();
});

const quiet = () => new Promise((r) => setTimeout(r, 1200));

describe("runner sweep", () => {
  it("reschedules a goal whose step job was lost, and leaves goals with a job alone", async () => {
    const res = await loop.post(demoGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    // Redis lost the job (say, restarted without persistence) while no runner was up.
    await loop.queue.obliterate({ force: true });
    expect(await loop.queue.getJob(`${id}-v0`)).toBeUndefined();
    await quiet();

    const runner = await loop.startRunner();
    const swept = await runner.sweep();
    expect(swept.requeued).toBe(1);
    const done = await loop.waitForEnd(id, 60_000);
    expect(done.state).toBe("verified");
    expect(done.tape.split(" → ")[0]).toBe("plan");
    expect(done.transitions.filter((t) => t.to === "plan")).toHaveLength(1);
    // A terminal goal is nobody's business: a second sweep reschedules nothing.
    await quiet();
    expect((await runner.sweep()).requeued).toBe(0);
    await runner.close();
  });

  it("queues a webhook delivery that was committed but never queued", async () => {
    const res = await loop.post(demoGoal({ webhook: { url: receiver.url } }));
    const id = res.body.id as string;
    const cancelled = await loop.request("POST", `/goals/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    // The cancel committed its delivery row; its job is lost before any worker saw it.
    await loop.webhookQueue.obliterate({ force: true });
    await loop.queue.obliterate({ force: true });
    await quiet();
    expect(receiver.received).toHaveLength(0);

    const runner = await loop.startRunner();
    const swept = await runner.sweep();
    expect(swept.deliveries).toBe(1);
    const deadline = Date.now() + 15_000;
    while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(1);
    const event = JSON.parse(receiver.received[0]!.body) as { type: string; data: { id: string } };
    expect(event).toMatchObject({ type: "goal.cancelled", data: { id } });
    // The worker records the outcome after the receiver answered: on a busy machine, a moment later.
    const statuses = async () => ((await loop.request("GET", `/goals/${id}/deliveries`)).body.deliveries as { status: string }[]).map((d) => d.status);
    const until = Date.now() + 10_000;
    while ((await statuses()).join() === "pending" && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(await statuses()).toEqual(["delivered"]);
    await runner.close();
  });
});
