// issue 28 (item 4): the socket proxy's policy as pure functions. The create body the sandbox really sends
// is taken from packages/sandbox itself, so a new field there shows up here as a refusal before it does in
// production; every rule has a case below that fails when the rule is taken out.
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOG } from "@loopsmith/core";
import { BOOTSTRAP_CAPS, DEFAULT_LIMITS } from "@loopsmith/sandbox";
import { createContainers } from "../../../packages/sandbox/src/container";
import { ALLOWED_CAPS, checkCreateBody, imageAllowed, isSandboxContainer, loadProxyConfig, refusalBody, refused, routeRequest, type Allowed, type Refused } from "../src/policy";

// Bodies are edited field by field into what an attacker would send: any shape goes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

const IMAGE = "loopsmith/sandbox-python:0123456789ab";
const policy = { images: ["loopsmith/sandbox-*"], runtimes: ["runc", "runsc"] };
const ID = "a".repeat(64);

/** The body createDockerSandbox sends for a container (captured from its own code, not written out here). */
async function sandboxBody(ociRuntime = "runsc"): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> | undefined;
  const recorder = { createContainer: async (o: Record<string, unknown>) => ((body = o), {}) } as unknown as Docker;
  const containers = createContainers({ docker: recorder, image: IMAGE, runnerId: "policy-test", namespace: "ns", limits: DEFAULT_LIMITS, ociRuntime });
  await containers.create({ name: "loopsmith-program-00", entrypoint: ["python3", "-c", "pass"], env: { A: "1" }, purpose: "program", deadline: 1 });
  return JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
}

const allowed = (method: string, url: string) => {
  const r = routeRequest(method, url, policy);
  expect(r.ok, `${method} ${url}: ${(r as Refused).message}`).toBe(true);
  return r as Allowed;
};
const refusedWith = (method: string, url: string, re: RegExp, status = 403) => {
  const r = routeRequest(method, url, policy);
  expect(r.ok, `${method} ${url}`).toBe(false);
  expect((r as Refused).status).toBe(status);
  expect((r as Refused).message).toMatch(re);
};

describe("routeRequest: the calls LoopSmith's sandbox makes", () => {
  it.each([
    ["GET", "/_ping", "ping"],
    ["HEAD", "/_ping", "ping"],
    ["GET", "/v1.41/_ping", "ping"],
    ["GET", "/version", "version"],
    ["GET", "/info", "info"],
    ["GET", `/images/${IMAGE}/json`, "image inspect"],
    ["POST", "/containers/create?name=loopsmith-program-1", "container create"],
    ["POST", "/v1.47/containers/create", "container create"],
    ["GET", `/containers/json?all=true&filters=${encodeURIComponent('{"label":["loopsmith.sandbox=1","loopsmith.runner=r"]}')}`, "container list"],
    ["GET", `/containers/json?filters=${encodeURIComponent('{"label":{"loopsmith.sandbox=1":true}}')}`, "container list"],
    ["GET", `/containers/${ID}/json`, "container inspect"],
    ["POST", `/containers/${ID}/start`, "container start"],
    ["POST", `/containers/${ID}/attach?stream=true&stdin=true&stdout=true&stderr=true`, "container attach"],
    ["POST", `/containers/${ID}/wait`, "container wait"],
    ["POST", `/containers/${ID}/kill?signal=SIGKILL`, "container kill"],
    ["POST", `/containers/${ID}/rename?name=loopsmith-check-1`, "container rename"],
    ["DELETE", `/containers/${ID}?force=true`, "container remove"],
    ["GET", `/events?since=1&until=2&filters=${encodeURIComponent(`{"type":["container"],"container":["${ID}"],"event":["kill"]}`)}`, "events"],
  ])("%s %s is %s", (method, url, call) => {
    expect(allowed(method, url).call).toBe(call);
  });

  it("names the container to look up, sends the engine a rebuilt target, and only attach may be hijacked", () => {
    const kill = allowed("POST", "/v1.41/containers/loopsmith-program-1/kill?signal=SIGKILL");
    expect(kill.containers).toEqual(["loopsmith-program-1"]);
    expect(kill.target([ID])).toBe(`/v1.41/containers/${ID}/kill?signal=SIGKILL`);
    expect(kill.upgrade).toBe(false);
    expect(allowed("POST", `/containers/${ID}/attach?stream=1`).upgrade).toBe(true);
    expect(allowed("POST", "/containers/create").body).toBe(true);
    expect(allowed("POST", `/containers/${ID}/start`).body).toBe(false);
  });

  it("passes on only the query parameters the engine reads for the call (dockerode repeats every option there)", () => {
    const junk = `HostConfig=${encodeURIComponent('{"Privileged":true}')}&Image=alpine&Entrypoint=x`;
    expect(allowed("POST", `/containers/create?name=loopsmith-program-1&${junk}`).target([])).toBe("/containers/create?name=loopsmith-program-1");
    expect(allowed("POST", `/containers/${ID}/kill?signal=SIGKILL&${junk}`).target([ID])).toBe(`/containers/${ID}/kill?signal=SIGKILL`);
    expect(allowed("POST", `/containers/${ID}/attach?stream=true&stdin=true&hijack=true`).target([ID])).toBe(`/containers/${ID}/attach?stream=true&stdin=true`);
    expect(allowed("POST", `/containers/${ID}/start?detachKeys=x`).target([ID])).toBe(`/containers/${ID}/start`);
    // An array option, as dockerode spells it: the key repeated. Dropped, so not refused.
    expect(allowed("POST", "/containers/create?Entrypoint=python3&Entrypoint=-c&name=loopsmith-x").target([])).toBe("/containers/create?name=loopsmith-x");
    refusedWith("POST", "/containers/create?name=a&name=b", /"name" is given twice/, 400);
  });

  it("events: the container filter is resolved to full ids (the engine matches it as a prefix) and container events only", () => {
    const r = allowed("GET", `/events?until=2&filters=${encodeURIComponent('{"container":["a"],"event":["kill"]}')}`);
    expect(r.containers).toEqual(["a"]);
    const target = new URL(r.target([ID]), "http://x");
    expect(JSON.parse(target.searchParams.get("filters")!)).toEqual({ container: [ID], event: ["kill"], type: ["container"] });
    expect(target.searchParams.get("until")).toBe("2");
  });
});

describe("routeRequest: refusals", () => {
  it.each([
    ["POST", "/images/create?fromImage=alpine"],
    ["POST", "/build?t=x"],
    ["POST", "/images/load"],
    ["DELETE", `/images/${IMAGE}`],
    ["POST", `/images/${IMAGE}/tag?repo=x`],
    ["GET", "/volumes"],
    ["POST", "/volumes/create"],
    ["GET", "/networks"],
    ["POST", "/networks/create"],
    ["POST", "/swarm/init"],
    ["GET", "/plugins"],
    ["POST", "/plugins/pull"],
    ["POST", "/info"],
    ["POST", `/containers/${ID}/exec`],
    ["POST", `/exec/${ID}/start`],
    ["GET", `/containers/${ID}/archive?path=/`],
    ["PUT", `/containers/${ID}/archive?path=/`],
    ["POST", `/containers/${ID}/update`],
    ["POST", `/commit?container=${ID}`],
    ["GET", `/containers/${ID}/logs`],
    ["GET", `/containers/${ID}/export`],
    ["POST", `/containers/${ID}/stop`],
    ["GET", `/containers/${ID}/attach/ws`],
    ["POST", "/session"],
    ["GET", "/system/df"],
  ])("%s %s: not a call the runner makes", (method, url) => {
    refusedWith(method, url, /refused .*: LoopSmith's runner does not make this Engine API call/);
  });

  it("names the refused call in an engine-style JSON body, with the catalog's code", () => {
    const r = routeRequest("POST", "/v1.47/volumes/create", policy) as Refused;
    expect(JSON.parse(refusalBody(r))).toEqual({ message: "loopsmith socket proxy refused POST /v1.47/volumes/create: LoopSmith's runner does not make this Engine API call", code: "LS_ERR_FORBIDDEN" });
    for (const status of [400, 403, 413]) {
      const code = refused("x", "y", status).code!;
      expect(ERROR_CATALOG[code].status).toBe(status);
    }
  });

  it.each([
    ["/v1.47/containers/%2e%2e/images/create", /percent-encoded/],
    [`/containers/${ID}%2Fexec`, /percent-encoded/],
    ["/containers/create%00", /percent-encoded/],
    ["//containers/create", /empty, \. and \.\. path segments/],
    ["/containers//create", /empty, \. and \.\. path segments/],
    ["/containers/../build", /empty, \. and \.\. path segments/],
    ["/./containers/create", /empty, \. and \.\. path segments/],
    ["/containers/create/", /empty, \. and \.\. path segments/],
    ["/containers\\create", /backslashed/],
    ["http://docker/containers/create", /must be a path/],
  ])("path trick %s", (url, re) => {
    refusedWith("POST", url, re);
  });

  it("refuses Engine API versions that still read HostConfig from a start body", () => {
    refusedWith("POST", `/v1.23/containers/${ID}/start`, /versions below 1\.24/);
    refusedWith("GET", "/v1.9/_ping", /versions below 1\.24/);
    expect(allowed("GET", "/v1.24/_ping").target([])).toBe("/v1.24/_ping");
    expect(allowed("GET", "/v1.100/_ping").call).toBe("ping");
  });

  it("image inspect only of sandbox images", () => {
    refusedWith("GET", "/images/loopsmith/app:local/json", /image inspect of "loopsmith\/app:local": not a sandbox image/);
    refusedWith("GET", "/images/postgres:15/json", /not a sandbox image/);
  });

  it("lists only containers filtered by the sandbox label", () => {
    refusedWith("GET", "/containers/json?all=true", /filter by the label loopsmith\.sandbox=1/);
    refusedWith("GET", `/containers/json?filters=${encodeURIComponent('{"label":["loopsmith.sandbox=0"]}')}`, /filter by the label/);
    refusedWith("GET", `/containers/json?filters=${encodeURIComponent('{"label":{"loopsmith.sandbox=1":false}}')}`, /filter by the label/);
    refusedWith("GET", "/containers/json?filters=%7Bnot-json", /filters is not valid JSON/, 400);
  });

  it("a query parameter given twice is refused (which one the engine reads is not the proxy's to guess)", () => {
    const label = encodeURIComponent('{"label":["loopsmith.sandbox=1"]}');
    refusedWith("GET", `/containers/json?filters=${label}&filters=${encodeURIComponent("{}")}`, /"filters" is given twice/, 400);
    // The list's filters reach the engine as the proxy parsed them.
    expect(allowed("GET", `/containers/json?filters=${label}`).target([])).toBe(`/containers/json?filters=${encodeURIComponent('{"label":["loopsmith.sandbox=1"]}')}`);
  });

  it("events only with a container filter, and container events only", () => {
    refusedWith("GET", "/events", /filter by container/);
    refusedWith("GET", `/events?filters=${encodeURIComponent('{"type":["image"]}')}`, /filter by container/);
    refusedWith("GET", `/events?filters=${encodeURIComponent(`{"type":["network"],"container":["${ID}"]}`)}`, /only container events/);
    refusedWith("GET", `/events?filters=${encodeURIComponent('{"container":["../x"]}')}`, /not a container id or name/);
  });

  it("a container reference must be a container name or id", () => {
    refusedWith("POST", "/containers/-x/kill", /not a container id or name/);
  });
});

describe("checkCreateBody", () => {
  it("accepts what the sandbox sends, under runc and under runsc", async () => {
    for (const ociRuntime of ["runc", "runsc"]) {
      const body = await sandboxBody(ociRuntime);
      expect(body.Image).toBe(IMAGE);
      expect((body.HostConfig as { Runtime: string }).Runtime).toBe(ociRuntime);
      expect(checkCreateBody(body, policy)).toBeUndefined();
    }
  });

  it("SOCKET_PROXY_RUNTIMES=runsc: a runner cannot step down to runc", async () => {
    const gvisorOnly = { ...policy, runtimes: ["runsc"] };
    expect(checkCreateBody(await sandboxBody("runsc"), gvisorOnly)).toBeUndefined();
    expect(checkCreateBody(await sandboxBody("runc"), gvisorOnly)).toMatch(/HostConfig\.Runtime "runc" is not allowed \(SOCKET_PROXY_RUNTIMES: runsc\)/);
  });

  it("the capabilities allowed are the sandbox bootstrap's", () => {
    expect([...ALLOWED_CAPS].sort()).toEqual([...BOOTSTRAP_CAPS].sort());
  });

  const cases: [string, (b: Loose) => void, RegExp][] = [
    ["Privileged", (b) => (b.HostConfig.Privileged = true), /HostConfig\.Privileged must not be true/],
    ["a bind of /", (b) => (b.HostConfig.Binds = ["/:/host"]), /HostConfig\.Binds is not allowed/],
    ["a bind mount", (b) => (b.HostConfig.Mounts = [{ Type: "bind", Source: "/", Target: "/host" }]), /Mounts\[0\]\.Type must be "tmpfs"/],
    ["a volume mount", (b) => (b.HostConfig.Mounts = [{ Type: "volume", Source: "data", Target: "/data" }]), /Mounts\[0\]\.Type must be "tmpfs"/],
    ["a tmpfs mount smuggling a source", (b) => (b.HostConfig.Mounts = [{ Type: "tmpfs", Source: "/", Target: "/x" }]), /Mounts\[0\]\.Source is not allowed/],
    ["a device", (b) => (b.HostConfig.Devices = [{ PathOnHost: "/dev/sda", PathInContainer: "/dev/sda", CgroupPermissions: "rwm" }]), /HostConfig\.Devices is not allowed/],
    ["a device cgroup rule", (b) => (b.HostConfig.DeviceCgroupRules = ["b *:* rwm"]), /HostConfig\.DeviceCgroupRules is not allowed/],
    ["a device request", (b) => (b.HostConfig.DeviceRequests = [{ Driver: "nvidia", Count: -1 }]), /HostConfig\.DeviceRequests is not allowed/],
    ["volumes from another container", (b) => (b.HostConfig.VolumesFrom = ["docker-proxy"]), /HostConfig\.VolumesFrom is not allowed/],
    ["NetworkMode host", (b) => (b.HostConfig.NetworkMode = "host"), /HostConfig\.NetworkMode must be "none"/],
    ["NetworkMode bridge", (b) => (b.HostConfig.NetworkMode = "bridge"), /HostConfig\.NetworkMode must be "none"/],
    ["no NetworkMode (the default bridge)", (b) => delete b.HostConfig.NetworkMode, /HostConfig\.NetworkMode must be "none"/],
    ["CapAdd SYS_ADMIN", (b) => b.HostConfig.CapAdd.push("SYS_ADMIN"), /CapAdd may only hold .*, not SYS_ADMIN/],
    ["CapAdd CAP_SYS_PTRACE", (b) => (b.HostConfig.CapAdd = ["CAP_SYS_PTRACE"]), /not CAP_SYS_PTRACE/],
    ["CapAdd ALL", (b) => (b.HostConfig.CapAdd = ["ALL"]), /not ALL/],
    ["PidMode host", (b) => (b.HostConfig.PidMode = "host"), /HostConfig\.PidMode must not be set/],
    ["PidMode of another container", (b) => (b.HostConfig.PidMode = "container:docker-proxy"), /HostConfig\.PidMode must not be set/],
    ["IpcMode host", (b) => (b.HostConfig.IpcMode = "host"), /HostConfig\.IpcMode must be/],
    ["UsernsMode host", (b) => (b.HostConfig.UsernsMode = "host"), /HostConfig\.UsernsMode must not be set/],
    ["UTSMode host", (b) => (b.HostConfig.UTSMode = "host"), /HostConfig\.UTSMode must not be set/],
    ["CgroupnsMode host", (b) => (b.HostConfig.CgroupnsMode = "host"), /HostConfig\.CgroupnsMode must be/],
    ["seccomp unconfined", (b) => b.HostConfig.SecurityOpt.push("seccomp=unconfined"), /must not hold "seccomp=unconfined"/],
    ["apparmor unconfined", (b) => b.HostConfig.SecurityOpt.push("apparmor:unconfined"), /must not hold "apparmor:unconfined"/],
    ["systempaths unconfined", (b) => b.HostConfig.SecurityOpt.push("systempaths=unconfined"), /must not hold "systempaths=unconfined"/],
    ["a seccomp profile of the caller's", (b) => b.HostConfig.SecurityOpt.push('seccomp={"defaultAction":"SCMP_ACT_ALLOW"}'), /may only hold no-new-privileges/],
    ["label=disable", (b) => b.HostConfig.SecurityOpt.push("label=disable"), /may only hold no-new-privileges/],
    ["no no-new-privileges", (b) => (b.HostConfig.SecurityOpt = []), /must hold no-new-privileges/],
    ["no-new-privileges=false", (b) => (b.HostConfig.SecurityOpt = ["no-new-privileges=false"]), /may only hold no-new-privileges/],
    ["no PidsLimit", (b) => delete b.HostConfig.PidsLimit, /HostConfig\.PidsLimit must be set/],
    ["PidsLimit -1 (unlimited)", (b) => (b.HostConfig.PidsLimit = -1), /HostConfig\.PidsLimit must be set, above 0/],
    ["no memory limit", (b) => (b.HostConfig.Memory = 0), /HostConfig\.Memory must be set/],
    ["a logging driver that ships output off the host", (b) => (b.HostConfig.LogConfig = { Type: "gelf", Config: { "gelf-address": "udp://10.0.0.1:12201" } }), /LogConfig\.Type must be/],
    ["a restart policy (a field the sandbox does not send)", (b) => (b.HostConfig.RestartPolicy = { Name: "always" }), /HostConfig\.RestartPolicy is not allowed/],
    ["a sysctl", (b) => (b.HostConfig.Sysctls = { "kernel.core_pattern": "|/x" }), /HostConfig\.Sysctls is not allowed/],
    ["unmasked /proc paths", (b) => (b.HostConfig.MaskedPaths = []), /HostConfig\.MaskedPaths is not allowed/],
    ["another runtime", (b) => (b.HostConfig.Runtime = "runc-unsafe"), /HostConfig\.Runtime "runc-unsafe" is not allowed/],
    ["no runtime (the engine's default, whatever it is)", (b) => delete b.HostConfig.Runtime, /HostConfig\.Runtime is required/],
    ["a cgroup parent", (b) => (b.HostConfig.CgroupParent = "/"), /HostConfig\.CgroupParent is not allowed/],
    ["Go's case-insensitive field names", (b) => (b.HostConfig.privileged = true), /HostConfig\.privileged is not allowed/],
    ["Go's folding of ſ to s", (b) => (b.HostConfig["Bindſ"] = ["/:/host"]), /HostConfig\.Bindſ is not allowed/],
    ["a case-folded LogConfig field", (b) => (b.HostConfig.LogConfig = { Type: "none", type: "syslog" }), /LogConfig\.type is not allowed/],
    ["an anonymous volume", (b) => (b.Volumes = { "/data": {} }), /body\.Volumes is not allowed/],
    ["a network to join", (b) => (b.NetworkingConfig = { EndpointsConfig: { bridge: {} } }), /body\.NetworkingConfig is not allowed/],
    ["a top-level hostconfig spelt otherwise", (b) => (b.hostConfig = { Privileged: true }), /body\.hostConfig is not allowed/],
    ["no HostConfig", (b) => delete b.HostConfig, /body\.HostConfig is required/],
    ["an image not in the list", (b) => (b.Image = "alpine:3"), /body\.Image "alpine:3" is not a sandbox image/],
    ["the app image", (b) => (b.Image = "loopsmith/app:local"), /is not a sandbox image/],
    ["a sandbox name pinned to another image's digest", (b) => (b.Image = `loopsmith/sandbox-python@sha256:${"b".repeat(64)}`), /is not a sandbox image/],
    ["no sandbox label", (b) => delete b.Labels["loopsmith.sandbox"], /body\.Labels must hold loopsmith\.sandbox=1/],
    ["a sandbox label of another value", (b) => (b.Labels["loopsmith.sandbox"] = "true"), /body\.Labels must hold loopsmith\.sandbox=1/],
    ["Labels that are not strings", (b) => (b.Labels = { "loopsmith.sandbox": 1 }), /body\.Labels must map strings to strings/],
  ];
  it.each(cases)("refuses %s", async (_name, mutate, re) => {
    const body = await sandboxBody();
    mutate(body);
    expect(checkCreateBody(body, policy)).toMatch(re);
  });

  it("keys Go would ignore (null) and tmpfs mounts pass", async () => {
    const body = await sandboxBody();
    (body.HostConfig as Record<string, unknown>).privileged = null;
    (body.HostConfig as Record<string, unknown>).Mounts = [{ Type: "tmpfs", Target: "/scratch", TmpfsOptions: { SizeBytes: 1024 } }];
    expect(checkCreateBody(body, policy)).toBeUndefined();
    expect(checkCreateBody("x", policy)).toMatch(/JSON object/);
  });
});

describe("images and labels", () => {
  it("exact entries match exactly, prefix entries match names of the prefix without a digest", () => {
    const p = { images: ["registry.example/py@sha256:" + "c".repeat(64), "loopsmith/sandbox-*"] };
    expect(imageAllowed("registry.example/py@sha256:" + "c".repeat(64), p)).toBe(true);
    expect(imageAllowed("registry.example/py", p)).toBe(false);
    expect(imageAllowed("loopsmith/sandbox-node:compose", p)).toBe(true);
    expect(imageAllowed("loopsmith/sandbox", p)).toBe(false);
    expect(imageAllowed("docker.io/loopsmith/sandbox-python:x", p)).toBe(false);
    expect(imageAllowed("loopsmith/sandbox-python:x", { images: ["loopsmith/sandbox-python:compose"] })).toBe(false);
  });

  it("a sandbox container is one labelled loopsmith.sandbox=1", () => {
    expect(isSandboxContainer({ Id: ID, Config: { Labels: { "loopsmith.sandbox": "1" } } })).toBe(true);
    expect(isSandboxContainer({ Id: ID, Config: { Labels: { "loopsmith.runner": "r" } } })).toBe(false);
    expect(isSandboxContainer({ Id: ID, Config: { Labels: null } })).toBe(false);
    expect(isSandboxContainer({ message: "No such container" })).toBe(false);
  });
});

describe("loadProxyConfig", () => {
  it("defaults, a comma list of images, and refusals of a bad port or an allow-everything image", () => {
    expect(loadProxyConfig({})).toEqual({ host: "127.0.0.1", port: 2375, socketPath: "/var/run/docker.sock", policy: { images: ["loopsmith/sandbox-*"], runtimes: ["runc", "runsc"], maxBodyBytes: 1024 * 1024 } });
    const c = loadProxyConfig({ SOCKET_PROXY_IMAGES: "a/b:1, c/d:2,", SOCKET_PROXY_HOST: "0.0.0.0", DOCKER_SOCKET: "unix:///run/docker.sock", SOCKET_PROXY_PORT: "0" });
    expect(c).toMatchObject({ host: "0.0.0.0", port: 0, socketPath: "/run/docker.sock", policy: { images: ["a/b:1", "c/d:2"] } });
    expect(Object.isFrozen(c)).toBe(true);
    expect(() => loadProxyConfig({ SOCKET_PROXY_PORT: "x" })).toThrow(/SOCKET_PROXY_PORT/);
    expect(() => loadProxyConfig({ SOCKET_PROXY_IMAGES: "*" })).toThrow(/every image/);
    expect(() => loadProxyConfig({ SOCKET_PROXY_IMAGES: " , " })).toThrow(/names no image/);
    expect(loadProxyConfig({ SOCKET_PROXY_RUNTIMES: "runsc" }).policy.runtimes).toEqual(["runsc"]);
    expect(() => loadProxyConfig({ SOCKET_PROXY_RUNTIMES: "," })).toThrow(/names no runtime/);
  });
});
