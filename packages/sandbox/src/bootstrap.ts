// The program that runs as the container's main process (under docker-init). It exists because Docker's
// archive API cannot write into a tmpfs under a read-only root, and the tmpfs is gone once the container
// stops: so files travel through the process's own stdin and stdout instead.
//
// Protocol (one run per container, whether the container was started for the run or waited in the pool):
//   argv:   python3 [-I -S] -c BOOTSTRAP_PY [module...]: the modules are imported before anything else
//           (the pool's pre-import; a cold container imports none and runs with -I -S).
//   fork:   once the interpreter is up and the modules are imported, the bootstrap forks the program's
//           future process, BEFORE reading stdin. That child holds a
//           copy of a memory that never contained the marker, swaps its stdin for /dev/null, and waits on a
//           pipe for {argv, env, inProcess}: nothing else of the request ever reaches it.
//   stdout: READY once both processes have warmed up (each writes the pages it will need, copy-on-write).
//   stdin:  one JSON line {marker, inputBytes, argv, env, inProcess, limits} followed by a tar (inputBytes long) of the inputs
//           (inputs/<name>), the work files (<relative path>) and the script (<filename>), all extracted
//           under /work by the parent, which then writes ACK (the request arrived: a container that
//           never acknowledged never ran a program) and sends the child its go.
//   then:   the child runs argv with cwd /work, stdin /dev/null, the container's stdout/stderr, and the
//           environment the container had plus the request's env. inProcess (pool containers, argv
//           `python3 <file> args...`): it runs the file as __main__ in the pre-imported interpreter, set up
//           as `python3 <file>` would be (sys.argv, sys.path[0], __file__, exit status, the traceback of an
//           uncaught exception); otherwise it execs argv, a pristine process.
//   stdout: whatever the program printed, then the marker, one JSON line {exitCode, errors}, a tar of
//           the regular files under /work/out, and the marker again (stderr ends with the marker too). The marker is random per run and reaches only the parent,
//           through stdin, after the fork; the parent runs as root (the program as uid 10001) and makes
//           itself non-dumpable, so the program cannot read it out of the parent's memory, its stdin or
//           its /proc entries, nor write to its stdout through /proc.
//   exit:   the program's exit code (128+N for signal N), so the outcome survives a lost trailer.
//   relay:  under gVisor (request relayOutput) a write to the container's stdout can take fewer bytes than
//           asked on a blocking descriptor, and Python's buffered writer then drops the rest (measured:
//           2 MB printed, 64 KiB arrived). The program then writes into pipes of its own that the parent
//           copies to the container's stdout and stderr with writes that finish; the parent's own output
//           always goes through such writes.
//
// Python because the image has it (tarfile, dir_fd opens with O_NOFOLLOW, prctl via ctypes). A cold
// container's -I -S keep the caller's PYTHON* variables and site-packages out of the bootstrap itself; a
// pool container's interpreter is a normal one (the program runs in it, and it needs site-packages for
// the pre-import), started with the fixed base environment before any request exists, and its parent
// drops /work and /tmp from its module path, so nothing the program writes can be imported by it.
export const BOOTSTRAP_PY = String.raw`
import base64, ctypes, fcntl, io, json, os, select, signal, socket, stat, sys, tarfile, threading

WORK = "/work"
OUT = "/work/out"
# The program's uid, and the judge's (a check's own process that must stay out of the program's reach).
PROGRAM_UID = 10001
JUDGE_UID = 10002
# Capabilities a process of this container may ever hold; the bootstrap drops them all for its children.
CAP_LAST = 63
KINDS = {stat.S_IFLNK: "symlink", stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket",
         stat.S_IFCHR: "character device", stat.S_IFBLK: "block device"}


class Sized:
    # The request's tar, exactly as long as its header says: tarfile's stream mode reads whole 10 KiB
    # records, so at the end of a smaller tar it would wait for the host to close stdin.
    def __init__(self, f, size):
        self.f, self.left = f, size

    def read(self, n=-1):
        n = self.left if n is None or n < 0 else min(n, self.left)
        b = self.f.read(n) if n > 0 else b""
        self.left -= len(b)
        return b


def write_all(fd, data):
    # Every byte, whatever the descriptor takes per write (gVisor's host pipes take at most 64 KiB).
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class FullWriter(io.RawIOBase):
    # A raw stream over a descriptor whose writes always finish: a BufferedWriter over it never drops bytes.
    def __init__(self, fd):
        self.fd = fd

    def writable(self):
        return True

    def write(self, b):
        write_all(self.fd, b)
        return len(b)


def relay(src, dst):
    # The program's output pipe, copied to the container's descriptor until every writer is gone.
    while True:
        try:
            b = os.read(src, 1 << 16)
        except OSError:
            break
        if not b:
            break
        try:
            write_all(dst, b)
        except OSError:
            break
    os.close(src)


def receive(stdin, size):
    # Extracted as root (nothing of the program runs yet, and /work holds nothing else): owners are set
    # afterwards, by place_owners. A tar shorter than its header says is refused like a broken one.
    names = []
    src_stream = Sized(stdin, size) if isinstance(size, int) and size >= 0 else stdin
    with tarfile.open(fileobj=src_stream, mode="r|") as tf:
        for m in tf:
            dest = os.path.normpath(os.path.join(WORK, m.name))
            if not m.isfile() or not dest.startswith(WORK + "/"):
                raise SystemExit("sandbox bootstrap: refusing input member %r" % m.name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            src = tf.extractfile(m)
            with open(dest, "xb") as f:
                while True:
                    b = src.read(1 << 20)
                    if not b:
                        break
                    f.write(b)
            names.append(os.path.relpath(dest, WORK))
    return names


def ancestors(rel):
    parts = rel.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)] + [""]


def own(rel, uid, mode):
    # Root's first, so that root (without CAP_FOWNER) may set the mode; then the owner's. /work holds
    # only what receive() extracted: no links to follow.
    path = os.path.join(WORK, rel) if rel else WORK
    os.chown(path, 0, 0, follow_symlinks=False)
    os.chmod(path, mode)
    if uid != 0:
        os.chown(path, uid, uid, follow_symlinks=False)


def place_owners(names, req):
    # Who may touch what, for the whole run. The program's files and directories are the program's
    # (uid PROGRAM_UID). A protected file (a client's locked test, the runner's configuration, a harness)
    # stays root's and read-only; every directory above it is root's with the sticky bit, so the program
    # may add files beside it but can neither replace, rename nor remove it. The judge's directory (a
    # check's tests and harness, the judge's report) belongs to the judge's uid alone: the program can
    # neither read nor change anything in it. An isolated run also gets a HOME, a bytecode cache prefix
    # and, beside protected files, node_modules placeholders that the program cannot fill: the places a
    # runner would read code from before the judge's own files.
    protect = set(req.get("protect") or [])
    judge = req.get("judgeDir")
    dirs = set()
    for rel in names:
        dirs.update(a for a in ancestors(rel) if a)
    dirs.update(["inputs", "out"])
    for d in sorted(dirs):
        own(d, PROGRAM_UID, 0o755)
    for rel in names:
        own(rel, PROGRAM_UID, 0o644)
    own("", PROGRAM_UID, 0o755)
    sticky = set()
    for rel in names:
        if rel in protect:
            own(rel, 0, 0o444)
            sticky.update(ancestors(rel))
    if judge:
        sticky.add("")
        for rel in [d for d in dirs if d == judge or d.startswith(judge + "/")]:
            own(rel, JUDGE_UID, 0o700)
        for rel in [n for n in names if n.startswith(judge + "/")]:
            own(rel, JUDGE_UID, 0o600)
    guarded = [os.path.join(WORK, rel) for rel in names if rel in protect]
    for d in sorted(sticky, key=len, reverse=True):
        own(d, 0, 0o1777)
        guarded.append(os.path.join(WORK, d) if d else WORK)
        if req.get("isolate") and not os.path.lexists(os.path.join(WORK, d, "node_modules")) and (d == "" or not d.startswith(".")):
            guarded += placeholder(os.path.join(WORK, d, "node_modules"))
    if req.get("isolate"):
        home = "/tmp/home"
        os.mkdir(home, 0o755)
        os.chmod(home, 0o1777)
        guarded.append(home)
        for name in (".node_modules", ".node_libraries", ".local"):
            guarded += placeholder(os.path.join(home, name))
        with open(os.path.join(home, ".npmrc"), "x"):
            pass
        os.chmod(os.path.join(home, ".npmrc"), 0o444)
        guarded.append(os.path.join(home, ".npmrc"))
        guarded += placeholder("/tmp/.loopsmith-pycache")
    return {path: identity(path) for path in guarded}


def placeholder(path):
    # A root's directory the program cannot fill, with a root's file in it: a rename over a directory
    # that is not empty fails under every kernel (gVisor lets a rename replace another uid's entry in a
    # sticky directory, which runc's kernel refuses).
    os.mkdir(path, 0o755)
    keep = os.path.join(path, ".loopsmith-placeholder")
    with open(keep, "x"):
        pass
    os.chmod(keep, 0o444)
    return [path, keep]


def identity(path):
    st = os.lstat(path)
    return (st.st_dev, st.st_ino, st.st_uid)


def replaced(guarded):
    # What place_owners made root's and the program may not replace, no longer the same file: gVisor lets
    # a rename put the program's own file in a protected file's place (the sticky bit does not stop it),
    # and a replaced file's original is gone for good (the program can link neither it nor its /proc
    # descriptor), so comparing identities after every process of the run is dead tells.
    out = []
    for path, ident in guarded.items():
        try:
            same = identity(path) == ident
        except OSError:
            same = False
        if not same:
            out.append(os.path.relpath(path, WORK) if path.startswith(WORK + "/") else path)
    return out


# Every path component under /work is opened relative to its parent's descriptor and never followed as
# a link, so a program that swapped /work/out (or a directory inside it) for a link to /etc gets nothing
# of /etc back: the root is refused and a linked subdirectory is reported, not entered.
O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
O_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
MAX_DEPTH = 64


def plain(name):
    # Names that are not valid UTF-8 arrive surrogate-escaped ('\udcff'), which no JSON column or text
    # consumer downstream can hold: such files are skipped and reported as their bytes' ASCII repr.
    try:
        name.encode("utf-8")
        return None
    except UnicodeEncodeError:
        return repr(os.fsencode(name))


def open_root(errors):
    try:
        work = os.open(WORK, O_DIR)
    except OSError as e:
        errors.append("/work: cannot open (%s): no artifacts collected" % e.strerror)
        return None
    try:
        st = os.stat("out", dir_fd=work, follow_symlinks=False)
    except OSError as e:
        os.close(work)
        errors.append("/work/out: cannot read (%s): no artifacts collected" % e.strerror)
        return None
    try:
        if not stat.S_ISDIR(st.st_mode):
            kind = KINDS.get(stat.S_IFMT(st.st_mode), "regular file" if stat.S_ISREG(st.st_mode) else "special file")
            errors.append("/work/out is a %s, not a directory: refused, no artifacts collected" % kind)
            return None
        try:
            return os.open("out", O_DIR, dir_fd=work)
        except OSError as e:
            errors.append("/work/out: cannot open as a directory without following links (%s): no artifacts collected" % e.strerror)
            return None
    finally:
        os.close(work)


def collect(lim):
    # Files are opened here, once, so that what was checked is what gets sent. Directories are walked
    # depth first, so at most MAX_DEPTH directory descriptors are open at a time.
    files, errors, total, seen = [], [], 0, 0
    root = open_root(errors)
    if root is None:
        return files, errors
    stack = []

    def enter(fd, rel_dir):
        try:
            names = sorted(os.listdir(fd))
        except OSError as e:
            os.close(fd)
            errors.append("%s: cannot list (%s)" % (rel_dir or ".", e.strerror))
            return
        stack.append((fd, rel_dir, iter(names)))

    enter(root, "")
    while stack:
        dfd, rel_dir, names = stack[-1]
        name = next(names, None)
        if name is None:
            os.close(dfd)
            stack.pop()
            continue
        seen += 1
        if seen > lim["maxEntries"]:
            errors.append("stopped after %d entries under /work/out" % lim["maxEntries"])
            break
        bad = plain(name)
        if bad is not None:
            errors.append("%s%s: skipped, the name is not valid UTF-8" % (rel_dir, bad))
            continue
        rel = rel_dir + name
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError as e:
            errors.append("%s: cannot read (%s)" % (rel, e.strerror))
            continue
        if stat.S_ISDIR(st.st_mode):
            if len(stack) >= MAX_DEPTH:
                errors.append("%s: skipped, directories nested deeper than %d levels" % (rel, MAX_DEPTH))
                continue
            try:
                sub = os.open(name, O_DIR, dir_fd=dfd)
            except OSError as e:
                errors.append("%s: cannot open directory (%s)" % (rel, e.strerror))
                continue
            enter(sub, rel + "/")
            continue
        if not stat.S_ISREG(st.st_mode):
            errors.append("%s: skipped, not a regular file (%s)" % (rel, KINDS.get(stat.S_IFMT(st.st_mode), "special")))
            continue
        try:
            fd = os.open(name, O_FILE, dir_fd=dfd)
        except OSError as e:
            errors.append("%s: cannot read (%s)" % (rel, e.strerror))
            continue
        fst = os.fstat(fd)
        size = fst.st_size
        if not stat.S_ISREG(fst.st_mode):
            errors.append("%s: skipped, changed into a non-regular file while being read" % rel)
        elif size > lim["maxFileBytes"]:
            errors.append("%s: skipped, %d bytes is over the %d-byte artifact limit" % (rel, size, lim["maxFileBytes"]))
        elif len(files) >= lim["maxFiles"]:
            errors.append("%s: skipped, more than %d artifacts" % (rel, lim["maxFiles"]))
        elif total + size > lim["maxTotalBytes"]:
            errors.append("%s: skipped, artifacts would exceed %d bytes in total" % (rel, lim["maxTotalBytes"]))
        else:
            files.append((rel, fd, size))
            total += size
            continue
        os.close(fd)
    for dfd, _, _ in stack:
        os.close(dfd)
    return files, errors


def send(out, files):
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tf:
        for rel, fd, size in files:
            with os.fdopen(fd, "rb") as f:
                ti = tarfile.TarInfo(rel)
                ti.size = size
                ti.mode = 0o644
                tf.addfile(ti, f)


# The stdout preamble, written by this bootstrap before the program can run, so that the host strips it
# off deterministically: READY once the interpreter is up (its libraries pre-imported, the program's process forked, both warm), ACK once the
# request's header line arrived (a container that never acknowledged never ran a program).
READY = b"\0loopsmith-ready\n"
ACK = b"\0loopsmith-go\n"


def preimport(names):
    for name in names:
        try:
            __import__(name)
        except Exception:
            pass  # the program meets the failure itself, with its own traceback, if it imports the module


def run_in_process(argv, env, path, orig_path, done):
    # What "python3 <file> args..." would set up, in this already started (and pre-imported) interpreter.
    import atexit, builtins, gc, importlib, importlib.machinery, site, types
    before = set(sys.modules)
    # env is this process's environment plus the request's: only what differs is written (every write
    # to memory still shared with the parent is a copy-on-write fault, which clear+update paid per key).
    for k in [k for k in os.environ if k not in env]:
        del os.environ[k]
    for k, v in env.items():
        if os.environ.get(k) != v:
            os.environ[k] = v
    sys.argv = list(argv[1:])
    sys.orig_argv = list(argv)
    sys.path[:] = [os.path.dirname(path)] + [p for p in orig_path if p != ""]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        site.addsitedir(site.getusersitepackages())
    # The path finders that cached /work or /tmp while they were still empty were dropped by the parent
    # before the fork (forget_writable_paths); the others list the read-only image, which cannot change.
    # Namespace packages recompute their path for the program's sys.path, as after invalidate_caches().
    ns = getattr(sys.modules.get("_frozen_importlib_external"), "_NamespacePath", None)
    if ns is not None:
        ns._epoch += 1
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __loader__=importlib.machinery.SourceFileLoader("__main__", path),
                         __spec__=None, __package__=None, __annotations__={}, __builtins__=builtins)
    sys.modules["__main__"] = main
    status, interrupted = 0, False
    try:
        with open(path, "rb") as f:
            source = f.read()
        code = compile(source, path, "exec", dont_inherit=True)
        del source
        exec(code, main.__dict__)
    except SystemExit as e:
        # The interpreter's own rule: None is 0, an int is the status, anything else is printed and exits 1.
        if e.code is None:
            status = 0
        elif isinstance(e.code, int):
            status = e.code
        else:
            try:
                sys.stderr.write(str(e.code) + "\n")
            except Exception:
                pass
            status = 1
    except BaseException as e:
        # As the interpreter reports an uncaught exception, without this function's frame (the hook
        # prints the exception's own __traceback__, so the frame is dropped there).
        e = e.with_traceback(e.__traceback__.tb_next if e.__traceback__ else None)
        sys.excepthook(type(e), e, e.__traceback__)
        status, interrupted = 1, isinstance(e, KeyboardInterrupt)
        del e
    # The interpreter's shutdown, minus tearing down the pre-imported libraries (that alone takes ~400 ms
    # with pandas loaded, and nothing of it is observable): wait for the program's threads, run its atexit
    # functions, then release what the program's own modules hold (an unclosed file is flushed, as at a
    # normal exit) and flush stdio.
    try:
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()
    except BaseException:
        pass
    atexit._run_exitfuncs()
    for name in [m for m in sys.modules if m not in before] + ["__main__"]:
        m = sys.modules.get(name)
        try:
            if m is not None and getattr(m, "__dict__", None) is not None:
                m.__dict__.clear()
        except BaseException:
            pass
    main = None
    gc.collect()
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except BaseException:
            pass
    if interrupted:
        # Python exits by SIGINT after an uncaught KeyboardInterrupt (status 130 here).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    # The status, before the exit: tearing down a process that holds pandas takes tens of milliseconds
    # (more on a busy host), which the parent need not wait for; a process killed before this line leaves
    # the pipe empty, and the parent reads its status from waitpid as always. (That pipe is the one
    # descriptor an in-process program has beyond what a fresh interpreter has.)
    try:
        os.write(done, b"%d" % (status & 0xFF))
    except OSError:
        pass
    os._exit(status & 0xFF)


def imported_names():
    # The top-level names of every module this interpreter holds, taken by the program's process before
    # the request (nothing is imported between then and the program), with the count they came from.
    return len(sys.modules), frozenset(m.partition(".")[0] for m in sys.modules)


def forget_writable_paths():
    # Importer caches of a directory the program can write (/work, /tmp, the cwd by a relative name) hold
    # what it listed before the request: dropped once, here in the parent before the fork, rather than
    # by clearing every cache in the program's process, where each write to memory shared with the
    # parent costs a copy-on-write fault (14-120 ms for the whole cache). The parent imports nothing more.
    for k in [k for k in sys.path_importer_cache if not os.path.isabs(k) or k == WORK or k.startswith((WORK + "/", "/tmp"))]:
        del sys.path_importer_cache[k]


def shadows(script_dir, imported):
    # A fresh interpreter imports a module the program's directory holds (json.py, pandas/) instead of the
    # library one; the pre-imported interpreter already has the library's in sys.modules, so such a
    # program runs in a fresh process.
    try:
        names = os.listdir(script_dir)
    except OSError:
        return True
    count, top = imported
    if len(sys.modules) != count:
        # Something was imported since the snapshot (nothing is today): count it as well.
        top = {m.partition(".")[0] for m in sys.modules}
    for n in names:
        stem = n.partition(".")[0]
        if stem in top and (n.endswith((".py", ".pyc", ".so")) or "." not in n):
            return True
    return False


def drop_privileges(uid):
    # Root's capabilities end here: out of the bounding set first (so nothing the process execs can
    # regain one), then the groups and the uids. A setuid to a non-root uid clears the effective and
    # permitted sets, and leaves the process non-dumpable: no other uid can read or trace it.
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(CAP_LAST + 1):
        if libc.prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # PR_CAPBSET_DROP; EINVAL: no such cap
            raise SystemExit("sandbox bootstrap: cannot drop capability %d" % cap)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or os.getgroups():
        raise SystemExit("sandbox bootstrap: the uid did not change")


def place_fds(fds):
    # fds[i] becomes descriptor 3 + i (inheritable, the originals closed): first all out of the way, above
    # anything else held, so that no dup2 lands on a descriptor still to be moved.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 200) for fd in fds]
    for fd in fds:
        os.close(fd)
    for i, fd in enumerate(high):
        os.dup2(fd, 3 + i, inheritable=True)
        os.close(fd)


# After the fork every page either process writes is copied first (they share them all), and the first
# pass through tarfile, json or the import machinery writes reference counts on many pages: about 20 ms
# each side, measured. Both processes pay that once on nothing, before READY, rather than after the request.
def warm_up_parent():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w|", format=tarfile.PAX_FORMAT) as tf:
        ti = tarfile.TarInfo("warm-up")
        ti.size = 1
        tf.addfile(ti, io.BytesIO(b"x"))
    size = buf.tell()
    buf.seek(0)
    with tarfile.open(fileobj=Sized(buf, size), mode="r|") as tf:
        for m in tf:
            tf.extractfile(m).read()
    json.loads(json.dumps({"marker": "", "argv": ["python3", "warm-up.py"], "env": dict(os.environ), "limits": {}}))


def warm_up_child():
    # What the program's process does between the go and the program, on nothing: nothing of it stays.
    import atexit, builtins, gc, importlib, importlib.machinery, site, types
    before = set(sys.modules)
    json.loads(json.dumps({"argv": ["python3", "warm-up.py"], "env": dict(os.environ), "inProcess": True}))
    {m.partition(".")[0] for m in sys.modules if m not in before}
    exec(compile("pass", "<warm-up>", "exec", dont_inherit=True), {"__builtins__": builtins})


def receive_go(sock):
    # The go message, and with its first bytes the descriptors the request asked for (the bridge to a
    # judge, or a channel back to the bootstrap): they travel over the socket, since this process was
    # forked before anyone knew the request.
    data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 8)
    chunks = [data]
    while data:
        data = sock.recv(1 << 16)
        chunks.append(data)
    sock.close()
    return b"".join(chunks), fds


def child(sock, done, orig_path):
    # The program's process, forked before the request (and its marker) reached the parent: nothing of
    # the marker was ever in this process's memory. Its stdin becomes /dev/null before it reads a byte,
    # so the request on the container's stdin is the parent's alone.
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    drop_privileges(PROGRAM_UID)
    # The program may read its own /proc entries, as after an execve (which resets the flag too).
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)
    warm_up_child()
    imported = imported_names()
    try:
        sock.sendall(b"w")
    except OSError:
        os._exit(0)  # the parent is gone: the container is ending anyway
    raw, fds = receive_go(sock)
    if not raw:
        os._exit(0)  # the parent is gone before the request: the container is ending anyway
    go = json.loads(raw)
    argv, env = go["argv"], go["env"]
    if go.get("relay"):
        # The program's stdout and stderr: pipes the parent copies out (see relay above).
        for target, fd in zip((1, 2), fds[:2]):
            os.dup2(fd, target)
            os.close(fd)
        fds = fds[2:]
    # Descriptors the request handed over, at 3, 4, ... in the order given: first out of the way (above
    # anything the bootstrap holds), then into place; the done pipe moves up too, so that nothing lands on it.
    moved = fcntl.fcntl(done, fcntl.F_DUPFD_CLOEXEC, 200)
    os.close(done)
    done = moved
    place_fds(fds)
    os.chdir(WORK)
    if go["inProcess"]:
        path = os.path.join(WORK, argv[1])
        if os.path.isfile(path) and not shadows(os.path.dirname(path), imported):
            run_in_process(argv, env, path, orig_path, done)
    # A fresh process image, like subprocess: the signals Python ignores are restored first.
    for s in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(s, signal.SIG_DFL)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        sys.stderr.write("sandbox: cannot start %s: %s\n" % (argv[0], e.strerror))
        sys.stderr.flush()
        os._exit(127)


def wait_early(pid, done_r):
    # The in-process program's status, or b"" once the child is gone without one (it exec'd, was killed,
    # or left by os._exit): then waitpid says. Never a blocking read alone: the pipe closes only once the
    # child's exit has torn down its memory, and not at all while a process the program forked holds it.
    # The program could write a status here itself, as it could exit with any status it likes.
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return wait_early_sigchld(pid, done_r)  # no pidfd_open (gVisor answers ENOSYS)
    try:
        ready, _, _ = select.select([done_r, pidfd], [], [])
        if done_r in ready:
            return os.read(done_r, 16)
        return b""
    except OSError:
        return b""
    finally:
        os.close(pidfd)


def wait_early_sigchld(pid, done_r):
    # wait_early without a pidfd: SIGCHLD (only the program's process is this process's child here) wakes
    # the select through a wakeup pipe, and waitid(WNOWAIT) tells whether the child is gone without
    # reaping it (the caller's waitpid does). The handler is in place before the first look, so an exit
    # between the look and the select still wakes it.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    previous = signal.signal(signal.SIGCHLD, lambda *_: None)
    old_fd = signal.set_wakeup_fd(wake_w)
    try:
        while True:
            try:
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    ready, _, _ = select.select([done_r], [], [], 0)
                    return os.read(done_r, 16) if ready else b""
            except ChildProcessError:
                return b""
            ready, _, _ = select.select([done_r, wake_r], [], [])
            if done_r in ready:
                return os.read(done_r, 16)
            os.read(wake_r, 512)
    except OSError:
        return b""
    finally:
        signal.set_wakeup_fd(old_fd)
        signal.signal(signal.SIGCHLD, previous)
        os.close(wake_r)
        os.close(wake_w)


def start_judge(judge, env, to_program, from_program, output):
    # The judge: a check's own process (its tests, its harness), under its own uid, in its own
    # directory, talking to the program only through the two pipes it gets at 3 (to the program) and 4
    # (from it). Forked after the request arrived, so it exec's at once: nothing of this process stays.
    # output: the relay's stdout and stderr pipes (see relay), or [] to write to the container's own.
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for fd, target in zip(output, (1, 2)):
            os.dup2(fd, target)
            os.close(fd)
        drop_privileges(JUDGE_UID)
        # Everything the judge creates (the tests' temporary files, bytecode, reports) is its own alone,
        # unless it hands a file over (test_suite's bridge does, for a path the tests pass the program).
        os.umask(0o077)
        place_fds([to_program, from_program])
        os.chdir(os.path.join(WORK, judge["cwd"]))
        for s in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(s, signal.SIG_DFL)
        full = dict(env)
        full.update(judge["env"])
        os.execvpe(judge["argv"][0], judge["argv"], full)
    except BaseException as e:
        try:
            os.write(2, ("sandbox: cannot start the judge: %s\n" % e).encode())
        except OSError:
            pass
    os._exit(127)


def drain(fd, limit, into):
    # Reads a pipe to its end, keeping the first "limit" bytes (a thread: the writer must never block on us).
    size = 0
    while True:
        try:
            b = os.read(fd, 1 << 16)
        except OSError:
            break
        if not b:
            break
        if size < limit:
            into.append(b[: limit - size])
        size += len(b)
    os.close(fd)
    if size > limit:
        into.append(None)


def collect_judge(judge, lim, errors):
    # The judge's report files, from its own directory (the program can neither write nor read there).
    files, total = [], 0
    try:
        base = os.open(os.path.join(WORK, judge["cwd"], "out"), O_DIR)
    except OSError as e:
        errors.append("judge output: cannot open (%s)" % e.strerror)
        return files
    try:
        for name in sorted(os.listdir(base)):
            try:
                fd = os.open(name, O_FILE, dir_fd=base)
            except OSError as e:
                errors.append("judge output %s: cannot read (%s)" % (name, e.strerror))
                continue
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    continue
                data = f.read(lim + 1)
            if total + len(data) > lim:
                errors.append("judge output %s: over %d bytes" % (name, lim))
                continue
            total += len(data)
            files.append({"name": name, "content": base64.b64encode(data).decode()})
    finally:
        os.close(base)
    return files


def main():
    if ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE; reset for the program by execve
        raise SystemExit("sandbox bootstrap: prctl(PR_SET_DUMPABLE) failed")
    # Root, without the capabilities a root process usually has: only those to hand files to their
    # owners, become the program's (or the judge's) uid, read what the program wrote, and stop
    # everything it left running. Neither the program nor the judge can read, trace or signal this
    # process, nor PID 1.
    if os.getuid() != 0:
        raise SystemExit("sandbox bootstrap: must start as root (it drops to uid %d for the program)" % PROGRAM_UID)
    # The parent must never import from where the program writes: -c put the cwd (/work) first on the path.
    orig_path = list(sys.path)
    sys.path[:] = [p for p in sys.path if p and not p.startswith((WORK, "/tmp"))]
    preimport(sys.argv[1:])
    if len(sys.argv) > 1:
        import gc
        # What was imported stays out of every later collection: the program's gc passes skip it.
        gc.freeze()
    forget_writable_paths()
    out = io.BufferedWriter(FullWriter(1))
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    # The in-process program's status, written just before it exits (closed by an exec: then EOF).
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        parent_sock.close()
        os.close(done_r)
        child(child_sock, done_w, orig_path)
    child_sock.close()
    os.close(done_w)
    warm_up_parent()
    # READY once both processes are warm (the child says so with one byte; b"" if it died, and then its
    # status tells what happened).
    try:
        parent_sock.recv(1)
    except OSError:
        pass
    out.write(READY)
    out.flush()
    stdin = sys.stdin.buffer
    req = json.loads(stdin.readline())
    out.write(ACK)
    out.flush()
    names = receive(stdin, req.get("inputBytes"))
    stdin.close()
    os.makedirs(os.path.join(WORK, "inputs"), exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    guarded = place_owners(names, req)
    env = dict(os.environ)
    env.update(req["env"])
    judge = req.get("judge")
    give, keep, channel, drainer = [], [], [], None
    if judge:
        # program -> judge and judge -> program
        p2j_r, p2j_w = os.pipe()
        j2p_r, j2p_w = os.pipe()
        give = [p2j_w, j2p_r]
    elif req.get("channel"):
        ch_r, ch_w = os.pipe()
        give = [ch_w]
        drainer = threading.Thread(target=drain, args=(ch_r, 1 << 20, channel), daemon=True)
        drainer.start()
    relays, relay_w = [], []
    if req.get("relayOutput"):
        pipes = [os.pipe(), os.pipe()]
        relay_w = [w for _, w in pipes]
        give = relay_w + give
        for (r, _), dst in zip(pipes, (1, 2)):
            t = threading.Thread(target=relay, args=(r, dst), daemon=True)
            t.start()
            relays.append(t)
    try:
        go = json.dumps({"argv": req["argv"], "env": env, "inProcess": req["inProcess"], "relay": bool(relays)}).encode()
        socket.send_fds(parent_sock, [go[:1]], give)
        parent_sock.sendall(go[1:])
        parent_sock.close()
    except OSError:
        pass  # the child is gone (killed from inside the container?): its status says what happened
    for fd in give:
        if not (judge and fd in relay_w):
            os.close(fd)
    judge_code = None
    if judge:
        # The judge's output goes through the relay too (its report is a file, but what it prints is shown).
        jpid = start_judge(judge, env, j2p_w, p2j_r, relay_w)
        for fd in [j2p_w, p2j_r] + relay_w:
            os.close(fd)
        _, status = os.waitpid(jpid, 0)
        judge_code = os.waitstatus_to_exitcode(status)
        if judge_code < 0:
            judge_code = 128 - judge_code
        early = b""
    else:
        early = wait_early(pid, done_r)
    os.close(done_r)
    status = None
    if not judge and not early.isdigit():
        _, status = os.waitpid(pid, 0)
    # Anything the program (or the judge) left running could keep writing into stdout (corrupting the
    # trailer) or keep changing /work/out while it is read. As root, kill(-1) reaches every process but
    # PID 1 and this one.
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if status is None:
        # An in-process program that already reported its status, or a judge's program, stopped just now.
        _, status = os.waitpid(pid, 0)
    code = int(early) if early.isdigit() else os.waitstatus_to_exitcode(status)
    if code < 0:
        code = 128 - code
    # Every writer of the relayed pipes is dead (kill above): what they wrote is copied out before the trailer.
    for t in relays:
        t.join(10)
    files, errors = collect(req["limits"])
    head = {"exitCode": code}
    gone = replaced(guarded)
    if gone:
        head["replaced"] = gone
    if judge:
        jerrors = []
        head["judge"] = {"exitCode": judge_code, "files": collect_judge(judge, req["limits"]["maxFileBytes"], jerrors), "errors": jerrors}
    if drainer is not None:
        drainer.join(5)
        clipped = bool(channel) and channel[-1] is None
        head["channel"] = {"text": b"".join(c for c in channel if c is not None).decode("utf-8", "replace"), "clipped": clipped}
    if len(errors) > 20:
        errors = errors[:20] + ["... and %d more" % (len(errors) - 20)]
    head["errors"] = errors
    marker = req["marker"].encode()
    # The marker ends stderr (everything the program wrote there came before it, in the same pipe) and
    # closes the trailer, so the host knows it has all of the run's output without waiting for the
    # container to stop.
    sys.stderr.flush()
    write_all(2, marker)
    out.flush()
    # The trailer leaves in writes of up to 1 MiB: every write is at least one frame of Docker's attach
    # stream, and tarfile's 10 KiB records made a 1 MiB artifact take twice as long as its bare bytes.
    trailer = io.BufferedWriter(FullWriter(1), buffer_size=1 << 20)
    trailer.write(marker + json.dumps(head).encode() + b"\n")
    send(trailer, files)
    trailer.write(marker)
    trailer.flush()
    sys.exit(code if not judge else judge_code)


main()
`;

/** Written by the bootstrap before the program can run (see the protocol above); the host strips them. */
export const BOOTSTRAP_READY = Buffer.from("\0loopsmith-ready\n");
export const BOOTSTRAP_ACK = Buffer.from("\0loopsmith-go\n");
