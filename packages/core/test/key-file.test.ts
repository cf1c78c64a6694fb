import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createKeyFileOnce } from "../src/key-file";

describe("createKeyFileOnce", () => {
  it("creates the file once (0600, directory 0700); a second call keeps the first content and leaves no temp file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "key-file-"));
    const file = path.join(dir, "nested", "key");
    expect(createKeyFileOnce(file, () => "first\n")).toBe(true);
    expect(createKeyFileOnce(file, () => "second\n")).toBe(false);
    expect(fs.readFileSync(file, "utf8")).toBe("first\n");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(path.dirname(file))).toEqual(["key"]);
  });

  it("does not call content() when the file exists", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "key-file-"));
    const file = path.join(dir, "key");
    fs.writeFileSync(file, "kept");
    expect(createKeyFileOnce(file, () => { throw new Error("called"); })).toBe(false);
    expect(fs.readFileSync(file, "utf8")).toBe("kept");
  });
});
