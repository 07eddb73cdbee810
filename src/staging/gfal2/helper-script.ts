/**
 * The gfal2 helper: a small Python program (python3-gfal2) that a job's transfers over
 * the grid protocols share. One process per job's transfer set, not per file: starting
 * Python with gfal2 and its plugins costs about 0.15 s of CPU, which a job with a hundred
 * small inputs would pay a hundred times (docs/data-staging.md has the measurement).
 *
 * Protocol: one JSON request per line on stdin, JSON lines back on stdout, each with the
 * request's id: `{"id", "progress": bytes}` while copying, then `{"id", "ok": true, ...}`
 * or `{"id", "ok": false, "errno", "message"}`. Requests: `stat` (url), `copy` (src, dst,
 * overwrite, parent: create the destination's parent folders, timeout, checksum: gfal2
 * compares the source's and the destination's adler32, xrootd computing it on the
 * server), `checksum` (url, algorithm).
 *
 * Requests are served by CERES_GFAL2_WORKERS threads (the job's transfers in flight,
 * `maxTransfersPerJob`) sharing one gfal2 context: gfal2 and the xrootd client release
 * Python's lock while they wait on the network, so a job's small files overlap their
 * round trips (100 files of 10 kB: 0.23 s one after the other, 0.13 s from 4 threads,
 * in Python alone). Each reply is one write of a whole line under a lock, so the lines
 * of two threads never interleave (an interleaved line would lose both answers).
 *
 * Credentials come from the environment only (X509_USER_PROXY naming a file only the
 * helper's account can read, BEARER_TOKEN; an S3 endpoint's keys in CERES_GFAL2_S3, for
 * a helper of the service's account only): never from argv, which `ps` shows.
 */
export const HELPER_SCRIPT = String.raw`
import json, os, queue, sys, threading
import gfal2

ctx = gfal2.creat_context()
# The site's S3 keys of the one endpoint this helper serves (a helper of the service's
# account): gfal2's per-host group, so no other host's requests are signed with them.
s3 = os.environ.pop("CERES_GFAL2_S3", None)
if s3:
    k = json.loads(s3)
    group = "S3:" + k["host"]
    ctx.set_opt_string(group, "ACCESS_KEY", k["accessKey"])
    ctx.set_opt_string(group, "SECRET_KEY", k["secretKey"])
    ctx.set_opt_string(group, "REGION", k["region"])
    ctx.set_opt_boolean(group, "ALTERNATE", bool(k["pathStyle"]))
    del k, s3
out = sys.stdout
out_lock = threading.Lock()
WORKERS = max(1, int(os.environ.get("CERES_GFAL2_WORKERS", "1")))

def reply(o):
    line = json.dumps(o) + "\n"
    with out_lock:
        out.write(line)
        out.flush()

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
        if req.get("checksum"):
            p.checksum_check = True
            p.set_checksum(gfal2.checksum_mode.both, req["checksum"], "")
        def monitor(src, dst, avg, inst, transferred, elapsed):
            reply({"id": rid, "progress": int(transferred)})
        p.monitor_callback = monitor
        ctx.filecopy(p, req["src"], req["dst"])
        return {"id": rid, "ok": True}
    return {"id": rid, "ok": False, "errno": 22, "message": "unknown operation"}

def serve(req):
    try:
        reply(handle(req))
    except gfal2.GError as e:
        reply({"id": req.get("id"), "ok": False, "errno": e.code, "message": str(e)})
    except Exception as e:
        reply({"id": req.get("id"), "ok": False, "errno": 5, "message": str(e)})

work = queue.Queue()
def worker():
    while True:
        req = work.get()
        if req is None:
            return
        serve(req)

threads = [threading.Thread(target=worker, daemon=True) for _ in range(WORKERS)]
for t in threads:
    t.start()
for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    work.put(req)
for t in threads:
    work.put(None)
for t in threads:
    t.join()
`;
