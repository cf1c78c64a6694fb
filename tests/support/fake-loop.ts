// A loop whose model is the fake OpenAI-compatible server (which records every request body), torn down
// after each test. For tests that assert on what reached the model.
import { afterEach } from "vitest";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../../packages/models/test/support/fake-openai";
import { startLoop, type Loop } from "./loop";

/** Call at the top of a test file; returns a starter for a fresh fake server and loop per test. */
export function fakeProviderLoops(model = "fake-coder") {
  let fake: FakeOpenAI | undefined;
  let loop: Loop | undefined;
  afterEach(async () => {
    await loop?.close();
    await fake?.close();
    loop = fake = undefined;
  });
  return async (replies: FakeReply[], opts: { env?: Record<string, string>; model?: string } = {}) => {
    fake = await startFakeOpenAI(replies);
    loop = await startLoop({ env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: opts.model ?? model, ...opts.env } });
    return { fake, loop };
  };
}
