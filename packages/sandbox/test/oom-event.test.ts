// The engine's event log as the second witness of an out-of-memory kill: the engine flags State.OOMKilled
// from the exit event, and an OOM event that reaches it after the exit (seen under gVisor on a loaded
// machine) is logged but not flagged. oomLogged finds the logged one, and only that.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oomLogged } from "../src/container";
import { docker, ensureTestImage, SUITE_RUNTIME } from "./support";

let image: string;
const made: string[] = [];

beforeAll(async () => {
  image = await ensureTestImage();
});
afterAll(async () => {
  await Promise.allSettled(made.map((id) => docker.getContainer(id).remove({ force: true })));
});

/** Runs `code` in a container of 128 MiB under the suite's runtime; its id and exit once it ended. */
async function ran(code: string) {
  const since = Date.now();
  const c = await docker.createContainer({
    Image: image,
    Cmd: ["python3", "-c", code],
    NetworkDisabled: true,
    HostConfig: { Memory: 128 * 1024 * 1024, MemorySwap: 128 * 1024 * 1024, Runtime: SUITE_RUNTIME },
  });
  made.push(c.id);
  await c.start();
  const { StatusCode } = (await c.wait()) as { StatusCode: number };
  return { id: c.id, since, status: StatusCode };
}

describe("oomLogged", () => {
  it("finds the OOM event of a container the kernel killed for memory", async () => {
    const r = await ran("b = bytearray(512 * 1024 * 1024)");
    expect(r.status).toBe(137);
    expect(await oomLogged(docker, r.id, r.since)).toBe(true);
  });

  it("finds none for a container that ended 137 for another reason, or one that ended by itself", async () => {
    // A process killed by SIGKILL ends 137; PID 1 cannot be, so the program says 137 itself.
    const killed = await ran("import sys\nsys.exit(137)");
    expect(killed.status).toBe(137);
    expect(await oomLogged(docker, killed.id, killed.since, 1)).toBe(false);
    const ended = await ran("print('fine')");
    expect(ended.status).toBe(0);
    expect(await oomLogged(docker, ended.id, ended.since, 1)).toBe(false);
  });
});
