// What a program learns about the host, under each engine runtime. runc runs it as a namespaced process of
// the host's kernel: that kernel answers its system calls, and /proc and /sys show the host through the
// namespaces. gVisor (runsc) answers them with a kernel of its own in user space: the same probe finds
// nothing of the host. Each fact is read on the host side in the same run, so the runc case shows the
// probe can see a leak, and the runsc case that the second wall closes it.
import { readdirSync, readFileSync } from "node:fs";
import { release } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDockerSandbox, removeLeftovers, type PooledSandbox } from "../src/index";
import { docker, ensureTestImage, quietLog, requireRuntimes, testRunnerId } from "./support";

const runnerId = testRunnerId("second-wall");
let image: string;
let dockerRoot: string;

const PROBE = `import ctypes, json, os
def read(p, n=4096):
    try:
        with open(p, "rb") as f:
            return f.read(n).decode("utf-8", "replace")
    except OSError as e:
        return "ERR " + type(e).__name__
def ls(p):
    try:
        return sorted(os.listdir(p))
    except OSError:
        return []
libc = ctypes.CDLL(None, use_errno=True)
traced = libc.ptrace(16, 1, 0, 0)  # PTRACE_ATTACH to PID 1
print(json.dumps({
    "release": os.uname().release,
    "cmdline": read("/proc/cmdline").strip(),
    "mountinfo": read("/proc/self/mountinfo", 1 << 16),
    "block": ls("/sys/block"),
    "kallsyms": read("/proc/kallsyms", 64),
    "ptrace_pid1": [traced, ctypes.get_errno()],
}))
`;

interface Seen {
  release: string;
  cmdline: string;
  mountinfo: string;
  block: string[];
  kallsyms: string;
  ptrace_pid1: [number, number];
}

/** The host facts the probe found, by name. */
function leaks(seen: Seen): string[] {
  const host = {
    release: release(),
    cmdline: readFileSync("/proc/cmdline", "utf8").trim(),
    block: readdirSync("/sys/block").sort(),
  };
  const found: string[] = [];
  if (seen.release === host.release) found.push("the host's kernel release");
  if (seen.cmdline === host.cmdline) found.push("the host's boot command line");
  if (seen.mountinfo.includes(dockerRoot)) found.push("the engine's storage paths");
  if (host.block.length > 0 && host.block.every((b) => seen.block.includes(b))) found.push("the host's block devices");
  if (!seen.kallsyms.startsWith("ERR")) found.push("the host kernel's symbol table");
  return found;
}

beforeAll(async () => {
  image = await ensureTestImage();
  await requireRuntimes(["runc", "runsc"]);
  dockerRoot = ((await docker.info()) as { DockerRootDir: string }).DockerRootDir;
}, 900_000);

afterAll(async () => {
  await removeLeftovers(docker, { runnerId });
});

describe.each(["runc", "runsc"])("under %s", (ociRuntime) => {
  let sandbox: PooledSandbox;
  beforeAll(() => {
    sandbox = createDockerSandbox({ docker, image, runnerId, log: quietLog, ociRuntime });
  });

  it(ociRuntime === "runsc" ? "the program learns nothing of the host's kernel, boot, storage or devices" : "the program reads the host's kernel, boot line, storage paths and devices", async () => {
    const res = await sandbox.run({ files: [], script: { filename: "probe.py", source: PROBE }, command: ["python3", "probe.py"], timeoutMs: 30_000 });
    expect(res.exitCode, res.stderr).toBe(0);
    expect(res.ociRuntime).toBe(ociRuntime);
    const seen = JSON.parse(res.stdout) as Seen;
    if (ociRuntime === "runsc") expect(leaks(seen)).toEqual([]);
    else {
      expect(leaks(seen)).toEqual([
        "the host's kernel release",
        "the host's boot command line",
        "the engine's storage paths",
        "the host's block devices",
        "the host kernel's symbol table",
      ]);
    }
    // Under both, the program cannot trace PID 1 (no CAP_SYS_PTRACE, another uid, no-new-privileges).
    expect(seen.ptrace_pid1[0]).toBe(-1);
    expect(seen.ptrace_pid1[1]).toBe(1); // EPERM
  });
});
