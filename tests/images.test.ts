// Issue 17: the production image is built from a base pinned by digest and installs no dev dependencies;
// workspace packages depend on each other by exact version, not "*".
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../scripts/lib/proc";

const dockerfile = fs.readFileSync(path.join(repoRoot, "docker/Dockerfile"), "utf8");
const manifest = (p: string) => JSON.parse(fs.readFileSync(path.join(repoRoot, p), "utf8")) as Record<string, Record<string, string> | undefined>;

describe("docker/Dockerfile", () => {
  it("pins every base image by digest", () => {
    const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(arg).toMatch(/^node:20-bookworm-slim@sha256:[0-9a-f]{64}$/);
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) expect(f).toBe("${NODE_IMAGE}");
  });

  it("installs only production dependencies in the stage that runs, and copies the generated client in", () => {
    const stages = dockerfile.split(/^FROM /m).slice(1);
    const runtime = stages.at(-1)!;
    expect(runtime).toMatch(/npm ci --omit=dev/);
    expect(runtime).not.toMatch(/--include=dev/);
    expect(runtime).toMatch(/COPY --from=build \/app\/packages\/db\/src\/generated/);
    // The processes run compiled JavaScript built in the build stage (scripts/build.ts), not tsx.
    expect(runtime).toMatch(/^CMD \["node", "apps\/api\/dist\/server\.mjs"\]$/m);
    expect(runtime).toMatch(/COPY --from=build \/app\/apps\/api\/dist apps\/api\/dist/);
  });

  it("never copies local keys into the image", () => {
    expect(fs.readFileSync(path.join(repoRoot, ".dockerignore"), "utf8").split("\n")).toContain(".loopsmith");
  });
});

describe("package manifests", () => {
  const workspaces = ["apps", "packages"].flatMap((group) => fs.readdirSync(path.join(repoRoot, group)).map((p) => `${group}/${p}`));

  it("run the production commands with runtime dependencies (tsx is one)", () => {
    const root = manifest("package.json");
    expect(root.dependencies?.tsx).toBeDefined();
    expect(root.devDependencies?.tsx).toBeUndefined();
  });

  it.each(workspaces)("%s depends on workspace packages by exact version", (dir) => {
    const m = manifest(`${dir}/package.json`);
    for (const [name, range] of Object.entries({ ...m.dependencies, ...m.devDependencies })) {
      if (!name.startsWith("@loopsmith/")) continue;
      const version = manifest(`packages/${name.slice("@loopsmith/".length)}/package.json`).version as unknown as string;
      expect(range, `${dir}: ${name}`).toBe(version);
    }
  });
});
