/**
 * The gfal2 helper: a small Python program (python3-gfal2) that a job's transfers over
 * the grid protocols share. One process per job's transfer set, not per file: starting
 * Python with gfal2 and its plugins costs about 0.15 s of CPU, which a job with a hundred
 * small inputs would pay a hundred times (docs/data-staging.md has the measurement).
 *
 * Protocol: one JSON request per line on stdin, JSON lines back on stdout, each with the
 * request's id: `{"id", "progress": bytes}` while copying, then `{"id", "ok": true, ...}`
 * or `{"id", "ok": false, "errno", "message"}`. Requests: `stat` (url), `copy` (src, dst,
 * overwrite, timeout, checksum: gfal2 compares the source's and the destination's
 * adler32, xrootd computing it on the server), `checksum` (url, algorithm).
 *
 * Credentials come from the environment only (X509_USER_PROXY naming a file only the
 * helper's account can read, BEARER_TOKEN): never from argv, which `ps` shows.
 */
export const HELPER_SCRIPT = String.raw`
import json, os, sys
import gfal2

ctx = gfal2.creat_context()
out = sys.stdout

def reply(o):
    out.write(json.dumps(o) + "\n")
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
        p.create_parent = True
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

for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    try:
        reply(handle(req))
    except gfal2.GError as e:
        reply({"id": req.get("id"), "ok": False, "errno": e.code, "message": str(e)})
    except Exception as e:
        reply({"id": req.get("id"), "ok": False, "errno": 5, "message": str(e)})
`;
