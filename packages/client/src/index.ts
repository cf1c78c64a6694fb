// @loopsmith/client: the LoopSmith API, typed from its OpenAPI document (openapi-fetch over the generated
// types). `createClient({ url, apiKey })` answers `{ data, error, response }` for every call, e.g.
//   const { data, error } = await client.GET("/goals/{id}", { params: { path: { id } } });
import createFetchClient, { type Client } from "openapi-fetch";
import type { components, operations, paths, webhooks } from "./generated/openapi";

export type { components, operations, paths, webhooks };
export type Schemas = components["schemas"];
/** A goal as GET /goals/:id returns it. */
export type Goal = Schemas["Goal"];
/** The body of POST /goals as a client sends it: defaulted fields optional (the "Input" variant). */
export type CreateGoal = Schemas["CreateGoalInput"];
export type ApiError = Schemas["Error"];
export type LoopSmithClient = Client<paths>;

export interface ClientOptions {
  /** The API's base URL, e.g. http://127.0.0.1:3000. */
  url: string;
  /** A tenant API key (lsk_...), sent as Authorization: Bearer. */
  apiKey?: string;
  /** Another fetch (tests, proxies); default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

export function createClient(opts: ClientOptions): LoopSmithClient {
  return createFetchClient<paths>({
    baseUrl: opts.url.replace(/\/+$/, ""),
    headers: { ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}), ...opts.headers },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
