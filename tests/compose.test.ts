import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../scripts/lib/proc";

function composeCommand(): string[] {
  if (spawnSync("docker", ["compose", "version"]).status === 0) return ["docker", "compose"];
  if (spawnSync("docker-compose", ["version"]).status === 0) return ["docker-compose"];
  throw new Error("neither `docker compose` nor `docker-compose` is installed: run `npm test`, whose setup installs docker-compose");
}

describe("docker-compose.yml", () => {
  it("passes `docker compose config` and wires postgres, redis, the sandbox image, api and runner", () => {
    const [cmd, ...args] = composeCommand();
    const out = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config", "--services"], { cwd: repoRoot, encoding: "utf8" });
    expect(out.trim().split("\n").sort()).toEqual(["api", "migrate", "postgres", "redis", "runner", "sandbox-image"]);
    const full = execFileSync(cmd!, [...args, "-f", "docker-compose.yml", "config"], { cwd: repoRoot, encoding: "utf8" });
    // The sandbox image is built from its Dockerfile, and no sandbox ever gets the Docker socket.
    expect(full).toMatch(/context: .*sandbox-images\/python/);
    expect(full).toMatch(/network_mode: none/);
    // The API (where `tenant-cli` runs too) and the runner share the generated webhook secret key (issue 17).
    expect(full.match(/(- webhook-key:|source: webhook-key)/g)).toHaveLength(2);
  });
});
