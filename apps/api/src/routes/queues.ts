// The queue dashboard (bull-board) at /admin/queues, behind ADMIN_API_KEY like every /admin route (the auth
// hook checks it). A browser cannot send a bearer header when it opens a page, so the dashboard also takes
// the key as a Basic password (any user name), and a 401 there asks the browser for it.
import type { FastifyPluginAsync } from "fastify";
import type { Queue } from "bullmq";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import { LoopSmithError, publicError } from "@loopsmith/core";
import { requireAdmin } from "../auth";

export const QUEUE_DASHBOARD_PATH = "/admin/queues";

export const queueDashboardRoutes: FastifyPluginAsync<{ queues: readonly Queue[] }> = async (app, opts) => {
  const adapter = new FastifyAdapter();
  adapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({ queues: opts.queues.map((q) => new BullMQAdapter(q)), serverAdapter: adapter, options: { uiConfig: { boardTitle: "LoopSmith queues" } } });
  // bull-board's own handler would answer our 401/403 as a 500 with the error's message: ours keeps the
  // catalog's status and body (and shows nothing internal for anything else).
  // (bull-board's type lists the statuses it uses itself, not 401: hence the cast.)
  type Answer = ReturnType<Parameters<typeof adapter.setErrorHandler>[0]>;
  adapter.setErrorHandler((err: Error) => {
    if (err instanceof LoopSmithError) return { status: err.status, body: err.toBody() } as unknown as Answer;
    app.log.error({ err }, "queue dashboard error");
    const shown = publicError(err);
    return { status: 500, body: new LoopSmithError(shown.code, shown.message).toBody() } as unknown as Answer;
  });
  // The app's auth hook already refused anyone without the admin key (these routes are registered with
  // access "admin"); the dashboard checks again itself, so that no registration mistake can open it.
  app.addHook("onRequest", async (req) => requireAdmin(req));
  app.addHook("onSend", async (_req, reply) => {
    if (reply.statusCode === 401) reply.header("www-authenticate", 'Basic realm="LoopSmith admin", charset="UTF-8"');
  });
  await app.register(adapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
};
