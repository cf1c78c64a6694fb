// Benchmark: what the public surface adds around a goal, through real API and runner processes. Prints:
// - POST /goals and GET /goals/:id latency as a client sees it (auth, rate limit, idempotency, validation);
// - the same POST replayed with its Idempotency-Key;
// - how long after a transition is written an SSE client has it;
// - how long after the terminal transition a webhook receiver has the signed event.
//
//   npx tsx bench/public-surface.ts [--requests 200] [--goals 5]
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import type { GoalView } from "@loopsmith/schemas";
import { demoGoal } from "../scripts/demo/scenario";
import { startStack } from "../scripts/lib/stack";
import { stat } from "./lib/stats";

const { values } = parseArgs({ options: { requests: { type: "string", default: "200" }, goals: { type: "string", default: "5" } } });
const requests = Number(values.requests);
const goals = Number(values.goals);


// A webhook receiver on loopback that notes when each event arrived.
const arrivals = new Map<string, { at: number; type: string }>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; data: { id: string } };
    arrivals.set(body.data.id, { at: Date.now(), type: body.type });
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const stack = await startStack({
  ...process.env,
  LOOPSMITH_SCRIPTED_MODEL: "true",
  QUEUE_PREFIX: `loopsmith-bench-surface-${process.pid}`,
  WEBHOOK_ALLOW_CIDRS: "127.0.0.1/32",
  RATE_LIMIT_PER_MINUTE: "100000",
});
const auth = { authorization: `Bearer ${stack.tenant.api_key}` };
const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const t = performance.now();
  const res = await fetch(`${stack.base}${path}`, {
    method,
    headers: { ...auth, ...(body ? { "content-type": "application/json" } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as Record<string, unknown>;
  return { ms: performance.now() - t, status: res.status, json };
};

try {
  console.log(`api + runner ready in ${Math.round(stack.startMs)} ms`);
  // Submissions cancelled at once, so that the runner stays out of the way of the request timings.
  const post: number[] = [];
  const replay: number[] = [];
  const get: number[] = [];
  const cancel: number[] = [];
  for (let i = 0; i < requests; i++) {
    const key = `bench-${process.pid}-${i}`;
    const p = await call("POST", "/goals", demoGoal(), { "idempotency-key": key });
    if (p.status !== 202) throw new Error(`POST ${p.status} ${JSON.stringify(p.json)}`);
    const id = p.json.id as string;
    const c = await call("POST", `/goals/${id}/cancel`);
    const r = await call("POST", "/goals", demoGoal(), { "idempotency-key": key });
    if (r.json.id !== id) throw new Error("idempotent replay returned another goal");
    const g = await call("GET", `/goals/${id}`);
    if (i === 0) continue; // warm-up
    post.push(p.ms);
    cancel.push(c.ms);
    replay.push(r.ms);
    get.push(g.ms);
  }
  console.log(`POST /goals (new, 1.1 KB CSV):        ${stat(post)}`);
  console.log(`POST /goals (idempotent replay):      ${stat(replay)}`);
  console.log(`POST /goals/:id/cancel:               ${stat(cancel)}`);
  console.log(`GET /goals/:id:                       ${stat(get)}`);

  // Live progress and webhooks on goals that really run.
  const sseLag: number[] = [];
  const hookLag: number[] = [];
  for (let i = 0; i < goals; i++) {
    const p = await call("POST", "/goals", demoGoal({ webhook: { url: hookUrl } }));
    const id = p.json.id as string;
    const res = await fetch(`${stack.base}/goals/${id}/events`, { headers: auth });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    let ended = false;
    while (!ended) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event === "end") ended = true;
        // Rows written before the stream opened arrive at once; only live ones measure the lag.
        if (event === "transition" && data) {
          const row = JSON.parse(data) as { seq: number; at: string };
          if (row.seq > 1) sseLag.push(Date.now() - Date.parse(row.at));
        }
      }
    }
    await reader.cancel().catch(() => undefined);
    const goal = (await call("GET", `/goals/${id}`)).json as unknown as GoalView;
    const terminalAt = Date.parse(goal.transitions.at(-1)!.at);
    const deadline = Date.now() + 15_000;
    while (!arrivals.has(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const arrival = arrivals.get(id);
    if (!arrival) throw new Error(`no webhook for ${id}`);
    hookLag.push(arrival.at - terminalAt);
  }
  console.log(`SSE: transition written -> client has it: ${stat(sseLag)}`);
  console.log(`webhook: terminal row -> receiver has it: ${stat(hookLag)}`);
} finally {
  await stack.stop();
  receiver.close();
}
