/**
 * The gfal2 helper: a small Python program (python3-gfal2) that a job's transfers over
 * the grid protocols share. One process per job's transfer set, not per file: starting
 * Python with gfal2 and its plugins costs 0.04 to 0.3 s of wall time, which a job with a
 * hundred small inputs would pay a hundred times (docs/data-staging.md has the measurement).
 *
 * Two phases. Started ahead as a spare (spares.ts), by the service's account, it loads
 * Python, gfal2 and its plugins, says so (`{"loaded": true}`: the benchmark waits for it)
 * and waits for one line: the bind, which ties it to
 * exactly one job's account and credential. Until then it holds nothing of any job (its
 * environment is the service's settings only). On the bind it drops to the job's
 * account (setgroups to none, setgid, setuid; checked with getres*id), makes itself
 * non-dumpable (no ptrace or /proc reading by that account's other processes), and only
 * then takes the credential: a proxy file path (X509_USER_PROXY, the file written by
 * the service for that account only), a token, or, for a helper that stays the
 * service's, one S3 endpoint's keys. It answers `{"bound": true}` (or false and a
 * message, and ends). The credential goes both into the environment (read by the
 * xrootd security libraries when they first authenticate) and into the gfal2 context
 * (which read the environment when it was made, before the bind: X509 CERT/KEY,
 * BEARER TOKEN). Nothing comes on the command line, which `ps` shows.
 *
 * Protocol after the bind: one JSON request per line on stdin, JSON lines back on
 * stdout, each with the request's id: `{"id", "progress": bytes}` while copying, then
 * `{"id", "ok": true, ...}` or `{"id", "ok": false, "errno", "message"}`. Requests:
 * `stat` (url), `copy` (src, dst, overwrite, parent: create the destination's parent
 * folders, timeout, checksum: adler32 compared end to end, xrootd computing the
 * remote side on the server; mode: a download's mode, set by the helper on its file,
 * whose size, mode and kind come back with the answer; small: a download known small,
 * checked by gfal2's own "both" mode), `checksum` (url, algorithm).
 *
 * A download with the end-to-end adler32 (the destination a local file) asks the server
 * for the source's checksum and compares it with the local file's adler32 (zlib) after
 * the copy: the check gfal2's "both" mode makes. A large file (4 MiB copied by a progress
 * report) hands the question to an asker thread then, so the server's reading of the
 * whole file runs beside the rest of the copy (a 1 GiB file: the copy does not wait for
 * that read); a smaller one asks from its own thread after the copy (a hand-over to another
 * thread and back cost more than the question). A download the service expects to be
 * small (`small`: its size declared under SMALL_FILE_BYTES, or the job's downloads so far
 * all small; transfers.ts, expectSmall) gets gfal2's own "both" mode: the same end-to-end
 * comparison at almost no CPU beside the copy (the question from Python costs about 0.5
 * ms: gfal2 parses its URL again, compiling regular expressions), though gfal2 asks the
 * server after the copy, which reads the whole source then (harmless for a small file;
 * one that turns out large has the question asked beside its copy as well, `warmed`). An
 * upload keeps gfal2's own check (the remote checksum exists only after the copy).
 *
 * Requests are served by `workers` threads (the job's transfers in flight,
 * `maxTransfersPerJob`, sent with the bind) sharing one gfal2 context: gfal2 and the
 * xrootd client release Python's lock while they wait on the network, so a job's small
 * files overlap their round trips. Each thread reads its own next request (under a
 * lock) and writes each reply as one whole line under another, so the lines of two
 * threads never interleave (an interleaved line would lose both answers). Progress
 * goes out from 0.1 s into a copy, then at most twice a second: a small file costs one
 * line, its answer.
 */
export const HELPER_SCRIPT = String.raw`
import ctypes, json, os, queue, stat, sys, threading, time, zlib
import gfal2

libc = ctypes.CDLL(None, use_errno=True)
NOWHERE = "/dev/null/no-credential"
def name(n):
    libc.prctl(15, ctypes.c_char_p(n), 0, 0, 0)  # PR_SET_NAME: what ps shows
name(b"gfal2-spare")
# Warnings and errors only: gfal2 hands every message of its default level (a copy's
# events) to Python's logging, importing the module for each (7 to 8 % of a small copy's
# CPU, perf); the helper's stderr is not read, and failures come back as GErrors.
gfal2.set_verbose(gfal2.verbose_level.warning)
ctx = gfal2.creat_context()
out = sys.stdout
out_lock = threading.Lock()

def reply(o):
    line = json.dumps(o) + "\n"
    with out_lock:
        out.write(line)
        out.flush()

reply({"loaded": True})

def bind(b):
    uid = b.get("uid")
    if uid is not None:
        gid = b["gid"]
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
            raise OSError("the account switch did not hold")
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE 0
        raise OSError("cannot make the helper non-dumpable")
    work = b["work"]
    os.chdir(work)
    os.environ["HOME"] = work
    # Only the job's own credential, never one found in a default place: gfal2 made the
    # context with /tmp/x509up_u<uid> of the spare's account, and the xrootd security
    # libraries look for /tmp/x509up_u<uid>, ~/.globus, /tmp/bt_u<uid> or a Kerberos
    # cache of the job's account, where an earlier job of a pool or shared account may
    # have left another user's. Every credential setting names the job's or NOWHERE (a
    # path under a file, which no one can create), and xrootd may only try the protocol
    # of the job's credential (none: GSI, which then fails for want of a proxy).
    proxy = b.get("proxy") or NOWHERE
    token = b.get("token")
    for v in ("X509_USER_PROXY", "XrdSecGSIUSERPROXY"):
        os.environ[v] = proxy
    for v in ("X509_USER_CERT", "X509_USER_KEY", "XrdSecGSIUSERCERT", "XrdSecGSIUSERKEY"):
        os.environ[v] = NOWHERE
    os.environ["XrdSecPROTOCOL"] = "ztn" if token else "gsi"
    ctx.set_opt_string("X509", "CERT", proxy)
    ctx.set_opt_string("X509", "KEY", proxy)
    os.environ["BEARER_TOKEN"] = token or ""
    for v in ("BEARER_TOKEN_FILE", "XDG_RUNTIME_DIR", "KRB5CCNAME"):
        os.environ[v] = NOWHERE
    if token:
        ctx.set_opt_string("BEARER", "TOKEN", token)
    # The site's S3 keys of the one endpoint this helper serves (a helper that stays the
    # service's): gfal2's per-host group, so no other host's requests are signed with them.
    k = b.get("s3")
    if k and uid is None:
        group = "S3:" + k["host"]
        ctx.set_opt_string(group, "ACCESS_KEY", k["accessKey"])
        ctx.set_opt_string(group, "SECRET_KEY", k["secretKey"])
        ctx.set_opt_string(group, "REGION", k["region"])
        ctx.set_opt_boolean(group, "ALTERNATE", bool(k["pathStyle"]))
    name(b"gfal2-job")
    return max(1, int(b.get("workers", 1)))

line = sys.stdin.readline()
if not line:
    sys.exit(0)
try:
    req = json.loads(line)
    if req.get("op") != "bind":
        raise ValueError("the first request must bind the helper")
    WORKERS = bind(req)
except Exception as e:
    reply({"bound": False, "message": str(e)})
    sys.exit(1)
del line, req
reply({"bound": True})

def local_adler32(path):
    a = 1
    with open(path, "rb") as f:
        while True:
            b = f.read(4 << 20)
            if not b:
                return a
            a = zlib.adler32(b, a)

asked = queue.Queue()
def asker():
    while True:
        url, algorithm, box, done = asked.get()
        try:
            box.append(ctx.checksum(url, algorithm))
        except Exception as e:
            box.append(e)
        done.set()

# A copy that has moved this many bytes by a progress report is a large one: its
# adler32 is asked beside the rest of the copy. xrootd reports a copy per 8 MiB chunk,
# so a smaller file reports once, at its end.
OVERLAP_FROM = 4 << 20

def pulled(req, p, monitor):
    # The source's adler32, compared with the destination's after the copy. A large file
    # (a report of OVERLAP_FROM bytes) hands the question to an asker thread at once, so
    # the server's read of it overlaps the copy; a small file asks here, after its copy:
    # no hand-over to another thread and back per file.
    box, done, handed = [], threading.Event(), [False]
    def on_progress(src, dst, avg, inst, transferred, elapsed):
        if not handed[0] and transferred >= OVERLAP_FROM:
            handed[0] = True
            asked.put((req["src"], "ADLER32", box, done))
        monitor(src, dst, avg, inst, transferred, elapsed)
    p.monitor_callback = on_progress
    ctx.filecopy(p, req["src"], req["dst"])
    if handed[0]:
        done.wait()
        remote = box[0]
        if isinstance(remote, Exception):
            raise remote
    else:
        remote = ctx.checksum(req["src"], "ADLER32")
    local = local_adler32(req["dst"][len("file://"):])
    if int(remote, 16) != local:
        raise gfal2.GError("checksum mismatch: source %s, destination %08x" % (remote, local), 84)

def warmed(req, monitor):
    # A download expected small, checked by gfal2's "both" mode, that turns out large (a
    # report of OVERLAP_FROM bytes): the server's adler32 is asked by an asker thread at
    # once, beside the rest of the copy, as for a large file of the helper's own check.
    # gfal2 asks again after the copy; a server that keeps what it computed (xrootd
    # does) answers that without reading the file again. The answer here is not waited for.
    handed = [False]
    def on_progress(src, dst, avg, inst, transferred, elapsed):
        if not handed[0] and transferred >= OVERLAP_FROM:
            handed[0] = True
            asked.put((req["src"], "ADLER32", [], threading.Event()))
        monitor(src, dst, avg, inst, transferred, elapsed)
    return on_progress

def placed(req, answer):
    # A download into this helper's folder: given the mode asked for and looked at through
    # one descriptor that did not follow a link, as this account (its own file): size,
    # mode and whether it is a regular file of one link go with the answer.
    # No look (a link there, say): the service looks itself and names what it finds.
    if "mode" not in req or not req["dst"].startswith("file://"):
        return answer
    try:
        fd = os.open(req["dst"][len("file://"):], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            os.fchmod(fd, int(req["mode"]))
            st = os.fstat(fd)
        finally:
            os.close(fd)
    except OSError:
        return answer
    answer.update(size=st.st_size, mode=st.st_mode & 0o7777, regular=stat.S_ISREG(st.st_mode) and st.st_nlink == 1)
    return answer

def handle(req):
    rid = req["id"]
    op = req["op"]
    if op == "stat":
        st = ctx.stat(req["url"])
        return {"id": rid, "ok": True, "size": st.st_size}
    if op == "checksum":
        return {"id": rid, "ok": True, "value": ctx.checksum(req["url"], req["algorithm"])}
    if op == "copy":
        p = ctx.transfer_parameters()
        p.overwrite = bool(req.get("overwrite", True))
        p.create_parent = bool(req.get("parent", False))
        p.timeout = int(req["timeout"])
        # Progress from 0.1 s into the copy, then at most twice a second: a small file
        # (done sooner) sends none, only its answer.
        last = [time.monotonic() - 0.4]
        def monitor(src, dst, avg, inst, transferred, elapsed):
            now = time.monotonic()
            if now - last[0] >= 0.5:
                last[0] = now
                reply({"id": rid, "progress": int(transferred)})
        p.monitor_callback = monitor
        if req.get("checksum") == "ADLER32" and req["dst"].startswith("file://") and not req.get("small"):
            pulled(req, p, monitor)
            return placed(req, {"id": rid, "ok": True})
        if req.get("checksum"):
            p.set_checksum(gfal2.checksum_mode.both, req["checksum"], "")
            if req.get("small"):
                p.monitor_callback = warmed(req, monitor)
        ctx.filecopy(p, req["src"], req["dst"])
        return placed(req, {"id": rid, "ok": True})
    return {"id": rid, "ok": False, "errno": 22, "message": "unknown operation"}

def serve(req):
    try:
        reply(handle(req))
    except gfal2.GError as e:
        reply({"id": req.get("id"), "ok": False, "errno": e.code, "message": str(e)})
    except Exception as e:
        reply({"id": req.get("id"), "ok": False, "errno": 5, "message": str(e)})

# Each worker reads its next request itself (one at a time, under a lock): no hand-over
# from a reading thread, which cost a thread switch per request.
in_lock = threading.Lock()
def worker():
    while True:
        with in_lock:
            line = sys.stdin.readline()
        if not line:
            return
        try:
            req = json.loads(line)
        except ValueError:
            continue
        serve(req)

for _ in range(WORKERS):
    threading.Thread(target=asker, daemon=True).start()
threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
# Every answer is written and flushed, every copy's files closed: end now, without the
# interpreter's and the xrootd client's teardown (10 to 50 ms at a job's end, measured).
out.flush()
os._exit(0)
`;
