import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { z } from "zod";
import { baseConfigSchema, parseConfig } from "@loopsmith/core";
import { modelConfigSchema, pricingConfigSchema } from "@loopsmith/models";
import { webhookConfigSchema } from "@loopsmith/webhooks";
import { apiConfigSchema } from "../apps/api/src/config";
import { ENTRIES } from "../scripts/build";
import { runnerConfigSchema } from "../apps/runner/src/config";
import { loadProxyConfig, PROXY_ENV_VARS } from "../apps/socket-proxy/src/policy";
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
  ports?: (string | { host_ip?: string; published?: string | number; target?: number })[];
  depends_on?: Record<string, { condition?: string }>;
  networks?: string[] | Record<string, unknown>;
  cap_drop?: string[];
  read_only?: boolean;
}

// The passwords compose requires (it has none of its own), as an operator's .env would give them.
const PASSWORDS = { POSTGRES_PASSWORD: "0f3a9c1d2e4b5a6978", REDIS_PASSWORD: "7c2e1f0a9b8d3e4f56" };
/** The environment `docker compose` runs in: the file's defaults and the passwords, nothing of this machine's. */
const composeEnv = (extra: Record<string, string> = PASSWORDS) => ({ PATH: process.env.PATH, HOME: process.env.HOME, ...extra });

let cached: Record<string, Service> | undefined;
/** `docker compose config`, as compose itself resolves the file (merged anchors, interpolated variables); run once. */
function resolved(): Record<string, Service> {
  if (cached) return cached;
  const [cmd, ...args] = composeCommand();
  // The defaults of the file, not whatever the machine running the test has set.
  const out = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8", env: composeEnv() });
  return (cached = (parse(out) as { services: Record<string, Service> }).services);
}

const mounts = (s: Service) => (s.volumes ?? []).map((v) => (typeof v === "string" ? v : `${v.source ?? ""}:${v.target ?? ""}`));
const hosts = (s: Service) => (Array.isArray(s.extra_hosts) ? s.extra_hosts : Object.entries(s.extra_hosts ?? {}).map(([h, a]) => `${h}:${a}`)).map((h) => h.replace("=", ":"));
/** Published ports as host_ip:published:target, whichever form this compose prints them in. */
const ports = (s: Service) => (s.ports ?? []).map((p) => (typeof p === "string" ? p.replace(/\/tcp$/, "") : `${p.host_ip ?? ""}:${p.published ?? ""}:${p.target ?? ""}`));
const healthcheck = (s: Service) => [s.healthcheck?.test ?? []].flat().join(" ");

describe("docker-compose.yml", () => {
  it("passes `docker compose config` and wires postgres, redis, the sandbox image, api and runner", () => {
    const [cmd, ...args] = composeCommand();
    const out = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config", "--services"], { cwd: repoRoot, encoding: "utf8", env: composeEnv() });
    expect(out.trim().split("\n").sort()).toEqual(["api", "docker-proxy", "migrate", "postgres", "redis", "runner", "sandbox-image", "sandbox-image-node"]);
    const full = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8", env: composeEnv() });
    cached = (parse(full) as { services: Record<string, Service> }).services;
    // The sandbox image is built from its Dockerfile, and no sandbox ever gets the Docker socket.
    expect(full).toMatch(/context: .*sandbox-images\/python/);
    expect(full).toMatch(/network_mode: none/);
    // Both sandbox images: a JavaScript or TypeScript goal runs in the Node one, which the runner waits for.
    expect(full).toMatch(/context: .*sandbox-images\/node/);
    expect(cached["sandbox-image-node"]!.command!.join(" ")).toMatch(/^node -e/);
    expect(cached.runner!.environment?.SANDBOX_NODE_IMAGE).toBe("loopsmith/sandbox-node:compose");
    expect(cached.runner!.depends_on?.["sandbox-image-node"]?.condition).toBe("service_completed_successfully");
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
    // The API refuses the setting that once chose the engine (issue 28.6): readiness is the runners' only.
    expect(api.environment?.READY_SANDBOX_FROM).toBeUndefined();
    expect(api.environment?.DOCKER_HOST).toBeUndefined();
    // Only the socket proxy holds the engine's socket (issue 28); the runner reaches the engine through it.
    for (const [name, s] of Object.entries(services)) expect(mounts(s).some((m) => m.includes("docker.sock")), name).toBe(name === "docker-proxy");
  });

  it("issue 13: a model server on the host is reachable, every model variable and RUNNER_CONCURRENCY are passed", () => {
    const { api, runner } = resolved();
    for (const [name, s] of [["api", api!], ["runner", runner!]] as const) expect(hosts(s), name).toContain("host.docker.internal:host-gateway");
    // The runner calls the models: all of their variables. The API only checks a goal's model (issue 25).
    const modelVars = [...Object.keys(modelConfigSchema.shape), ...Object.keys(pricingConfigSchema.shape), "MODEL_OUTPUT_TOKENS_ESTIMATE"];
    const runnerOnly = ["DEFAULT_MODEL_PROVIDER", "MODEL_ALLOWLIST", "MODEL_PROVIDERS"];
    for (const v of modelVars.filter((m) => !runnerOnly.includes(m))) expect(Object.keys(runner!.environment ?? {}), `runner: ${v}`).toContain(v);
    for (const v of ["LOOPSMITH_SCRIPTED_MODEL", "DEFAULT_MODEL_PROVIDER", "OPENAI_COMPATIBLE_BASE_URL", "OPENAI_COMPATIBLE_MODEL", "ANTHROPIC_MODEL", "GOOGLE_MODEL", "MODEL_ALLOWLIST", "MODEL_PROVIDERS"])
      expect(Object.keys(api!.environment ?? {}), `api: ${v}`).toContain(v);
    expect(runner!.environment?.RUNNER_CONCURRENCY).toBe("1");
    expect(runner!.environment?.RUNNER_METRICS_PORT).toBe("9464");
  });

  describe("issue 25: each service is given only what its own code reads", () => {
    // What each service's process parses its environment with: the API and the runner their config;
    // migrate runs migrate-cli.ts (DATABASE_URL) and secret-key-cli.ts (the webhook config).
    const parsers: Record<string, z.ZodObject> = {
      api: apiConfigSchema,
      runner: runnerConfigSchema,
      migrate: baseConfigSchema.pick({ DATABASE_URL: true }).extend(webhookConfigSchema.shape),
    };
    const MODEL_KEYS = ["OPENAI_COMPATIBLE_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"];
    // Variables a service's parser knows but compose deliberately does not give it, each with the reason.
    const withheld: Record<string, Record<string, string>> = {
      api: {
        ...Object.fromEntries(MODEL_KEYS.map((k) => [k, "a secret only the runner, which calls the models, uses (MODEL_PROVIDERS stands in)"])),
        ...Object.fromEntries(
          ["OPENAI_COMPATIBLE_STRICT_JSON_SCHEMA", "ANTHROPIC_BASE_URL", "GOOGLE_BASE_URL", "MODEL_SCHEMA_RETRIES", "MODEL_HTTP_RETRIES", "MODEL_TIMEOUT_MS", "MODEL_MAX_OUTPUT_TOKENS"].map(
            (k) => [k, "how a model is called: the runner's"],
          ),
        ),
        ...Object.fromEntries(["WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_TIMEOUT_MS", "PUBLIC_BASE_URL"].map((k) => [k, "how a webhook is delivered: the runner's"])),
        SANDBOX_IMAGE: "the API never asks the engine: its readiness is the runners' heartbeats",
        SANDBOX_NODE_IMAGE: "the API never asks the engine: its readiness is the runners' heartbeats",
        DOCKER_HOST: "the API never talks to the engine (the runner reaches it through docker-proxy)",
      },
      runner: Object.fromEntries(["DEFAULT_MODEL_PROVIDER", "MODEL_ALLOWLIST", "MODEL_PROVIDERS"].map((k) => [k, "the API picks and checks a goal's model"])),
      migrate: Object.fromEntries(
        ["WEBHOOK_ALLOW_CIDRS", "WEBHOOK_MAX_ATTEMPTS", "WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_TIMEOUT_MS", "PUBLIC_BASE_URL"].map((k) => [k, "it only makes sure the webhook key exists"]),
      ),
    };
    const envOf = (name: string) => resolved()[name]!.environment ?? {};

    it("the API holds no receipt signing key and no model key, the runner no admin key, migrate none of them", () => {
      const receiptKeys = ["RECEIPT_SIGNING_KEY", "RECEIPT_KEY_ID", "RECEIPT_KEY_NOT_AFTER", "RECEIPT_KEYS_REVOKED"];
      for (const v of [...receiptKeys, ...MODEL_KEYS]) expect(Object.keys(envOf("api")), `api: ${v}`).not.toContain(v);
      expect(Object.keys(envOf("runner"))).not.toContain("ADMIN_API_KEY");
      for (const v of [...receiptKeys, ...MODEL_KEYS, "ADMIN_API_KEY"]) expect(Object.keys(envOf("migrate")), `migrate: ${v}`).not.toContain(v);
      // Not vacuous: each secret does reach the one service that uses it.
      for (const v of [...receiptKeys, ...MODEL_KEYS]) expect(Object.keys(envOf("runner")), `runner: ${v}`).toContain(v);
      expect(Object.keys(envOf("api"))).toContain("ADMIN_API_KEY");
    });

    it.each(Object.keys(parsers))("%s: parses its environment, reads every variable it is given, and is given every one it reads", (name) => {
      const parser = parsers[name]!;
      const env = envOf(name);
      const known = Object.keys(parser.shape);
      // Nothing it does not read (with the file's defaults, every required variable is there and valid).
      expect(Object.keys(env).filter((v) => !known.includes(v))).toEqual([]);
      expect(() => parseConfig(parser, Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v ?? undefined])))).not.toThrow();
      // Everything it reads that compose sets for any service, unless withheld above on purpose.
      const configured = new Set(Object.values(resolved()).flatMap((s) => Object.keys(s.environment ?? {})));
      const missing = known.filter((v) => configured.has(v) && !(v in env) && !(v in withheld[name]!));
      expect(missing).toEqual([]);
      // A withheld variable is really withheld (and really one the parser reads): the list stays honest.
      for (const v of Object.keys(withheld[name]!)) {
        expect(known, `${name}: ${v}`).toContain(v);
        expect(Object.keys(env), `${name}: ${v}`).not.toContain(v);
      }
    });
  });

  describe("issue 28: what a cautious operator runs", () => {
    it("has no password of its own: without POSTGRES_PASSWORD or REDIS_PASSWORD, compose refuses to start, naming the variable", () => {
      const [cmd, ...args] = composeCommand();
      for (const missing of Object.keys(PASSWORDS)) {
        const env = Object.fromEntries(Object.entries(PASSWORDS).filter(([k]) => k !== missing));
        const r = spawnSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8", env: composeEnv(env) });
        expect(r.status, missing).not.toBe(0);
        expect(r.stderr, missing).toContain(`set ${missing}`);
      }
      expect(fs.readFileSync(path.join(repoRoot, "docker-compose.yml"), "utf8")).not.toMatch(/postgres:postgres@|POSTGRES_PASSWORD: *postgres/);
    });

    it("Postgres and Redis take the operator's passwords, and every service reaches them with those", () => {
      const s = resolved();
      expect(s.postgres!.environment?.POSTGRES_PASSWORD).toBe(PASSWORDS.POSTGRES_PASSWORD);
      expect(s.redis!.environment?.REDISCLI_AUTH).toBe(PASSWORDS.REDIS_PASSWORD);
      expect(s.redis!.command!.join(" ")).toMatch(/--requirepass "\$\$?REDISCLI_AUTH"/);
      for (const name of ["api", "runner"]) {
        expect(s[name]!.environment?.REDIS_URL, name).toBe(`redis://:${PASSWORDS.REDIS_PASSWORD}@redis:6379`);
        expect(s[name]!.environment?.DATABASE_URL, name).toBe(`postgresql://postgres:${PASSWORDS.POSTGRES_PASSWORD}@postgres:5432/loopsmith`);
      }
      expect(s.migrate!.environment?.DATABASE_URL).toContain(`:${PASSWORDS.POSTGRES_PASSWORD}@`);
      // Postgres and Redis are reached on the compose network only.
      expect(ports(s.postgres!)).toEqual([]);
      expect(ports(s.redis!)).toEqual([]);
    });

    it("publishes the API on the host's loopback unless LOOPSMITH_BIND says otherwise", () => {
      expect(ports(resolved().api!)).toEqual(["127.0.0.1:3000:3000"]);
      const [cmd, ...args] = composeCommand();
      const out = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8", env: composeEnv({ ...PASSWORDS, LOOPSMITH_BIND: "0.0.0.0", LOOPSMITH_PORT: "8080" }) });
      const api = (parse(out) as { services: Record<string, Service> }).services.api!;
      expect(ports(api)).toEqual(["0.0.0.0:8080:3000"]);
    });
  });

  it("issue 13: long-running services restart, and the API and the runner have healthchecks", () => {
    const services = resolved();
    for (const name of ["postgres", "redis", "api", "runner", "docker-proxy"]) expect(services[name]!.restart, name).toBe("unless-stopped");
    for (const name of ["migrate", "sandbox-image", "sandbox-image-node"]) expect(services[name]!.restart, name).toBe("no");
    expect(healthcheck(services.api!)).toMatch(/127\.0\.0\.1:3000\/readyz/);
    expect(healthcheck(services.runner!)).toMatch(/127\.0\.0\.1:9464\/metrics/);
    expect(healthcheck(services["docker-proxy"]!)).toMatch(/127\.0\.0\.1:2375\/_ping/);
  });

  describe("issue 28: the runner reaches the engine only through the socket proxy", () => {
    const networksOf = (s: Service) => (Array.isArray(s.networks) ? s.networks : Object.keys(s.networks ?? { default: null })).sort();
    const config = (extra: Record<string, string> = {}) => {
      const [cmd, ...args] = composeCommand();
      const out = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8", env: composeEnv({ ...PASSWORDS, ...extra }) });
      return parse(out) as { services: Record<string, Service>; networks?: Record<string, { internal?: boolean } | null> };
    };

    it("the runner has no socket and DOCKER_HOST=tcp://docker-proxy:2375; the proxy mounts it, unpublished, without capabilities", () => {
      const { runner, "docker-proxy": proxy } = resolved();
      expect(mounts(runner!).some((m) => m.includes("docker.sock"))).toBe(false);
      expect(runner!.environment?.DOCKER_HOST).toBe("tcp://docker-proxy:2375");
      expect(runner!.depends_on?.["docker-proxy"]?.condition).toBe("service_healthy");
      expect(mounts(proxy!).some((m) => m.startsWith("/var/run/docker.sock:/var/run/docker.sock"))).toBe(true);
      expect(ports(proxy!)).toEqual([]);
      expect(proxy!.cap_drop).toEqual(["ALL"]);
      expect(proxy!.read_only).toBe(true);
      // It runs the proxy's own entry point from the app image.
      expect(proxy!.command!.at(-1)).toBe("apps/socket-proxy/dist/main.mjs");
    });

    it("the api, the runner and the proxy run the bundles scripts/build.ts compiles from their entry points (the image builds them)", () => {
      const services = resolved();
      const expected = { api: "apps/api/src/server.ts", runner: "apps/runner/src/main.ts", "docker-proxy": "apps/socket-proxy/src/main.ts" };
      for (const [name, source] of Object.entries(expected)) {
        const bundle = services[name]!.command!.at(-1)!;
        expect(services[name]!.command!.slice(0, 1), name).toEqual(["node"]);
        expect((ENTRIES as Record<string, string>)[bundle.replace(/\.mjs$/, "")], name).toBe(source);
        expect(fs.existsSync(path.join(repoRoot, source)), source).toBe(true);
      }
      expect(readDockerfile()).toMatch(/RUN .*npx tsx scripts\/build\.ts/);
      for (const dir of ["apps/api/dist", "apps/runner/dist", "apps/socket-proxy/dist", "apps/console/dist"]) expect(readDockerfile()).toContain(`COPY --from=build /app/${dir} ${dir}`);
    });

    it("port 2375 is on an internal network that only the runner and the proxy join", () => {
      const c = config();
      expect(c.networks?.["docker-api"]?.internal).toBe(true);
      for (const [name, s] of Object.entries(c.services)) expect(networksOf(s).includes("docker-api"), name).toBe(name === "runner" || name === "docker-proxy");
      expect(networksOf(c.services["docker-proxy"]!)).toEqual(["docker-api"]);
      // The runner still reaches Postgres, Redis and the models on the default network.
      expect(networksOf(c.services.runner!)).toEqual(["default", "docker-api"]);
    });

    it("the proxy reads every variable it is given, listens on 0.0.0.0:2375 and allows exactly the runner's sandbox images", () => {
      const check = (services: Record<string, Service>) => {
        const env = services["docker-proxy"]!.environment ?? {};
        expect(Object.keys(env).filter((k) => !PROXY_ENV_VARS.includes(k))).toEqual([]);
        const parsed = loadProxyConfig(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v ?? undefined])));
        expect(parsed).toMatchObject({ host: "0.0.0.0", port: 2375, socketPath: "/var/run/docker.sock" });
        const runner = services.runner!.environment!;
        expect(parsed.policy.images).toEqual([runner.SANDBOX_IMAGE, runner.SANDBOX_NODE_IMAGE]);
      };
      check(resolved());
      // An operator's own images reach both.
      const custom = config({ SANDBOX_IMAGE: "registry.example/py:1", SANDBOX_NODE_IMAGE: "registry.example/node:1" }).services;
      check(custom);
      expect(custom.runner!.environment?.SANDBOX_IMAGE).toBe("registry.example/py:1");
    });
  });
});

const readDockerfile = () => fs.readFileSync(path.join(repoRoot, "docker/Dockerfile"), "utf8");

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
