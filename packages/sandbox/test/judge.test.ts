// issue 25.6 and issue 26: who may touch what inside a sandbox container. The bootstrap starts as root with
// a handful of capabilities and runs the program as uid 10001, so PID 1 and the bootstrap are out of the
// program's reach; protected files stay root's and read-only for the whole run; a judge runs beside the
// program under uid 10002, with files the program can neither read nor change, and the two talk only
// through pipes. Every case runs cold and pooled (the pool's program runs in the pre-imported interpreter).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDockerSandbox, removeLeftovers, type PooledSandbox, type RunRequest, type RunResult } from "../src/index";
import { docker, ensureTestImage, quietLog, SUITE_RUNTIME, testRunnerId } from "./support";

const runnerId = testRunnerId("judge");
let cold: PooledSandbox;
let pooled: PooledSandbox;
let sandbox: PooledSandbox;

beforeAll(async () => {
  const image = await ensureTestImage();
  cold = createDockerSandbox({ docker, image, runnerId, log: quietLog, ociRuntime: SUITE_RUNTIME });
  pooled = createDockerSandbox({ docker, image, runnerId, log: quietLog, pool: { size: 1 }, ociRuntime: SUITE_RUNTIME });
  pooled.start();
}, 900_000);

afterAll(async () => {
  await pooled?.close();
  await removeLeftovers(docker, { runnerId });
});

async function py(source: string, extra: Partial<RunRequest> = {}): Promise<RunResult> {
  if (sandbox === pooled) await pooled.warm({ n: 1, timeoutMs: 60_000 });
  return sandbox.run({ files: [], script: { filename: "analysis.py", source }, command: ["python3", "analysis.py"], timeoutMs: 30_000, ...extra });
}

const file = (path: string, text: string) => ({ path, content: Buffer.from(text) });

describe.each(["cold", "pooled"] as const)("%s", (kind) => {
  beforeEach(() => {
    sandbox = kind === "cold" ? cold : pooled;
  });

  it("issue 25.6: PID 1 and the bootstrap cannot be read, traced or signalled by the program", async () => {
    const res = await py(`
import ctypes, errno, os, signal
libc = ctypes.CDLL(None, use_errno=True)
for pid in (1, os.getppid()):
    for what in ("mem", "environ", "maps", "fd/0"):
        try:
            with open("/proc/%d/%s" % (pid, what), "rb") as f:
                f.read(1)
            print(pid, what, "READ")
        except OSError as e:
            print(pid, what, errno.errorcode[e.errno])
    r = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
    print(pid, "ptrace", "ATTACHED" if r == 0 else errno.errorcode[ctypes.get_errno()])
    try:
        os.kill(pid, signal.SIGKILL)
        print(pid, "kill", "SENT")
    except OSError as e:
        print(pid, "kill", errno.errorcode[e.errno])
print(os.getuid(), os.getppid() != 1)
`);
    expect(res.exitCode).toBe(0);
    const lines = res.stdout.trim().split("\n");
    expect(lines.at(-1)).toBe("10001 True");
    const got = lines.slice(0, -1);
    expect(got).toHaveLength(12);
    // Every attempt refused: EACCES or EPERM, never READ, ATTACHED or SENT. gVisor shows a non-dumpable
    // process's environment and memory map to other uids (tests/exploits/pid1-reach.test.ts asserts that
    // they hold nothing the program lacks); its memory, descriptors, tracing and signals stay refused.
    const gvisorShows = (line: string) => SUITE_RUNTIME === "runsc" && / (environ|maps) READ$/.test(line);
    for (const line of got) if (!gvisorShows(line)) expect(line).toMatch(/ (EACCES|EPERM)$/);
  });

  // A rename of the program's own file over a protected one: protected-replace.test.ts, under each runtime.
  it("protected files stay root's and read-only for the whole run; the program may add files beside them", async () => {
    const res = await py(
      `
import os
def attempt(what, f):
    try:
        f()
        print(what, "DONE")
    except OSError as e:
        print(what, type(e).__name__)
attempt("write", lambda: open("tests/test_x.py", "a").write("x"))
attempt("unlink", lambda: os.unlink("tests/test_x.py"))
attempt("rename", lambda: os.rename("tests/test_x.py", "tests/moved.py"))
attempt("chmod", lambda: os.chmod("tests/test_x.py", 0o666))
attempt("rename dir", lambda: os.rename("tests", "elsewhere"))
attempt("add beside", lambda: open("tests/new.py", "w").write("y"))
attempt("node_modules", lambda: open("node_modules/x.js", "w").write("y"))
attempt("own file", lambda: open("mine.py", "a").write("z"))
print(open("tests/test_x.py").read())
st = os.stat("tests/test_x.py")
print(st.st_uid, oct(st.st_mode & 0o7777), oct(os.stat("tests").st_mode & 0o7777), oct(os.stat(".").st_mode & 0o7777))
print(os.environ["HOME"], sorted(os.listdir(os.environ["HOME"])))
attempt("home .node_modules", lambda: open(os.environ["HOME"] + "/.node_modules/x.js", "w").write("y"))
attempt("home .npmrc", lambda: open(os.environ["HOME"] + "/.npmrc", "w").write("y"))
attempt("home rename", lambda: os.rename(os.environ["HOME"] + "/.local", os.environ["HOME"] + "/gone"))
attempt("pycache", lambda: open("/tmp/.loopsmith-pycache/x.pyc", "w").write("y"))
`,
      { workFiles: [file("tests/test_x.py", "def test(): pass\n"), file("mine.py", "")], protect: ["tests/test_x.py"], isolate: true, env: { HOME: "/tmp/home" } },
    );
    expect(res.stderr).toBe("");
    expect(res.stdout.split("\n")).toEqual([
      "write PermissionError",
      "unlink PermissionError",
      "rename PermissionError",
      "chmod PermissionError",
      "rename dir PermissionError",
      "add beside DONE",
      "node_modules PermissionError",
      "own file DONE",
      "def test(): pass",
      "",
      "0 0o444 0o1777 0o1777",
      "/tmp/home ['.local', '.node_libraries', '.node_modules', '.npmrc']",
      "home .node_modules PermissionError",
      "home .npmrc PermissionError",
      "home rename PermissionError",
      "pycache PermissionError",
      "",
    ]);
  });

  it("a judge runs as its own uid beside the program, with files the program can neither read nor change", async () => {
    const judge = `
import json, os, sys
out = os.fdopen(3, "w")
back = os.fdopen(4)
out.write(json.dumps({"ask": 6}) + "\\n")
out.flush()
reply = json.loads(back.readline())
os.makedirs("out", exist_ok=True)
json.dump({"reply": reply, "uid": os.getuid(), "secret": open("tests/hidden.txt").read()}, open("out/report.json", "w"))
print("judge done")
sys.exit(3)
`;
    const program = `
import json, os
ask = json.loads(os.fdopen(4).readline())
def attempt(what, f):
    try:
        f()
        return what + " DONE"
    except OSError as e:
        return what + " " + type(e).__name__
seen = [
    attempt("read", lambda: open(".judge/tests/hidden.txt").read()),
    attempt("list", lambda: os.listdir(".judge")),
    attempt("rename", lambda: os.rename(".judge", "gone")),
    attempt("write report", lambda: open(".judge/out/report.json", "w").write("{}")),
]
w = os.fdopen(3, "w")
w.write(json.dumps({"answer": ask["ask"] * 7, "uid": os.getuid(), "seen": seen}) + "\\n")
w.flush()
`;
    const res = await py(program, {
      workFiles: [file(".judge/judge.py", judge), file(".judge/tests/hidden.txt", "the answer key")],
      judge: { dir: ".judge", command: ["python3", "-I", "judge.py"] },
    });
    expect(res.judge).toBeDefined();
    expect(res.judge!.exitCode, res.stderr).toBe(3);
    expect(res.judge!.files.map((f) => f.name)).toEqual(["report.json"]);
    const report = JSON.parse(res.judge!.files[0]!.content.toString()) as Record<string, unknown>;
    expect(report).toEqual({
      reply: { answer: 42, uid: 10001, seen: ["read PermissionError", "list PermissionError", "rename PermissionError", "write report PermissionError"] },
      uid: 10002,
      secret: "the answer key",
    });
    expect(res.stdout).toContain("judge done");
    // The program is stopped once the judge ends: its own status when it ended first (it had nothing
    // left to do), SIGKILL's when the judge was quicker (seen in a full run, the pooled interpreter
    // still tearing down).
    expect([0, 137]).toContain(res.exitCode);
  });

  it("a judge whose program dies at once still ends, reading end-of-file", async () => {
    const res = await py("import os\nos._exit(0)\n", {
      workFiles: [file(".judge/judge.py", "import os, sys\nprint(repr(os.fdopen(4).read()))\nsys.exit(0)\n")],
      judge: { dir: ".judge", command: ["python3", "-I", "judge.py"] },
    });
    expect(res.judge?.exitCode).toBe(0);
    expect(res.stdout).toBe("''\n");
  });

  it("the channel: what the program writes to fd 3 comes back, apart from its stdout and its files", async () => {
    const res = await py("import os\nos.write(3, b'observed: 1\\n')\nprint('out')\n", { channel: true });
    expect(res.exitCode).toBe(0);
    expect(res.channel).toEqual({ text: "observed: 1\n", clipped: false });
    expect(res.stdout).toBe("out\n");
  });
});

describe("requests the sandbox refuses", () => {
  it("a protected path that is not a work file, a judge directory that is not one plain name, a judge with a channel", async () => {
    const base = { files: [], command: ["true"], timeoutMs: 1000 };
    await expect(cold.run({ ...base, protect: ["nope.py"] })).rejects.toThrow(/protected path "nope.py"/);
    await expect(cold.run({ ...base, judge: { dir: "a/b", command: ["true"] } })).rejects.toThrow(/judge directory/);
    await expect(cold.run({ ...base, judge: { dir: "out", command: ["true"] } })).rejects.toThrow(/judge directory/);
    await expect(cold.run({ ...base, judge: { dir: ".judge", command: ["true"] }, channel: true })).rejects.toThrow(/not both/);
  });
});
