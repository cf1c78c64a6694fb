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
// Python because the image has it (tarfile, lstat, O_NOFOLLOW, prctl via ctypes); -I -S keep the caller's
// PYTHON* variables and site-packages out of the bootstrap itself.
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


def collect(lim):
    # Files are opened here, once, so that what was checked is what gets sent.
    files, errors, total, seen = [], [], 0, 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            names = sorted(os.listdir(os.path.join(OUT, rel_dir)))
        except OSError as e:
            errors.append("%s: cannot list (%s)" % (rel_dir or ".", e.strerror))
            continue
        for name in names:
            rel = rel_dir + name
            seen += 1
            if seen > lim["maxEntries"]:
                errors.append("stopped after %d entries under /work/out" % lim["maxEntries"])
                return files, errors
            # lstat and O_NOFOLLOW, never stat: a link is reported, not followed.
            st = os.lstat(os.path.join(OUT, rel))
            if stat.S_ISDIR(st.st_mode):
                stack.append(rel + "/")
                continue
            if not stat.S_ISREG(st.st_mode):
                errors.append("%s: skipped, not a regular file (%s)" % (rel, KINDS.get(stat.S_IFMT(st.st_mode), "special")))
                continue
            try:
                fd = os.open(os.path.join(OUT, rel), os.O_RDONLY | os.O_NOFOLLOW)
            except OSError as e:
                errors.append("%s: cannot read (%s)" % (rel, e.strerror))
                continue
            size = os.fstat(fd).st_size
            if size > lim["maxFileBytes"]:
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
