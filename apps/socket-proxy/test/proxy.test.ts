// issue 28 (item 4): the socket proxy in front of the real engine. The real sandbox runs through it, cold
// and pooled (attach's hijacked stream included), and everything a compromised runner would try instead is
// refused with the engine's own error shape, leaving the engine untouched (no container created, the
// unlabelled container still running).
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseOciRuntime, createDockerSandbox, dockerClient, engineRuntimes, ensureSandboxImage, nodeSandboxImageTag, pingDocker, removeLeftovers, type BuildMode, type RunRequest, type SandboxLog } from "@loopsmith/sandbox";
import { demoGoal } from "../../../scripts/demo/scenario";
import { startLoop } from "../../../tests/support/loop";
import { createSocketProxy, type ProxyLogEntry } from "../src/server";

// Bodies are edited field by field into what an attacker would send: any shape goes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

const SOCKET = "/var/run/docker.sock";
const engine = new Docker({ socketPath: SOCKET });
const quiet: SandboxLog = { info: () => undefined, warn: () => undefined };
const runnerId = `test-socket-proxy-${randomBytes(4).toString("hex")}`;
const otherImage = { repo: "loopsmith-proxy-test/not-a-sandbox", tag: randomBytes(4).toString("hex") };

let server: http.Server;
let port: number;
let image: string;
let viaProxy: Docker;
const log: ProxyLogEntry[] = [];
const cleanup: string[] = [];

beforeAll(async () => {
  await pingDocker(engine);
  image = (await ensureSandboxImage({ docker: engine, mode: (process.env.LOOPSMITH_SANDBOX_BUILD ?? "auto") as BuildMode, log: quiet })).tag;
  // An image that exists but is not a sandbox image: without the image rule its create would succeed.
  await engine.getImage(image).tag(otherImage);
  server = createSocketProxy({ socketPath: SOCKET, policy: { images: [image, nodeSandboxImageTag()], runtimes: ["runc", "runsc"], maxBodyBytes: 1024 * 1024 }, log: (e) => log.push(e) });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  viaProxy = dockerClient(`tcp://127.0.0.1:${port}`);
}, 900_000);

afterAll(async () => {
  server?.close();
  server?.closeAllConnections();
  for (const id of cleanup) await engine.getContainer(id).remove({ force: true }).catch(() => undefined);
  // Whatever a regression let through carries this file's runner label.
  await removeLeftovers(engine, { runnerId });
  await engine.getImage(`${otherImage.repo}:${otherImage.tag}`).remove().catch(() => undefined);
});

interface Answer {
  status: number;
  body: string;
  json: { message?: string; code?: string } | undefined;
}

/** One request exactly as written (path bytes included), straight to the proxy. */
function raw(method: string, path: string, opts: { body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers: { ...(opts.body !== undefined ? { "content-type": "application/json" } : {}), ...opts.headers } });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let json: Answer["json"];
        try {
          json = JSON.parse(body) as Answer["json"];
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body, json });
      });
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: "", json: undefined });
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

const expectRefused = (a: Answer, call: RegExp, status = 403) => {
  expect(a.status, a.body).toBe(status);
  expect(a.json?.message).toMatch(/^loopsmith socket proxy refused /);
  expect(a.json?.message).toMatch(call);
};

const mine = async () => engine.listContainers({ all: true, filters: { label: [`loopsmith.runner=${runnerId}`] } });

/** A create body as the sandbox sends it (the policy test checks it against packages/sandbox's own). */
const sandboxBody = (over: (b: Loose) => void = () => undefined) => {
  const b: Loose = {
    Image: image,
    Entrypoint: ["python3", "-c", "import time; time.sleep(300)"],
    User: "0:0",
    WorkingDir: "/work",
    Labels: { "loopsmith.sandbox": "1", "loopsmith.runner": runnerId, "loopsmith.purpose": "probe" },
    NetworkDisabled: true,
    HostConfig: {
      Runtime: "runc",
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: ["KILL"],
      SecurityOpt: ["no-new-privileges"],
      PidsLimit: 64,
      Memory: 64 * 1024 * 1024,
      LogConfig: { Type: "none", Config: {} },
    },
  };
  over(b);
  return JSON.stringify(b);
};

const script = (source: string, extra: Partial<RunRequest> = {}): RunRequest => ({
  files: [{ name: "in.csv", content: Buffer.from("a,b\n1,2\n3,4\n") }],
  script: { filename: "analysis.py", source },
  command: ["python3", "analysis.py"],
  timeoutMs: 60_000,
  ...extra,
});
const PROGRAM = [
  "import json, pandas as pd",
  "df = pd.read_csv('inputs/in.csv')",
  "print(int(df['a'].sum()), int(df['b'].sum()))",
  "json.dump({'rows': len(df)}, open('out/result.json', 'w'))",
].join("\n");

describe("the sandbox through the proxy", () => {
  it("runs a pandas program cold, kills one at its time limit, and leaves no container", async () => {
    await pingDocker(viaProxy);
    const sandbox = createDockerSandbox({ docker: viaProxy, image, runnerId, log: quiet });
    const res = await sandbox.run(script(PROGRAM));
    expect(res, res.stderr).toMatchObject({ exitCode: 0, stdout: "4 6\n", pooled: false, timedOut: false });
    expect(res.artifacts.map((a) => [a.name, a.content.toString()])).toEqual([["result.json", '{"rows": 2}']]);
    // stdin after the request's end: the hijacked stream's half-close reached the container.
    const echo = await sandbox.run({ files: [], command: ["python3", "-c", "import sys; print(repr(sys.stdin.read()))"], timeoutMs: 30_000 });
    expect(echo).toMatchObject({ exitCode: 0, stdout: "''\n" });
    const endless = await sandbox.run(script("while True:\n    pass\n", { timeoutMs: 2_000 }));
    expect(endless).toMatchObject({ exitCode: 124, timedOut: true });
    await sandbox.close();
    expect(await mine()).toEqual([]);
    expect(log.filter((e) => e.refused)).toEqual([]);
  }, 180_000);

  it("runs it in a pooled container (renamed when handed out), and the leftover sweep lists through it", async () => {
    // The runtime as a runner picks it, through the proxy: auto takes gVisor where the engine offers it.
    const { runtime } = chooseOciRuntime("auto", await engineRuntimes(viaProxy));
    expect(runtime).toBe("runsc");
    const sandbox = createDockerSandbox({ docker: viaProxy, image, runnerId, log: quiet, pool: { size: 1 }, ociRuntime: runtime });
    sandbox.start();
    await sandbox.warm({ timeoutMs: 120_000 });
    const res = await sandbox.run(script(PROGRAM));
    expect(res, res.stderr).toMatchObject({ exitCode: 0, stdout: "4 6\n", pooled: true, ociRuntime: "runsc" });
    await sandbox.close();
    await sandbox.settled();
    expect(await removeLeftovers(viaProxy, { runnerId })).toBe(0);
    expect(await mine()).toEqual([]);
    expect(log.filter((e) => e.refused)).toEqual([]);
    // The calls the sandbox made (issue 28: the proxy allows these and nothing else the runner does).
    const calls = [...new Set(log.map((e) => e.call))].sort();
    console.log(`socket proxy: the sandbox made ${log.length} calls of ${calls.length} kinds: ${calls.join(", ")}`);
    expect(calls).toEqual(
      ["container attach", "container create", "container inspect", "container kill", "container list", "container remove", "container rename", "container start", "container wait", "image inspect", "info", "ping"].sort(),
    );
  }, 180_000);
});

describe("a goal through the proxy", () => {
  it("the demo goal verifies with the runner's sandbox (its pool, its checks' runs) behind the proxy", async () => {
    const before = log.length;
    const loop = await startLoop({ dockerHost: `tcp://127.0.0.1:${port}` });
    try {
      const goal = await loop.run(demoGoal());
      expect(goal.state).toBe("verified");
      expect(goal.executions.map((e) => e.exit_code)).toEqual([1, 0, 0]);
    } finally {
      await loop.close();
    }
    const mine = log.slice(before);
    expect(mine.filter((e) => e.refused)).toEqual([]);
    expect(mine.filter((e) => e.call === "container create").length).toBeGreaterThanOrEqual(3);
  }, 240_000);
});

describe("containers the runner may and may not touch", () => {
  let labelled: string;
  let foreign: string;
  beforeAll(async () => {
    const l = await engine.createContainer(JSON.parse(sandboxBody()) as Docker.ContainerCreateOptions);
    labelled = l.id;
    cleanup.push(labelled);
    // Not a sandbox: no loopsmith.sandbox label (the proxy's own container, a database, anyone's).
    const f = await engine.createContainer({ ...(JSON.parse(sandboxBody()) as Docker.ContainerCreateOptions), Labels: { "loopsmith.runner": runnerId } });
    foreign = f.id;
    cleanup.push(foreign);
    await Promise.all([l.start(), f.start()]);
  }, 60_000);

  it("kill, exec, start, attach, rename, inspect and remove of a container without the label are refused, and it keeps running", async () => {
    const name = ((await engine.getContainer(foreign).inspect()).Name ?? "").replace(/^\//, "");
    expectRefused(await raw("POST", `/containers/${foreign}/kill?signal=SIGKILL`), /container kill of container [0-9a-f]{64}: it is not a LoopSmith sandbox container/);
    expectRefused(await raw("POST", `/containers/${name}/kill`), /container kill of container .*: it is not a LoopSmith sandbox container/);
    expectRefused(await raw("DELETE", `/v1.41/containers/${foreign}?force=true`), /container remove of container .*: it is not a LoopSmith sandbox container/);
    expectRefused(await raw("POST", `/containers/${foreign}/start`), /container start of container .*: it is not/);
    expectRefused(await raw("POST", `/containers/${foreign}/rename?name=loopsmith-x-${runnerId}`), /container rename of container .*: it is not/);
    expectRefused(await raw("GET", `/containers/${foreign}/json`), /container inspect of container .*: it is not/);
    expectRefused(await raw("POST", `/containers/${foreign}/attach?stream=1&stdin=1&stdout=1`, { headers: { connection: "Upgrade", upgrade: "tcp" } }), /container attach of container .*: it is not/);
    expectRefused(await raw("POST", `/containers/${foreign}/exec`, { body: JSON.stringify({ Cmd: ["id"], AttachStdout: true }) }), /POST \/containers\/[0-9a-f]{64}\/exec: LoopSmith's runner does not make this Engine API call/);
    expectRefused(await raw("GET", `/events?until=${Math.ceil(Date.now() / 1000)}&filters=${encodeURIComponent(JSON.stringify({ container: [foreign] }))}`), /events of container .*: it is not/);
    const state = (await engine.getContainer(foreign).inspect()).State;
    expect(state.Running).toBe(true);
    expect((await engine.getContainer(foreign).inspect()).Name).toBe(`/${name}`);
  }, 60_000);

  it("the same calls on a labelled container go through (events, inspect, kill, remove)", async () => {
    const since = Date.now() / 1000 - 60;
    const c = viaProxy.getContainer(labelled);
    expect((await c.inspect()).Id).toBe(labelled);
    await c.kill({ signal: "SIGKILL" });
    const stream = await viaProxy.getEvents({ since, until: Date.now() / 1000 + 0.5, filters: { type: ["container"], container: [labelled], event: ["kill"] } });
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
    expect(Buffer.concat(chunks).toString()).toContain('"Action":"kill"');
    await c.remove({ force: true });
    await expect(engine.getContainer(labelled).inspect()).rejects.toMatchObject({ statusCode: 404 });
    // Gone: the sandbox's removal races see the engine's 404, as they would without the proxy.
    const again = await raw("DELETE", `/containers/${labelled}?force=true`);
    expect(again.status).toBe(404);
    expect(again.json?.message).toMatch(/No such container/);
  }, 60_000);

  it("a start's body never reaches the engine (API versions before 1.24 read a HostConfig from it), and old versions and a hijacked start are refused", async () => {
    const created = await engine.createContainer(JSON.parse(sandboxBody()) as Docker.ContainerCreateOptions);
    cleanup.push(created.id);
    // The engine (1.24 and later) answers 400 to a start with a body; the proxy drops it, so the start succeeds.
    const started = await raw("POST", `/v1.41/containers/${created.id}/start`, { body: JSON.stringify({ Privileged: true, Binds: ["/:/host"] }) });
    expect(started.status, started.body).toBe(204);
    const hc = (await created.inspect()).HostConfig;
    expect(hc.Privileged).toBe(false);
    expect(hc.Binds ?? []).toEqual([]);
    await created.remove({ force: true });
    expectRefused(await raw("POST", `/v1.23/containers/${foreign}/start`), /versions below 1\.24/);
    expectRefused(await raw("POST", `/containers/${foreign}/start`, { headers: { connection: "Upgrade", upgrade: "tcp" } }), /container start: only attach may upgrade/);
  });
});

describe("container create: only sandboxes", () => {
  it.each<[string, (b: Loose) => void, RegExp]>([
    ["Privileged", (b) => (b.HostConfig.Privileged = true), /HostConfig\.Privileged must not be true/],
    ["a bind of /", (b) => (b.HostConfig.Binds = ["/:/host"]), /HostConfig\.Binds is not allowed/],
    ["NetworkMode host", (b) => (b.HostConfig.NetworkMode = "host"), /HostConfig\.NetworkMode must be "none"/],
    ["an image not in the list", (b) => (b.Image = `${otherImage.repo}:${otherImage.tag}`), /body\.Image .* is not a sandbox image/],
    ["CapAdd SYS_ADMIN", (b) => (b.HostConfig.CapAdd = ["SYS_ADMIN"]), /CapAdd may only hold .*, not SYS_ADMIN/],
    ["PidMode host", (b) => (b.HostConfig.PidMode = "host"), /HostConfig\.PidMode must not be set/],
    ["no sandbox label", (b) => delete b.Labels["loopsmith.sandbox"], /Labels must hold loopsmith\.sandbox=1/],
    ["seccomp unconfined", (b) => b.HostConfig.SecurityOpt.push("seccomp=unconfined"), /must not hold "seccomp=unconfined"/],
    ["Go's case-insensitive privileged", (b) => (b.HostConfig.privileged = true), /HostConfig\.privileged is not allowed/],
  ])("refuses %s with 403 and creates nothing", async (_name, mutate, re) => {
    const name = `loopsmith-proxy-test-${randomBytes(4).toString("hex")}`;
    const a = await raw("POST", `/v1.41/containers/create?name=${name}`, { body: sandboxBody(mutate) });
    expectRefused(a, new RegExp(`container create: not a LoopSmith sandbox: .*${re.source}`));
    expect(a.json?.code).toBe("LS_ERR_FORBIDDEN");
    expect(await engine.listContainers({ all: true, filters: { name: [name] } })).toEqual([]);
  });

  it("GET /info shows the engine's runtimes and nothing else of it", async () => {
    const a = await raw("GET", "/v1.41/info");
    expect(a.status, a.body).toBe(200);
    expect(Object.keys(a.json!)).toEqual(["Runtimes", "DefaultRuntime"]);
    const shown = JSON.parse(a.body) as { Runtimes: Record<string, object> };
    expect(shown.Runtimes).toMatchObject({ runc: {}, runsc: {} });
    expect(Object.values(shown.Runtimes).every((v) => Object.keys(v as object).length === 0)).toBe(true);
  });

  it("the same body, unmodified, is created (so each refusal above is the rule's doing)", async () => {
    const a = await raw("POST", "/containers/create", { body: sandboxBody() });
    expect(a.status, a.body).toBe(201);
    const id = (JSON.parse(a.body) as { Id: string }).Id;
    cleanup.push(id);
    expect((await raw("DELETE", `/containers/${id}?force=true`)).status).toBe(204);
  });

  it("a body over the cap is refused with 413, one that is not JSON with 400", async () => {
    const big = sandboxBody((b) => (b.Env = [`PAD=${"x".repeat(1024 * 1024)}`]));
    const a = await raw("POST", "/containers/create", { body: big });
    expect(a.status).toBe(413);
    expect(a.json).toMatchObject({ code: "LS_ERR_PAYLOAD_TOO_LARGE", message: expect.stringMatching(/container create: the body is over 1048576 bytes/) });
    const b = await raw("POST", "/containers/create", { body: "{not json" });
    expect(b.status).toBe(400);
    expect(b.json?.code).toBe("LS_ERR_VALIDATION");
  });
});

describe("calls the runner never makes", () => {
  it.each([
    ["GET", "/containers/json?all=1", /container list: only LoopSmith's containers may be listed/],
    ["POST", "/images/create?fromImage=alpine&tag=3", /POST \/images\/create: LoopSmith's runner does not make/],
    ["POST", "/build?t=evil", /POST \/build: /],
    ["GET", "/volumes", /GET \/volumes: /],
    ["POST", "/volumes/create", /POST \/volumes\/create: /],
    ["GET", "/networks", /GET \/networks: /],
    ["POST", "/networks/create", /POST \/networks\/create: /],
    ["POST", "/swarm/init", /POST \/swarm\/init: /],
    ["GET", "/plugins", /GET \/plugins: /],
    ["POST", "/info", /POST \/info: /],
    ["GET", "/events", /events: only the events of LoopSmith's containers/],
    ["GET", `/images/loopsmith-proxy-test/not-a-sandbox:x/json`, /image inspect of .*: not a sandbox image/],
    ["POST", "/v1.47/containers/%2e%2e/images/create", /percent-encoded/],
    ["POST", "/v1.47/containers/create%2F..%2F..%2Fbuild", /percent-encoded/],
    ["POST", "//containers/create", /empty, \. and \.\. path segments/],
    ["POST", "/containers/../build", /empty, \. and \.\. path segments/],
    ["GET", "/v1.41//info", /empty, \. and \.\. path segments/],
  ])("%s %s", async (method, path, re) => {
    expectRefused(await raw(method, path), re);
  });

  it("a refused pull pulled nothing and a refused list listed nothing (the engine never saw them)", async () => {
    const before = log.length;
    await raw("POST", "/images/create?fromImage=alpine");
    const entry = log.slice(before).find((e) => e.url.startsWith("/images/create"));
    expect(entry).toMatchObject({ status: 403, refused: expect.stringContaining("POST /images/create") });
    expect(entry?.call).toBeUndefined();
  });
});
