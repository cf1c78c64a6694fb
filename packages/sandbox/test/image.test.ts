import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_IMAGE_DIR, ensureSandboxImage, imageExists, sandboxImageTag } from "../src/index";
import { docker, ensureTestImage, quietLog } from "./support";

describe("sandboxImageTag", () => {
  const scratch = mkdtempSync(join(tmpdir(), "loopsmith-tag-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("is a content hash of the image directory", () => {
    const tag = sandboxImageTag();
    expect(tag).toMatch(/^loopsmith\/sandbox-python:[0-9a-f]{12}$/);
    const copy = join(scratch, "python");
    cpSync(DEFAULT_IMAGE_DIR, copy, { recursive: true });
    expect(sandboxImageTag(copy)).toBe(tag);
    writeFileSync(join(copy, "packages.txt"), "python3\npython3-numpy\npython3-pandas\npython3-scipy\n");
    expect(sandboxImageTag(copy)).not.toBe(tag);
  });
});

describe("ensureSandboxImage", () => {
  let tag: string;
  beforeAll(async () => {
    tag = await ensureTestImage();
  }, 900_000);

  it("skips quickly when the image exists", async () => {
    const res = await ensureSandboxImage({ docker, log: quietLog });
    expect(res).toMatchObject({ tag, built: false });
    expect(res.seconds).toBeLessThan(5);
    expect(res.imageId).toMatch(/^sha256:/);
  });

  it("imageExists tells present from missing", async () => {
    expect(await imageExists(docker, tag)).toBe(true);
    expect(await imageExists(docker, "loopsmith/sandbox-python:does-not-exist")).toBe(false);
  });

  it("the image runs as uid 10001 in /work with python3 by default", async () => {
    const info = await docker.getImage(tag).inspect();
    expect(info.Config.User).toBe("10001");
    expect(info.Config.WorkingDir).toBe("/work");
    expect(info.Config.Cmd).toEqual(["python3"]);
    expect(info.Config.Env).toEqual(expect.arrayContaining(["PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"]));
  });
});
