// issue 26: test_suite's process boundary for real (the sandbox, cold and pooled). The tests run in the judge's
// process and reach the program through the stand-in module: plain values keep their exact types, the program's
// classes, dataclasses, enums, named tuples, exceptions, generators, NumPy arrays, in-place changes to arguments,
// module-level lists, dicts and sets, and printed output all behave as the tests expect; a lying __eq__ and a
// callback do not cross. A wrong program fails the same tests; isolation none runs the same suite in-process.
import { SUITE_RUNTIME } from "../../../packages/sandbox/test/support";
import { afterAll, describe, expect, it } from "vitest";
import { createDockerSandbox, dockerClient, sandboxImageTag } from "@loopsmith/sandbox";
import type { CheckSpec } from "@loopsmith/schemas";
import { planCheckRuns, runCheck, type VerifyContext } from "@loopsmith/verifier";

const docker = dockerClient();
const cold = createDockerSandbox({ docker, image: sandboxImageTag(), runnerId: "bridge-test", ociRuntime: SUITE_RUNTIME });
const pooled = createDockerSandbox({ docker, image: sandboxImageTag(), runnerId: "bridge-test", pool: { size: 1 }, ociRuntime: SUITE_RUNTIME });
pooled.start();
afterAll(async () => {
  await pooled.close();
});

const SOLUTION = String.raw`import dataclasses, enum, collections
from typing import NamedTuple
PI = 3.14
class Color(enum.Enum):
    RED = 1
    GREEN = 2
class InsufficientFunds(ValueError):
    pass
@dataclasses.dataclass
class Point:
    x: int
    y: int
    def norm2(self):
        return self.x * self.x + self.y * self.y
class Pair(NamedTuple):
    a: int
    b: str
class Account:
    def __init__(self, balance=0):
        self.balance = balance
    def withdraw(self, n):
        if n > self.balance:
            raise InsufficientFunds("only %d left" % self.balance)
        self.balance -= n
        return self.balance
    def __len__(self):
        return 3
class Liar:
    def __eq__(self, other):
        return True
def add(a, b):
    return a + b
def pairs():
    return (1, 2), [1, 2], {1, 2}, {(1, 2): "x"}, b"ab"
def liar():
    return Liar()
def gen(n):
    for i in range(n):
        yield i * i
def sort_in_place(xs):
    xs.sort()
def shout(s):
    print("shouting", s)
    return s.upper()
def color():
    return Color.GREEN
def pair():
    return Pair(1, "x")
def is_red(c):
    return c is Color.RED
def arr():
    import numpy as np
    return np.arange(6).reshape(2, 3)
def boom():
    raise KeyError("k")
def call(f):
    return f(1)
REGISTRY = set()
NAMES = ["c", "a"]
TABLE = {}
def has(x):
    return x in REGISTRY
def names():
    return NAMES
def table():
    return TABLE
`;

const TESTS = String.raw`import pytest
import solution
from solution import add, Point, Account, InsufficientFunds, Color

def test_plain():
    assert add(2, 3) == 5
    assert add("a", "b") == "ab"
    assert solution.PI == 3.14

def test_types():
    t, l, s, d, b = solution.pairs()
    assert type(t) is tuple and type(l) is list and type(s) is set and d == {(1, 2): "x"} and b == b"ab"

def test_liar_cannot_cross():
    assert solution.liar() != 5

def test_dataclass_eq_and_method():
    p = Point(3, 4)
    assert p == Point(3, 4)
    assert p != Point(3, 5)
    assert p.norm2() == 25
    assert p.x == 3
    assert isinstance(p, Point)

def test_exceptions():
    a = Account(10)
    assert a.withdraw(3) == 7
    with pytest.raises(InsufficientFunds, match="only 7"):
        a.withdraw(100)
    with pytest.raises(ValueError):
        a.withdraw(100)
    with pytest.raises(KeyError):
        solution.boom()
    assert len(a) == 3
    a.balance = 50
    assert a.balance == 50

def test_gen_and_mutation(capsys):
    assert list(solution.gen(4)) == [0, 1, 4, 9]
    xs = [3, 1, 2]
    solution.sort_in_place(xs)
    assert xs == [1, 2, 3]
    assert solution.shout("hi") == "HI"
    assert capsys.readouterr().out == "shouting hi\n"

def test_enum_and_namedtuple():
    assert solution.color() == Color.GREEN
    assert solution.color() is Color.GREEN
    assert solution.is_red(Color.RED) is True
    p = solution.pair()
    assert p == (1, "x") and p.b == "x"

def test_numpy():
    import numpy as np
    a = solution.arr()
    assert a.shape == (2, 3)
    np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3))

def test_callback_refused():
    with pytest.raises(TypeError, match="cannot be sent"):
        solution.call(lambda x: x)

def test_missing():
    with pytest.raises(AttributeError):
        solution.nope

def test_live_module_state():
    solution.REGISTRY.add("x")
    assert "x" in solution.REGISTRY
    assert solution.has("x") is True
    solution.NAMES.append("b")
    solution.NAMES.sort()
    assert solution.names() == ["a", "b", "c"]
    solution.TABLE["k"] = 1
    assert solution.table() == {"k": 1}
    assert solution.NAMES == ["a", "b", "c"]
`;

async function judge(sandbox: typeof cold, source: string, params: Record<string, unknown> = {}) {
  const spec: CheckSpec = { id: "test_suite", kind: "deterministic", description: "", params: { tests: ["test_bridge.py"], module: "solution", min_tests: 11, ...params } };
  const checkerFiles = [{ name: "test_bridge.py", content: Buffer.from(TESTS) }];
  const program = { filename: "solution.py", source };
  const [req] = planCheckRuns(spec, { program, checkerFiles, inputs: [] });
  const { files, ...rest } = req!;
  if (sandbox === pooled) await pooled.warm({ n: 1, timeoutMs: 120_000 });
  const res = await sandbox.run({ files: [], workFiles: files, ...rest, purpose: "check" });
  const ctx: VerifyContext = { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 0, artifacts: [], artifactErrors: [], inputs: [], checkerFiles, program, runs: [] };
  return { res, outcome: runCheck(spec, ctx, [{ ...res, artifacts: res.artifacts.map((a) => ({ name: a.name, content: a.content })), ...(res.judge ? { judge: { ...res.judge } } : {}) }]) };
}

describe.each([["cold", cold], ["pooled", pooled]] as const)("the stand-in module (%s)", (_kind, sandbox) => {
  it("serves every kind of value and object the suite uses: all 11 tests pass", async () => {
    const { res, outcome } = await judge(sandbox, SOLUTION);
    expect(outcome.passed, `${outcome.message}\n${res.stdout}\n${res.stderr}`).toBe(true);
    expect(outcome.message).toBe("11 tests: 11 passed, 0 failed, 0 errors, 0 skipped");
    expect(res.judge?.exitCode).toBe(0);
  }, 180_000);

  it("a wrong program (add subtracts, the liar's __eq__ is believed nowhere) fails exactly the tests that catch it", async () => {
    const wrong = SOLUTION.replace("def add(a, b):\n    return a + b", "def add(a, b):\n    return a - b");
    const { outcome } = await judge(sandbox, wrong);
    expect(outcome.passed).toBe(false);
    expect(outcome.message).toMatch(/^11 tests: 10 passed, 1 failed/);
    expect(outcome.findings.map((f) => f.where)).toEqual(["test_bridge::test_plain failed"]);
  }, 180_000);
});

describe("isolation none", () => {
  it("runs the same suite in pytest's own process: the right program passes but for what only the boundary provides", async () => {
    const { outcome } = await judge(cold, SOLUTION, { isolation: "none", min_tests: 1 });
    // In-process, the liar's __eq__ is believed and a lambda does cross: those two tests fail there.
    expect(outcome.message).toMatch(/^11 tests: 9 passed, 2 failed/);
    expect(outcome.findings.map((f) => f.where).sort()).toEqual(["test_bridge::test_callback_refused failed", "test_bridge::test_liar_cannot_cross failed"]);
  }, 180_000);
});

// Files the tests hand to the program: a path in the judge's temporary directory (tmp_path, tmpdir, tempfile)
// passed to the program is opened to it, and nothing else is. The second half of the suite is a program
// that tries to read what it was not given: a sibling of a file it got, the directory above, a path it
// named itself and the tests passed back; and it can add no entry (a link) to a directory it was handed.
const FILES_SOLUTION = String.raw`import os, pathlib
def load(p):
    out = {}
    with open(p) as f:
        for line in f:
            line = line.strip()
            if line:
                k, v = line.split(",")
                out[k] = int(v)
    return out
def kind(p):
    return type(p).__name__
def joined(p, name):
    return p / name
def total(src, out):
    t = sum(load(src).values())
    os.makedirs(os.path.dirname(out), exist_ok=True)
    pathlib.Path(out).write_text("%d\n" % t)
def load_dir(d):
    out = {}
    for root, _, files in os.walk(d):
        for f in sorted(files):
            if f.endswith(".csv"):
                out.update(load(os.path.join(root, f)))
    return out
def attempt(fn):
    try:
        fn()
        return "done"
    except PermissionError:
        return "PermissionError"
def sibling(p, name):
    return os.path.join(os.path.dirname(p), name)
def peek_sibling(p, name):
    return attempt(lambda: open(sibling(p, name)).read())
def list_parent(p):
    return attempt(lambda: os.listdir(os.path.dirname(p)))
def read(p):
    return attempt(lambda: open(p).read())
def remove(p):
    return attempt(lambda: os.remove(p))
def plant(box):
    return attempt(lambda: os.symlink(os.path.join(os.path.dirname(str(box)), "secret"), os.path.join(str(box), "link")))
def create_in(d):
    return attempt(lambda: open(os.path.join(str(d), "new.txt"), "w").write("x"))
def save(data, p):
    with open(p, "w") as f:
        for k, v in sorted(data.items()):
            f.write("%s,%d\n" % (k, v))
def link_to_the_tests():
    link = "/work/tests-link.py"
    os.symlink("/work/.judge/tests/test_files.py", link)
    return link
def snoop():
    found = []
    for root, _, files in os.walk("/tmp"):
        for f in files:
            if attempt(lambda: open(os.path.join(root, f)).read()) == "done":
                found.append(f)
    return sorted(found)
`;

const FILES_TESTS = String.raw`import os, tempfile
import pytest
import solution

def test_a_file_given_as_text_or_path(tmp_path):
    p = tmp_path / "scores.csv"
    p.write_text("ana,90\n")
    assert solution.load(str(p)) == {"ana": 90}
    assert solution.load(p) == {"ana": 90}

def test_a_path_crosses_as_a_path(tmp_path):
    assert solution.kind(tmp_path) == "PosixPath"
    assert solution.joined(tmp_path, "x") == tmp_path / "x"

def test_an_output_the_program_writes(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("ana,1\nben,2\n")
    out = tmp_path / "out" / "total.txt"
    solution.total(src, out)
    assert out.read_text() == "3\n"

def test_a_directory(tmp_path):
    (tmp_path / "a.csv").write_text("x,1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.csv").write_text("z,3\n")
    assert solution.load_dir(tmp_path) == {"x": 1, "z": 3}
    assert solution.remove(str(tmp_path / "a.csv")) == "PermissionError"

def test_tmpdir_and_tempfile(tmpdir):
    p = tmpdir.join("s.csv")
    p.write("q,5\n")
    assert solution.load(p) == {"q": 5}
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("r,6\n")
    assert solution.load(f.name) == {"r": 6}
    os.remove(f.name)

def test_nothing_else_is_handed_over(tmp_path):
    given = tmp_path / "given.csv"
    given.write_text("ana,1\n")
    (tmp_path / "expected.txt").write_text("42\n")
    other = tmp_path / "private"
    other.mkdir()
    (other / "x.txt").write_text("x")
    assert solution.load(given) == {"ana": 1}
    assert solution.peek_sibling(given, "expected.txt") == "PermissionError"
    assert solution.list_parent(str(given)) == "PermissionError"
    assert solution.remove(str(given)) == "PermissionError"
    # A path the program names is never handed over, even when the tests pass it back.
    named = solution.sibling(str(given), "expected.txt")
    assert solution.read(named) == "PermissionError"
    assert solution.snoop() == []

def test_a_link_the_program_made_to_the_tests_reads_nothing():
    # A test that reads a path the program controls follows its links as the judge's uid; the tests' files
    # are unreadable to the judge itself once collected.
    link = solution.link_to_the_tests()
    with pytest.raises(PermissionError):
        open(link).read()

def test_a_round_trip_through_a_file(tmp_path):
    out = tmp_path / "saved.csv"
    solution.save({"b": 2, "a": 1}, out)
    assert out.read_text() == "a,1\nb,2\n"
    assert solution.load(out) == {"a": 1, "b": 2}

def test_no_entry_can_be_added_to_the_tests_directories(tmp_path):
    # A link planted there would send the tests' own reads (under the judge's uid) to the judge's files.
    box = tmp_path / "box"
    box.mkdir()
    assert solution.load_dir(box) == {}
    assert solution.plant(box) == "PermissionError"
    assert solution.create_in(box) == "PermissionError"
    assert not (box / "link").exists()
`;

describe("files the tests hand to the program (pooled)", () => {
  it("a path in the temporary directory reaches the program, and only that path: 9 tests pass", async () => {
    const spec: CheckSpec = { id: "test_suite", kind: "deterministic", description: "", params: { tests: ["test_files.py"], module: "solution", min_tests: 9 } };
    const checkerFiles = [{ name: "test_files.py", content: Buffer.from(FILES_TESTS) }];
    const program = { filename: "solution.py", source: FILES_SOLUTION };
    const [req] = planCheckRuns(spec, { program, checkerFiles, inputs: [] });
    const { files, ...rest } = req!;
    await pooled.warm({ n: 1, timeoutMs: 120_000 });
    const res = await pooled.run({ files: [], workFiles: files, ...rest, purpose: "check" });
    const ctx: VerifyContext = { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 0, artifacts: [], artifactErrors: [], inputs: [], checkerFiles, program, runs: [] };
    const outcome = runCheck(spec, ctx, [{ ...res, artifacts: [], ...(res.judge ? { judge: { ...res.judge } } : {}) }]);
    expect(outcome.message, `${outcome.findings.map((f) => f.note).join("\n")}\n${res.stderr}`).toBe("9 tests: 9 passed, 0 failed, 0 errors, 0 skipped");
  }, 180_000);
});
