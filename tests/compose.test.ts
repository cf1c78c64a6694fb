import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { modelConfigSchema, pricingConfigSchema } from "@loopsmith/models";
import { repoRoot } from "../scripts/lib/proc";

function composeCommand(): string[] {
  if (spawnSync("docker", ["compose", "version"]).status === 0) return ["docker", "compose"];
  if (spawnSync("docker-compose", ["version"]).status === 0) return ["docker-compose"];
  throw new Error("neither `docker compose` nor `docker-compose` is installed: run `npm test`, whose setup installs docker-compose");
}

interface Service {
  user?: string;
  environment?: Record<string, string | null>;
  volumes?: (string | { source?: string; target?: string })[];
  extra_hosts?: string[] | Record<string, string>;
  healthcheck?: { test?: string[] | string };
  restart?: string;
  command?: string[];
}

let cached: Record<string, Service> | undefined;
/** `docker compose config`, as compose itself resolves the file (merged anchors, interpolated variables); run once. */
function resolved(): Record<string, Service> {
  if (cached) return cached;
  const [cmd, ...args] = composeCommand();
  // An empty environment: the defaults of the file, not whatever the machine running the test has set.
  const out = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  return (cached = (parse(out) as { services: Record<string, Service> }).services);
}

const mounts = (s: Service) => (s.volumes ?? []).map((v) => (typeof v === "string" ? v : `${v.source ?? ""}:${v.target ?? ""}`));
const hosts = (s: Service) => (Array.isArray(s.extra_hosts) ? s.extra_hosts : Object.entries(s.extra_hosts ?? {}).map(([h, a]) => `${h}:${a}`)).map((h) => h.replace("=", ":"));
const healthcheck = (s: Service) => [s.healthcheck?.test ?? []].flat().join(" ");

describe("docker-compose.yml", () => {
  it("passes `docker compose config` and wires postgres, redis, the sandbox image, api and runner", () => {
    const [cmd, ...args] = composeCommand();
    const out = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config", "--services"], { cwd: repoRoot, encoding: "utf8" });
    expect(out.trim().split("\n").sort()).toEqual(["api", "migrate", "postgres", "redis", "runner", "sandbox-image"]);
    const full = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    cached = (parse(full) as { services: Record<string, Service> }).services;
    // The sandbox image is built from its Dockerfile, and no sandbox ever gets the Docker socket.
    expect(full).toMatch(/context: .*sandbox-images\/python/);
    expect(full).toMatch(/network_mode: none/);
    // The API (where `tenant-cli` runs too) and the runner share the generated webhook secret key (issue 17);
    // the migrate service generates it, unprivileged, before either starts (issue 13).
    expect(full.match(/(- webhook-key:|source: webhook-key)/g)).toHaveLength(3);
    expect(resolved().migrate!.command!.join(" ")).toMatch(/secret-key-cli\.ts/);
  });

  it("issue 13: the API runs unprivileged without the Docker socket, reading the sandbox's readiness from the runners", () => {
    const services = resolved();
    const api = services.api!;
    expect(api.user).toBe("node");
    expect(mounts(api).some((m) => m.includes("docker.sock"))).toBe(false);
    expect(api.environment?.READY_SANDBOX_FROM).toBe("runners");
    expect(api.environment?.DOCKER_HOST).toBeUndefined();
    // Only the runner talks to the engine.
    for (const [name, s] of Object.entries(services)) expect(mounts(s).some((m) => m.includes("docker.sock")), name).toBe(name === "runner");
  });

  it("issue 13: a model server on the host is reachable, every model variable and RUNNER_CONCURRENCY are passed", () => {
    const { api, runner } = resolved();
    const modelVars = [...Object.keys(modelConfigSchema.shape), ...Object.keys(pricingConfigSchema.shape), "MODEL_OUTPUT_TOKENS_ESTIMATE"];
    for (const [name, s] of [["api", api!], ["runner", runner!]] as const) {
      expect(hosts(s), name).toContain("host.docker.internal:host-gateway");
      for (const v of [...modelVars, "METRICS_TOKEN", "ADMIN_API_KEY", "WEBHOOK_RETRY_SCHEDULE", "PUBLIC_BASE_URL"]) expect(Object.keys(s.environment ?? {}), `${name}: ${v}`).toContain(v);
    }
    expect(runner!.environment?.RUNNER_CONCURRENCY).toBe("1");
    expect(runner!.environment?.RUNNER_METRICS_PORT).toBe("9464");
  });

  it("issue 13: long-running services restart, and the API and the runner have healthchecks", () => {
    const services = resolved();
    for (const name of ["postgres", "redis", "api", "runner"]) expect(services[name]!.restart, name).toBe("unless-stopped");
    for (const name of ["migrate", "sandbox-image"]) expect(services[name]!.restart, name).toBe("no");
    expect(healthcheck(services.api!)).toMatch(/127\.0\.0\.1:3000\/readyz/);
    expect(healthcheck(services.runner!)).toMatch(/127\.0\.0\.1:9464\/metrics/);
  });
});

describe("docker/Dockerfile", () => {
  const dockerfile = fs.readFileSync(path.join(repoRoot, "docker/Dockerfile"), "utf8");
  const workspaces = ["apps", "packages"].flatMap((d) => fs.readdirSync(path.join(repoRoot, d)).filter((w) => fs.existsSync(path.join(repoRoot, d, w, "package.json"))).map((w) => `${d}/${w}`));

  it("issue 13: installs dependencies from the manifests alone, before the sources are copied, in every stage", () => {
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages).toHaveLength(2);
    for (const stage of stages) {
      const lines = stage.split("\n");
      const install = lines.findIndex((l) => /^RUN npm ci\b/.test(l));
      const sources = lines.findIndex((l) => /^COPY \. \./.test(l));
      expect(install).toBeGreaterThan(0);
      expect(sources).toBeGreaterThan(install);
      const before = lines.slice(0, install).filter((l) => l.startsWith("COPY "));
      expect(before[0]).toBe("COPY package.json package-lock.json ./");
      // Nothing but manifests before the install: a source change must not invalidate it.
      for (const l of before.slice(1)) expect(l).toMatch(/^COPY ((apps|packages)\/[\w-]+\/package\.json) \1$/);
      const copied = before.slice(1).map((l) => l.split(" ")[1]!.replace(/\/package\.json$/, ""));
      expect(copied.sort()).toEqual([...workspaces].sort());
    }
  });
});
