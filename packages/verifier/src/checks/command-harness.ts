// issue 26: the harness files a command check places (root's and read-only during the run) beside the workspace.

/** pytest as a workspace command check's judge, with its observer. */
export const COMMAND_PYTEST_PY = String.raw`# pytest as a command check's judge over a workspace (the program's code runs in this process: the tests
# import it). Started with python3 -I, so nothing from the environment, a user site, a .pth file or
# sitecustomize runs first; the workspace goes on the module path after the standard library and the
# installed packages, so a module of the attempt's cannot replace one of theirs; plugins are never found
# through installed metadata. An observer reports what pytest really did on fd 3 (collected tests, each
# test body's start and end, each report, the session's end), which LoopSmith compares with the JUnit
# report: a test body that never ran, or raised, under a passing report, or a run that ended before pytest
# did, is tampering.
import functools, inspect, json, os, sys, weakref

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
WORK = sys.argv[1]
sys.path.append(WORK)
CHANNEL = 3
os.set_inheritable(CHANNEL, False)

import pytest  # noqa: E402


def send(ev):
    data = (json.dumps(ev) + "\n").encode()
    try:
        while data:
            data = data[os.write(CHANNEL, data):]
    except OSError:
        pass


class Observer:
    def __init__(self):
        self._bodies = weakref.WeakSet()

    def _wrap(self, nodeid, fn):
        if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn) or not callable(fn):
            return fn
        try:
            if fn in self._bodies:
                return fn
        except TypeError:
            pass

        @functools.wraps(fn)
        def body(*args, **kwargs):
            send({"ev": "start", "id": nodeid})
            try:
                result = fn(*args, **kwargs)
            except BaseException as e:
                send({"ev": "raised", "id": nodeid, "type": type(e).__name__})
                raise
            send({"ev": "returned", "id": nodeid})
            return result

        self._bodies.add(body)
        return body

    def _observe(self, item):
        if hasattr(item, "_obj") or hasattr(type(item), "obj"):
            try:
                item.obj = self._wrap(item.nodeid, item.obj)
            except Exception:
                pass

    def pytest_collection_finish(self, session):
        for item in session.items:
            self._observe(item)
        send({"ev": "collected", "ids": [item.nodeid for item in session.items]})

    # Again just before the call: pytest 7.2 gives a unittest.TestCase test a fresh method at setup
    # (TestCaseFunction.setup), which would otherwise run unobserved and read as a body that never ran.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item):
        self._observe(item)

    def pytest_runtest_logreport(self, report):
        send({"ev": "report", "id": report.nodeid, "when": report.when, "outcome": report.outcome})

    def pytest_sessionfinish(self, session, exitstatus):
        send({"ev": "finish", "exitstatus": int(exitstatus)})


sys.exit(pytest.main(sys.argv[2:], plugins=[Observer()]))
`;

/** exec's python3 <client script>, with the end-of-script marker. */
export const COMMAND_EXEC_PY = String.raw`# A command check's python3 <script> where the script is the client's: run as python3 -I would (nothing
# from the environment or a user site runs first), with the script's directory on the module path after
# the standard library. The script's end is reported on fd 3: whether it ran to its end (or ended by a
# SystemExit raised in a file the attempt does not own), so that a program that leaves early with status 0
# (os._exit(0) at import, or sys.exit(0) from its own code) is not taken for a passing check.
import json, os, runpy, sys, traceback

CHANNEL = 3
os.set_inheritable(CHANNEL, False)
script = os.path.abspath(sys.argv[1])
sys.argv = sys.argv[1:]
sys.path.append(os.path.dirname(script))


def send(ev):
    try:
        os.write(CHANNEL, (json.dumps(ev) + "\n").encode())
    except OSError:
        pass


def client_file(path):
    # The client's files are root's and read-only for the whole run; the attempt's are not.
    try:
        return os.stat(path).st_uid == 0
    except OSError:
        return False


code = 0
try:
    runpy.run_path(script, run_name="__main__")
    send({"ev": "end", "how": "returned"})
except SystemExit as e:
    tb, last = e.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    origin = last.tb_frame.f_code.co_filename if last is not None else ""
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if not isinstance(e.code, (int, type(None))):
        sys.stderr.write(str(e.code) + "\n")
    send({"ev": "end", "how": "exit", "code": code & 0xFF, "client": client_file(origin)})
except BaseException:
    traceback.print_exc()
    code = 1
    send({"ev": "end", "how": "raised"})
sys.stdout.flush()
sys.stderr.flush()
sys.exit(code)
`;

/** node --test's observer reporter. */
export const COMMAND_NODE_OBSERVER_MJS = String.raw`// A command check's reporter for node --test, loaded in the test runner's own process (the tests run in
// child processes of it). It reports each test as the runner saw it, with the file it came from, on
// descriptor 3, a pipe to LoopSmith that is not a file anyone can rewrite afterwards. (The children inherit
// the descriptor: a test file that sets out to write into it can; LoopSmith counts lines that are not this
// reporter's JSON as tampering.) Node does not pass descriptor 3 on to the processes it spawns, so under
// npm test (npm, then a shell, then node --test) the reporter appends to LOOPSMITH_OBSERVER_FILE instead, a
// file in the output directory: as open to the test processes as a JUnit report would be.
import { appendFileSync, writeSync } from "node:fs";

const out = 3;
const file = process.env.LOOPSMITH_OBSERVER_FILE;

function send(ev) {
  const data = Buffer.from(JSON.stringify(ev) + "\n");
  let off = 0;
  if (file) {
    appendFileSync(file, data);
    return;
  }
  try {
    while (off < data.length) off += writeSync(out, data, off);
  } catch {
    // No channel (run outside LoopSmith): nothing to report to.
  }
}

const text = (x, max) => (typeof x === "string" ? x.slice(0, max) : undefined);

export default async function* observer(source) {
  send({ ev: "start" });
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const d = event.data ?? {};
    const details = d.details ?? {};
    const err = details.error;
    const cause = err && typeof err === "object" && "cause" in err ? err.cause : err;
    send({
      ev: "test",
      outcome: event.type === "test:pass" ? (d.skip !== undefined && d.skip !== false ? "skipped" : d.todo !== undefined && d.todo !== false ? "skipped" : "passed") : "failed",
      name: text(d.name, 500),
      file: text(d.file, 500),
      nesting: typeof d.nesting === "number" ? d.nesting : 0,
      kind: details.type === "suite" ? "suite" : "test",
      error: cause ? { type: text(cause?.constructor?.name ?? cause?.name, 200), message: text(cause?.message ?? String(cause), 1500), code: text(err?.code, 100) } : undefined,
    });
  }
  send({ ev: "finish" });
  yield "";
}
`;

/** Loaded into every node process of a test run: assert, node:test and what they compare with, frozen. */
export const COMMAND_NODE_FREEZE_MJS = String.raw`// Loaded (--import) into every process of a command check's node test run, before any test file or code
// of the attempt's: the assertion library the client's tests use, node:test, and the comparisons assert
// relies on cannot be replaced afterwards (an attempt's module that sets assert.equal = () => {} then
// throws in strict code and changes nothing in sloppy code).
import assert from "node:assert";
import * as test from "node:test";
import util from "node:util";

const seal = (o) => {
  if (o === null || (typeof o !== "object" && typeof o !== "function")) return;
  for (const key of Reflect.ownKeys(o)) {
    const d = Object.getOwnPropertyDescriptor(o, key);
    if (d && "value" in d && typeof d.value === "function" && d.value !== Function.prototype) Object.freeze(d.value);
  }
  Object.freeze(o);
};
seal(assert.strict);
seal(assert);
seal(test.default ?? test);
for (const name of ["is", "keys", "getOwnPropertyNames", "getPrototypeOf", "entries"]) {
  Object.defineProperty(Object, name, { value: Object[name], writable: false, configurable: false });
}
Object.defineProperty(util, "isDeepStrictEqual", { value: util.isDeepStrictEqual, writable: false, configurable: false });
`;
