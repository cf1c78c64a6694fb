import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../scripts/lib/proc";

// scripts/setup.sh provisions local services itself; for anything it cannot provide it must say what is
// missing and how to provide it, and exit non-zero. (.invalid names never resolve: no traffic leaves.)
// The limit only stops a hung setup: with everything up it takes about 15 s on an idle machine, and more
// than 60 s was seen beside a loaded suite (migrate, the build and the image checks each start tsx).
function setup(env: Record<string, string>) {
  const res = spawnSync("bash", ["scripts/setup.sh"], { cwd: repoRoot, env: { ...process.env, ...env }, encoding: "utf8", timeout: 150_000 });
  return { code: res.status, out: res.stdout + res.stderr };
}

describe("scripts/setup.sh", () => {
  it("names an unreachable remote Postgres and how to fix it", () => {
    const { code, out } = setup({ DATABASE_URL: "postgresql://u:p@db.invalid:5432/x" });
    expect(code).not.toBe(0);
    expect(out).toMatch(/Postgres at db\.invalid:5432 is not reachable/);
    expect(out).toMatch(/DATABASE_URL/);
  });

  it("names an unreachable remote Redis", () => {
    const { code, out } = setup({ REDIS_URL: "redis://cache.invalid:6390" });
    expect(code).not.toBe(0);
    expect(out).toMatch(/Redis at cache\.invalid:6390 is not reachable/);
    expect(out).toMatch(/REDIS_URL/);
  });

  it("names an unreachable Docker engine given by DOCKER_HOST", () => {
    const { code, out } = setup({ DOCKER_HOST: "unix:///nonexistent/docker.sock" });
    expect(code).not.toBe(0);
    expect(out).toMatch(/Docker engine at DOCKER_HOST=unix:\/\/\/nonexistent\/docker.sock is not reachable/);
  });

  it("returns quickly and succeeds when everything is up (idempotent)", () => {
    const { code, out } = setup({});
    expect(code, out).toBe(0);
    expect(out).toMatch(/npm dependencies: up to date/);
    expect(out).toMatch(/build skipped/);
    expect(out).not.toMatch(/installing Debian packages|npm ci|built \(/);
  }, 160_000);
});
