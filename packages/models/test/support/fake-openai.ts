// A scripted stand-in for an OpenAI-compatible chat-completions server, for tests of the HTTP path.
// Self-contained (node builtins only): end-to-end tests elsewhere import it by relative path.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export type FakeUsage = { prompt_tokens: number; completion_tokens: number };
export type FakeAnswer =
  | { content: string; usage?: FakeUsage; delayMs?: number }
  | { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number };
/** An answer, or a function of the parsed request body that returns one (or a promise of one: a gate). */
export type FakeReply = FakeAnswer | ((requestBody: unknown) => FakeAnswer | Promise<FakeAnswer>);

export interface FakeOpenAI {
  /** Ends in /v1, as OpenAI-compatible clients expect. */
  baseURL: string;
  /** Every chat-completions request body, parsed, in order. */
  requests: unknown[];
  /** The request bodies whose response was written in full (the client got an answer). */
  completed: unknown[];
  /** The request bodies whose client went away before its (delayed) response was written. */
  aborted: unknown[];
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export async function startFakeOpenAI(replies: FakeReply[]): Promise<FakeOpenAI> {
  const requests: unknown[] = [];
  const completed: unknown[] = [];
  const aborted: unknown[] = [];
  let next = 0;
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      return send(404, { error: { message: `fake-openai: no route ${req.method} ${req.url}` } });
    }
    const body = await readJson(req).catch(() => undefined);
    requests.push(body);
    // A client that goes away (closed socket, killed process) before the answer is written never gets it.
    let gone = false;
    const left = new Promise<void>((resolve) =>
      res.once("close", () => {
        if (!res.writableFinished) gone = true;
        resolve();
      }),
    );
    res.once("finish", () => completed.push(body));
    const reply = replies[next++];
    if (reply === undefined) {
      return send(500, { error: { message: `fake-openai: script exhausted (request ${next} of ${replies.length} scripted)` } });
    }
    const answer = typeof reply === "function" ? await reply(body) : reply;
    if (answer.delayMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([left, new Promise((r) => (timer = setTimeout(r, answer.delayMs)))]);
      clearTimeout(timer);
    }
    if (gone || res.destroyed) {
      aborted.push(body);
      return;
    }
    if ("status" in answer) return send(answer.status, answer.body ?? { error: { message: `fake-openai: status ${answer.status}` } }, answer.headers);
    const usage = answer.usage ?? { prompt_tokens: 10, completion_tokens: 10 };
    send(200, {
      id: `chatcmpl-fake-${next}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: (body as { model?: string } | undefined)?.model ?? "fake",
      choices: [{ index: 0, message: { role: "assistant", content: answer.content }, finish_reason: "stop" }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    completed,
    aborted,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // fetch keeps connections alive; without this close() would wait for them to time out.
        server.closeAllConnections();
      }),
  };
}
