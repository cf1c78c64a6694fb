// The program that runs as the container's main process (under docker-init). It exists because Docker's
// archive API cannot write into a tmpfs under a read-only root, and the tmpfs is gone once the container
// stops: so files travel through the process's own stdin and stdout instead.
//
// Protocol (one run per container):
//   stdin:  one JSON line {marker, argv, limits} followed by a tar of the inputs (inputs/<name>), the work
//           files (<relative path>) and the script (<filename>), all extracted under /work.
//   then:   argv runs with cwd /work, stdin /dev/null, and the container's own stdout/stderr.
//   stdout: whatever the program printed, then the marker, one JSON line {exitCode, errors}, and a tar of
//           the regular files under /work/out. The marker is random per run and reaches the container only
//           through stdin; the bootstrap makes itself non-dumpable so that the program, running under the
//           same uid, cannot read it out of the bootstrap's memory or write to its stdout through /proc.
//   exit:   the program's exit code (128+N for signal N), so the outcome survives a lost trailer.
//
// Python because the image has it (tarfile, dir_fd opens with O_NOFOLLOW, prctl via ctypes); -I -S keep the
// caller's PYTHON* variables and site-packages out of the bootstrap itself.
export const BOOTSTRAP_PY = String.raw`
import ctypes, json, os, signal, stat, subprocess, sys, tarfile

WORK = "/work"
OUT = "/work/out"
KINDS = {stat.S_IFLNK: "symlink", stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket",
         stat.S_IFCHR: "character device", stat.S_IFBLK: "block device"}


def receive(stdin):
    with tarfile.open(fileobj=stdin, mode="r|") as tf:
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


def main():
    if ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE; reset for the program by execve
        raise SystemExit("sandbox bootstrap: prctl(PR_SET_DUMPABLE) failed")
    stdin = sys.stdin.buffer
    req = json.loads(stdin.readline())
    receive(stdin)
    stdin.close()
    os.makedirs(os.path.join(WORK, "inputs"), exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    argv = req["argv"]
    try:
        code = subprocess.call(argv, stdin=subprocess.DEVNULL, cwd=WORK)
    except OSError as e:
        sys.stderr.write("sandbox: cannot start %s: %s\n" % (argv[0], e.strerror))
        sys.stderr.flush()
        code = 127
    if code < 0:
        code = 128 - code
    # Anything the program left running could keep writing into stdout (corrupting the trailer) or keep
    # changing /work/out while it is read. kill(-1) signals every process this uid may signal, except the
    # caller and init.
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    files, errors = collect(req["limits"])
    if len(errors) > 20:
        errors = errors[:20] + ["... and %d more" % (len(errors) - 20)]
    out = sys.stdout.buffer
    out.write(req["marker"].encode() + json.dumps({"exitCode": code, "errors": errors}).encode() + b"\n")
    send(out, files)
    out.flush()
    sys.exit(code)


main()
`;
