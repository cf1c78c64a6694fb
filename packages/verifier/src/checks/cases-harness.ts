// The harness that runs a `cases` check's test inputs against the program, inside a fresh sandbox
// container of its own (never the program's run). It receives the cases WITHOUT their expected values
// (those never enter a container), calls the function (or runs the program on stdin) once per case in a
// forked process under the case's own time limit, serialises each result to plain JSON and writes one
// line per case to OUTPUT_DIR/cases.jsonl. LoopSmith compares the results outside the container.
//
// Nothing here needs to be tamper-proof: the solution's code runs in this process and could write any
// line it likes, but a forged line only claims an answer, which it could also have returned; without
// the expected values it cannot know which answer passes. Type checks are exact (type(v) is int...), so
// an object with a lying __eq__ cannot survive serialisation. What a forged line could do is put the
// inputs it sees here into a field a model is shown, so LoopSmith accepts only lines of exactly the
// shapes written below, every field bounded (issue 25): keep the two in step.
export const CASES_HARNESS_PY = String.raw`
import importlib, json, math, os, select, signal, subprocess, sys, time, traceback

sys.set_int_max_str_digits(0)
SPEC = json.load(open("/work/.loopsmith/cases.json"))
OUT_DIR = os.environ.get("OUTPUT_DIR", "/work/out")
os.makedirs(OUT_DIR, exist_ok=True)
out = open(os.path.join(OUT_DIR, "cases.jsonl"), "w")
MAX_RESULT = 512 * 1024
left = [4 * 1024 * 1024]


def emit(rec):
    line = json.dumps(rec, allow_nan=False)
    if len(line) > left[0]:
        line = json.dumps({"id": rec.get("id"), "status": "output_limit"})
    left[0] -= len(line)
    out.write(line + "\n")
    out.flush()


def tail(text, n=1500):
    return text if len(text) <= n else "..." + text[-n:]


def encode(v, depth=0):
    if depth > 100:
        raise TypeError("the value nests deeper than 100 levels")
    if v is None or v is True or v is False:
        return v
    t = type(v)
    if t is str or t is int:
        return v
    if t is float:
        if math.isnan(v):
            return {"$float": "nan"}
        if math.isinf(v):
            return {"$float": "inf" if v > 0 else "-inf"}
        return v
    if t is list or t is tuple:
        return [encode(x, depth + 1) for x in v]
    if t is dict:
        d = {}
        for k, x in v.items():
            if type(k) is not str:
                raise TypeError("a dict key is a %s, not a str" % type(k).__name__)
            d[k] = encode(x, depth + 1)
        return d
    if t is set or t is frozenset:
        items = [encode(x, depth + 1) for x in v]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))
    np = sys.modules.get("numpy")
    if np is not None and isinstance(v, np.generic):
        return encode(v.item(), depth + 1)
    if np is not None and isinstance(v, np.ndarray):
        return encode(v.tolist(), depth + 1)
    raise TypeError("cannot compare a value of type %s.%s; return plain int, float, str, bool, None, list, tuple or dict" % (t.__module__, t.__qualname__))


def type_name(e):
    return type(e).__name__[:200]


def error_of(e):
    return {"type": type_name(e), "message": tail(str(e), 1000), "traceback": tail("".join(traceback.format_exception(e)), 2000)}


def on_alarm(signum, frame):
    raise TimeoutError("the import did not finish within %s s" % SPEC["import_timeout"])


def call_case(target, case, timeout):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 0
        try:
            os.setsid()
            # Whatever the function prints goes to stderr: stdout carries nothing here.
            os.dup2(2, 1)
            try:
                value = target(*case.get("args", []), **case.get("kwargs", {}))
                try:
                    rec = {"status": "ok", "value": encode(value)}
                except (TypeError, ValueError, RecursionError) as e:
                    rec = {"status": "unserializable", "error": {"type": type_name(e), "message": tail(str(e), 500)}}
            except SystemExit as e:
                rec = {"status": "error", "error": {"type": "SystemExit", "message": "the function called sys.exit(%s)" % tail(repr(e.code), 200)}}
            except BaseException as e:
                rec = {"status": "error", "error": error_of(e)}
            data = json.dumps(rec, allow_nan=False).encode()
            if len(data) > MAX_RESULT:
                data = json.dumps({"status": "output_limit", "bytes": len(data)}).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
        except BaseException:
            code = 70
        os._exit(code)
    os.close(w)
    start = time.monotonic()
    deadline = start + timeout
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
    ms = int((time.monotonic() - start) * 1000)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    os.close(r)
    if timed_out:
        return {"status": "timeout", "duration_ms": ms}
    try:
        rec = json.loads(b"".join(chunks))
    except ValueError:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        ex = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        return {"status": "crash", "duration_ms": ms, "exit_code": ex if sig is None else 128 + sig}
    rec["duration_ms"] = ms
    return rec


def limit_output():
    import resource
    resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 1024 * 1024, 2 * 1024 * 1024))


def stdin_case(path, case, timeout, n):
    out_path = "/work/.loopsmith/case-%d.out" % n
    err_path = "/work/.loopsmith/case-%d.err" % n
    start = time.monotonic()
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        p = subprocess.Popen([sys.executable, path] + case.get("argv", []), stdin=subprocess.PIPE, stdout=fo, stderr=fe,
                             cwd="/work", start_new_session=True, preexec_fn=limit_output)
        timed_out = False
        try:
            p.communicate(case.get("stdin", "").encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        except BrokenPipeError:
            pass
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        code = p.wait()
    ms = int((time.monotonic() - start) * 1000)
    with open(out_path, "rb") as f:
        stdout = f.read(1024 * 1024 + 1)
    with open(err_path, "rb") as f:
        stderr = f.read()[-2000:]
    rec = {"status": "timeout" if timed_out else "ok", "duration_ms": ms,
           "exit_code": code if code >= 0 else 128 - code,
           "stdout": stdout[:1024 * 1024].decode("utf-8", "replace"), "stdout_clipped": len(stdout) > 1024 * 1024,
           "stderr_tail": stderr.decode("utf-8", "replace")}
    return rec


def main():
    module, cases, timeout = SPEC["module"], SPEC["cases"], SPEC["timeout"]
    path = "/work/%s.py" % module
    if SPEC["mode"] == "stdin":
        for n, case in enumerate(cases):
            rec = stdin_case(path, case, timeout, n)
            rec["id"] = case["id"]
            emit(rec)
        return
    sys.path.insert(0, "/work")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(SPEC["import_timeout"])
    try:
        target = importlib.import_module(module)
        for part in SPEC["function"].split("."):
            target = getattr(target, part)
        if not callable(target):
            raise TypeError("%s is a %s, not a function" % (SPEC["function"], type(target).__name__))
    except BaseException as e:
        signal.alarm(0)
        emit({"import_error": error_of(e)})
        return
    signal.alarm(0)
    for case in cases:
        rec = call_case(target, case, timeout)
        rec["id"] = case["id"]
        emit(rec)


main()
out.close()
`;
