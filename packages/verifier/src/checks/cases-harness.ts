// The harness of a `cases` check (issue 27): a judge process that holds the cases (ids and inputs, never the
// expected values) in a directory of its own, under its own uid, and the program's process, which answers one case
// at a time in a fresh fork that holds only that case's inputs. LoopSmith compares the judge's results outside
// the container. Both run for real in tests/e2e/checks/function-cases.test.ts.

/** The judge of a cases check: holds the cases, asks the program's process for one at a time, writes the results. */
export const CASES_JUDGE_PY = String.raw`# The judge of a cases check: holds the cases (ids and inputs, never the expected values, which never
# enter a container) in a directory the program cannot read, under its own uid, and asks the program's
# process for one case at a time over a pipe, sending only that case's inputs. The program's process
# answers each in a fresh fork that holds nothing but those inputs: the program cannot learn which case it
# is answering, nor read the others. This process writes the results (cases.jsonl, in its own out/); the
# program's answers are checked and re-encoded, never copied, so a forged answer claims only a value.
import json, os, select, sys, time

sys.set_int_max_str_digits(0)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.append(here)
import loopsmith_wire as wire  # noqa: E402

SPEC = json.load(open(os.path.join(here, "cases.json")))
OUT = os.path.join(here, "out")
os.makedirs(OUT, exist_ok=True)
out = open(os.path.join(OUT, "cases.jsonl"), "w")
TO, FROM = 3, 4
MAX_ANSWER = 2 * 1024 * 1024
GRACE = 5.0
left = [4 * 1024 * 1024]
buf = [b""]
broken = [None]


def emit(rec):
    line = json.dumps(rec, allow_nan=False)
    if len(line) > left[0]:
        line = json.dumps({"id": rec.get("id"), "status": "output_limit"})
    left[0] -= len(line)
    out.write(line + "\n")
    out.flush()


def clip(text, n):
    return text if len(text) <= n else text[:n] + "..."


def ask(doc, timeout):
    """One request, its answer (a dict), or None with broken[0] saying why."""
    if broken[0]:
        return None
    data = memoryview((json.dumps(doc) + "\n").encode())
    try:
        while data:
            data = data[os.write(TO, data):]
    except OSError:
        broken[0] = "the program's process ended"
        return None
    deadline = time.monotonic() + timeout
    while b"\n" not in buf[0]:
        wait = deadline - time.monotonic()
        if wait <= 0:
            broken[0] = "the program's process stopped answering"
            return None
        ready, _, _ = select.select([FROM], [], [], wait)
        if not ready:
            continue
        chunk = os.read(FROM, 1 << 20)
        if not chunk:
            broken[0] = "the program's process ended"
            return None
        buf[0] += chunk
        if len(buf[0]) > MAX_ANSWER + 65536:
            broken[0] = "the program's process answered out of protocol"
            return None
    line, _, buf[0] = buf[0].partition(b"\n")
    try:
        ans = json.loads(line)
    except ValueError:
        ans = None
    if type(ans) is not dict:
        broken[0] = "the program's process answered out of protocol"
        return None
    return ans


def text(x, n):
    return clip(x, n) if type(x) is str else ""


def plain(v):
    # Only plain data the wire can express; a handle (an object of the program's) is not an answer, an enum
    # member (by its type's name, member name and value) is.
    def refuse(tag, x, depth):
        if tag == "$enum" and type(x.get("type")) is str and type(x.get("name")) is str:
            wire.decode(x.get("value"), refuse, depth + 1)
            return None
        raise ValueError("not plain data")
    wire.decode(v, refuse)
    return v


def call_record(ans):
    status = ans.get("status")
    if status == "ok":
        try:
            return {"status": "ok", "value": plain(ans.get("value"))}
        except (ValueError, TypeError, KeyError, OverflowError, ArithmeticError, RecursionError):
            return {"status": "unserializable", "error": {"type": "TypeError", "message": "the program's answer is not a value of the wire"}}
    if status == "error":
        e = ans.get("error") if type(ans.get("error")) is dict else {}
        return {"status": "error", "error": {"type": text(e.get("type"), 200), "message": text(e.get("message"), 1000), "traceback": text(e.get("traceback"), 2000)}}
    if status == "unserializable":
        e = ans.get("error") if type(ans.get("error")) is dict else {}
        return {"status": "unserializable", "error": {"type": text(e.get("type"), 200), "message": text(e.get("message"), 500)}}
    if status == "timeout":
        return {"status": "timeout"}
    if status == "crash":
        code = ans.get("exit_code")
        return {"status": "crash", "exit_code": code if type(code) is int and 0 <= code <= 255 else 255}
    if status == "output_limit":
        return {"status": "output_limit"}
    broken[0] = "the program's process answered out of protocol"
    return None


def stdin_record(ans):
    code = ans.get("exit_code")
    if ans.get("status") not in ("ok", "timeout") or type(code) is not int or not 0 <= code <= 255 or type(ans.get("stdout")) is not str:
        broken[0] = "the program's process answered out of protocol"
        return None
    return {"status": ans["status"], "exit_code": code, "stdout": clip(ans["stdout"], 1024 * 1024), "stdout_clipped": ans.get("stdout_clipped") is True,
            "stderr_tail": text(ans.get("stderr_tail"), 2000)}


def main():
    timeout = SPEC["timeout"]
    init = ask({"op": "init", "module": SPEC["module"], "function": SPEC["function"], "mode": SPEC["mode"]}, SPEC["import_timeout"] + GRACE)
    if init is None or init.get("status") != "ready":
        if init is not None and init.get("status") == "import_error" and type(init.get("error")) is dict:
            e = init["error"]
            emit({"import_error": {"type": text(e.get("type"), 200), "message": text(e.get("message"), 1000), "traceback": text(e.get("traceback"), 2000)}})
        else:
            emit({"import_error": {"type": "RuntimeError", "message": broken[0] or "the program's process did not get ready", "traceback": ""}})
        return
    for case in SPEC["cases"]:
        started = time.monotonic()
        if SPEC["mode"] == "stdin":
            ans = ask({"op": "stdin", "stdin": case["stdin"], "argv": case["argv"], "timeout": timeout}, timeout + GRACE)
            rec = stdin_record(ans) if ans is not None else None
        else:
            ans = ask({"op": "call", "args": case["args"], "kwargs": case["kwargs"], "timeout": timeout}, timeout + GRACE)
            rec = call_record(ans) if ans is not None else None
        if rec is None:
            # No answer within the case's limit and the grace, or the process is gone: this case (and what
            # is left) fails.
            stuck = broken[0] == "the program's process stopped answering"
            if SPEC["mode"] == "stdin":
                rec = {"status": "timeout", "exit_code": 124, "stdout": "", "stdout_clipped": False, "stderr_tail": ""}
            else:
                rec = {"status": "timeout"} if stuck else {"status": "crash", "exit_code": 255}
        rec["id"] = case["id"]
        if not (SPEC["mode"] == "stdin" and rec["status"] == "output_limit"):
            rec["duration_ms"] = min(3_600_000, int((time.monotonic() - started) * 1000))
        emit(rec)


main()
out.close()
`;

/** The program's side of a cases check: one fork per case, holding only that case's inputs. */
export const CASES_SERVER_PY = String.raw`# The program's side of a cases check: imports the program once, then answers one case at a time, each in
# a fresh fork that receives nothing but the case's inputs (no id, no other case: the harness that holds
# them is another process, under another uid). Nothing here is trusted: the judge checks every answer.
import io, json, os, select, signal, subprocess, sys, time, traceback

sys.set_int_max_str_digits(0)
sys.dont_write_bytecode = True
REQ = os.fdopen(4, "rb", buffering=0)
ANS = os.fdopen(3, "wb", buffering=0)
for fd in (3, 4):
    os.set_inheritable(fd, False)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopsmith_wire as wire  # noqa: E402

WORK = os.getcwd()
sys.path[0] = WORK
MAX_RESULT = 512 * 1024


def send(doc):
    data = memoryview((json.dumps(doc, allow_nan=False) + "\n").encode())
    while data:
        data = data[ANS.write(data):]


def error_of(e):
    return {"type": type(e).__name__, "message": str(e)[:1000], "traceback": "".join(traceback.format_exception(e))[-2000:]}


def no_handles(tag, x, depth):
    raise ValueError("only plain data can be a case's input")


def refuse(v, depth):
    t = type(v)
    raise wire.Unsendable("cannot compare a value of type %s.%s: return plain data (numbers, strings, lists, tuples, dicts, sets, bytes...)" % (t.__module__, t.__qualname__))


def call(target, req):
    timeout = float(req.get("timeout", 10))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 0
        try:
            os.setsid()
            os.dup2(2, 1)  # what the function prints goes to stderr: the answer pipe carries nothing else
            try:
                args = wire.decode(req.get("args", []), no_handles)
                kwargs = wire.decode({"$dict": [[k, v] for k, v in req.get("kwargs", {}).items()]}, no_handles)
                del req
                value = target(*args, **kwargs)
                try:
                    doc = {"status": "ok", "value": wire.encode(value, refuse)}
                except (TypeError, ValueError, RecursionError) as e:
                    doc = {"status": "unserializable", "error": {"type": type(e).__name__, "message": str(e)[:500]}}
            except SystemExit as e:
                doc = {"status": "error", "error": {"type": "SystemExit", "message": "the function called sys.exit(%s)" % repr(e.code)[:200], "traceback": ""}}
            except BaseException as e:
                doc = {"status": "error", "error": error_of(e)}
            data = json.dumps(doc, allow_nan=False).encode()
            if len(data) > MAX_RESULT:
                data = json.dumps({"status": "output_limit"}).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
        except BaseException:
            code = 70
        os._exit(code)
    os.close(w)
    deadline = time.monotonic() + timeout
    chunks, size, timed_out = [], 0, False
    while True:
        wait = deadline - time.monotonic()
        if wait <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([r], [], [], wait)
        if not ready:
            timed_out = True
            break
        b = os.read(r, 65536)
        if not b:
            break
        size += len(b)
        if size <= MAX_RESULT + 4096:
            chunks.append(b)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    os.close(r)
    if timed_out:
        return {"status": "timeout"}
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        ex = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255
        return {"status": "crash", "exit_code": (ex if sig is None else 128 + sig) & 0xFF}


def limit_output():
    import resource
    resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 1024 * 1024, 2 * 1024 * 1024))


def stdin_case(path, req, n):
    timeout = float(req.get("timeout", 10))
    out_path, err_path = "/tmp/.case-%d.out" % n, "/tmp/.case-%d.err" % n
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        p = subprocess.Popen([sys.executable, path] + [str(a) for a in req.get("argv", [])], stdin=subprocess.PIPE, stdout=fo, stderr=fe,
                             cwd=WORK, start_new_session=True, preexec_fn=limit_output)
        timed_out = False
        try:
            p.communicate(str(req.get("stdin", "")).encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        except BrokenPipeError:
            pass
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        code = p.wait()
    with open(out_path, "rb") as f:
        stdout = f.read(1024 * 1024 + 1)
    with open(err_path, "rb") as f:
        stderr = f.read()[-2000:]
    return {"status": "timeout" if timed_out else "ok", "exit_code": (code if code >= 0 else 128 - code) & 0xFF,
            "stdout": stdout[:1024 * 1024].decode("utf-8", "replace"), "stdout_clipped": len(stdout) > 1024 * 1024,
            "stderr_tail": stderr.decode("utf-8", "replace")}


def on_alarm(signum, frame):
    raise TimeoutError("the import did not finish in time")


def main():
    import importlib
    target, n = None, 0
    while True:
        line = REQ.readline()
        if not line:
            return
        req = json.loads(line)
        op = req.get("op")
        if op == "init":
            path = os.path.join(WORK, req["module"] + ".py")
            if req.get("mode") == "stdin":
                send({"status": "ready"})
                continue
            out, err = sys.stdout, sys.stderr
            sys.stdout = sys.stderr
            signal.signal(signal.SIGALRM, on_alarm)
            signal.alarm(30)
            try:
                target = importlib.import_module(req["module"])
                for part in req["function"].split("."):
                    target = getattr(target, part)
                if not callable(target):
                    raise TypeError("%s is a %s, not a function" % (req["function"], type(target).__name__))
                signal.alarm(0)
                send({"status": "ready"})
            except BaseException as e:
                signal.alarm(0)
                send({"status": "import_error", "error": error_of(e)})
            finally:
                sys.stdout = out
        elif op == "call":
            send(call(target, req))
        elif op == "stdin":
            n += 1
            send(stdin_case(path, req, n))


main()
`;
