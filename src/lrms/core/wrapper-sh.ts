/**
 * The fork backend's job wrapper as a POSIX sh script: the fallback when no C compiler
 * is available. Same command line, claim protocol and output files as the C wrapper
 * (./wrapper-c.ts), with less precision (docs/batch-backends.md):
 *  - times in whole seconds for wall time, CPU time from the shell's `times`;
 *  - no resident-memory figure and no memory limit (maxrss 0);
 *  - cancel and limits send TERM to the whole process group, but the KILL after the
 *    grace time reaches only the job's main process (the shell cannot leave its own
 *    process group without job control);
 *  - an exit code above 128 is reported as a signal (the shell cannot tell them apart).
 */
import { STATUS_UNWRITTEN_EXIT } from './job-files.js';

export const WRAPPER_SH_SOURCE = String.raw`#!/bin/sh
# Ceres job wrapper (fork backend), POSIX sh fallback. Generated: do not edit.
# usage: wrapper DIR SESSION STDIN STDOUT STDERR JOIN WALL CPU MEMKB GRACE SAMPLEMS CGROUP MARK CRED SCRATCH
# (SCRATCH, the C wrapper's private temporary folders, comes only with CRED: always '' here)
[ $# -eq 15 ] || { echo "usage: $0 DIR SESSION STDIN STDOUT STDERR JOIN WALL CPU MEMKB GRACE SAMPLEMS CGROUP MARK CRED SCRATCH" >&2; exit 2; }
# A shell cannot switch accounts safely: jobs under local accounts need the C wrapper.
[ -z "${'$'}{14}" ] || { echo "error the sh job wrapper cannot run a job as a local account"; exit 1; }
d=$1 session=$2 in=$3 out=$4 err=$5 join=$6 wall=$7 cpu=$8 grace=${'$'}{10} cg=${'$'}{12} mark=${'$'}{13}
trap '' HUP PIPE
# A cancel before the job starts is remembered; the job is then not started at all.
early=
trap 'early=cancelled' TERM INT

ticks=0
if [ -r /proc/$$/stat ]; then
  read -r l < /proc/$$/stat
  set -- ${'$'}{l##*) }
  ticks=${'$'}{20:-0}
fi
# Claim DIR: ln fails if the pid file exists, so exactly one wrapper runs the job.
printf '%s %s\n' "$$" "$ticks" > "$d/.pid.$$" || { echo "error cannot write the pid file"; exit 1; }
if ! ln "$d/.pid.$$" "$d/pid" 2>/dev/null; then
  rm -f "$d/.pid.$$"
  if [ -e "$d/pid" ]; then echo dup; exit 0; fi
  echo "error cannot claim the job directory"; exit 1
fi
rm -f "$d/.pid.$$"
echo "ok $$"
exec </dev/null >/dev/null 2>&1
# The job's cgroup (see the C wrapper); unusable: left to the backend's sweep by mark.
if [ -n "$cg" ]; then mkdir -p "$cg" 2>/dev/null || cg=; fi

alive() {
  [ -r "/proc/$1/stat" ] || { kill -0 "$1" 2>/dev/null; return; }
  read -r s < "/proc/$1/stat" || return 1
  case ${'$'}{s##*) } in Z*) return 1 ;; esac
  return 0
}

reason=
# Stop the job: TERM to the whole process group (this shell's trap then runs stop
# again, which returns at once), KILL to the main process after the grace time. The
# traps stay set rather than ignored: an ignored signal would be inherited by the job.
job=
stopping=
stop() {
  [ -z "$reason" ] && reason=$1
  [ -n "$stopping" ] && return 0
  stopping=1
  [ -n "$job" ] && terminate
  return 0
}
terminate() {
  kill -TERM 0 2>/dev/null
  ( sleep "$grace"; alive "$job" && kill -KILL "$job" 2>/dev/null ) &
}

secs() { # "1m2.500000s" -> "62.500000"
  m=${'$'}{1%%m*}; s=${'$'}{1#*m}; s=${'$'}{s%s}
  case $s in *.*) i=${'$'}{s%%.*}; f=${'$'}{s#*.} ;; *) i=$s; f=0 ;; esac
  echo "$((m * 60 + i)).$f"
}

set -- $(date -u '+%s %Y%m%d%H%M%SZ')
start=$1 t0=$2
trap 'stop cancelled' TERM INT
trap 'stop "wall time limit exceeded"' USR1
if [ -n "$early" ]; then
  reason=cancelled stopping=1
  ( exit 143 ) &
else (
  trap - HUP PIPE
  # echo is built in: the subshell itself (and so the whole job) joins the cgroup.
  [ -n "$cg" ] && { echo 0 > "$cg/cgroup.procs"; } 2>/dev/null
  CERES_JOB_MARK=$mark; export CERES_JOB_MARK
  fail() { printf '%s\n' "$1" > "$d/failure"; exit 127; }
  cd "$session" 2>/dev/null || fail "cannot enter the session directory"
  if [ -n "$in" ]; then [ -r "$in" ] || fail "cannot open the stdin file $in"; exec < "$in"; fi
  if [ -n "$out" ]; then { true > "$out"; } 2>/dev/null || fail "cannot open the stdout file $out"; exec > "$out"; else exec > /dev/null; fi
  if [ "$join" = 1 ]; then exec 2>&1
  elif [ -n "$err" ]; then { true > "$err"; } 2>/dev/null || fail "cannot open the stderr file $err"; exec 2> "$err"
  else exec 2> /dev/null; fi
  # Soft limit: SIGXCPU (recognisable); hard limit a little later: SIGKILL.
  if [ "$cpu" != 0 ]; then ulimit -S -t "$cpu" 2>/dev/null; ulimit -H -t $((cpu + 2)) 2>/dev/null; fi
  # 3: where job.sh reports why it could not run the job (./job-script.ts).
  exec 3> "$d/failure"
  exec /bin/sh "$d/job.sh"
) & fi
job=$!
# A stop that came while the job was being started could not reach it yet.
[ -n "$stopping" ] && terminate
wd=
if [ "$wall" != 0 ]; then
  ( trap 'kill $w 2>/dev/null; exit 0' TERM; sleep "$wall" & w=$!; wait $w && kill -USR1 $$ ) &
  wd=$!
fi
while :; do
  wait "$job"; rc=$?
  alive "$job" || break
done
# A trap may have interrupted the last wait just as the job ended: ask once more.
if [ "$rc" -gt 128 ]; then wait "$job"; r2=$?; [ "$r2" -ne 127 ] && rc=$r2; fi
set -- $(date -u '+%s %Y%m%d%H%M%SZ')
end=$1 t1=$2
[ -n "$wd" ] && kill "$wd" 2>/dev/null
# Whatever the job left in its cgroup (daemons in their own session) goes too.
if [ -n "$cg" ]; then
  n=0
  # (cgroup files report size 0: read them)
  while [ -n "$(cat "$cg/cgroup.procs" 2>/dev/null)" ] && [ $n -lt 50 ]; do
    { echo 1 > "$cg/cgroup.kill"; } 2>/dev/null || for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    sleep 0.1 2>/dev/null || sleep 1; n=$((n + 1))
  done
  rmdir "$cg" 2>/dev/null
fi
# times must run in this shell (not in a command substitution) to see the job's times.
times > "$d/.times"
{ read -r _; read -r cu cs; } < "$d/.times"
rm -f "$d/.times"
ut=$(secs "$cu"); kt=$(secs "$cs")
if [ -z "$reason" ] && [ -s "$d/failure" ]; then read -r reason < "$d/failure"; fi
if [ -z "$reason" ] && [ "$cpu" != 0 ] && [ $((${'$'}{ut%%.*} + ${'$'}{kt%%.*})) -ge "$cpu" ]; then reason="cpu time limit exceeded"; fi
sig=
if [ "$rc" -gt 128 ] && [ "$rc" -le 192 ]; then sig=SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))); fi
[ "$sig" = SIGXCPU ] && [ -z "$reason" ] && reason="cpu time limit exceeded"
node=$(uname -n)
wt=$((end - start))
{
  echo "nodename=$node"; echo "WallTime=${'$'}{wt}s"; echo "UserTime=${'$'}{ut}s"; echo "KernelTime=${'$'}{kt}s"
  echo "LRMSStartTime=$t0"; echo "LRMSEndTime=$t1"; echo "exitcode=$rc"
  if [ -n "$reason" ]; then echo "LRMSMessage=$reason"; fi
} > "$d/.diag.tmp" && mv -f "$d/.diag.tmp" "$d/diag"
{
  echo "exitcode=$rc"; echo "signal=$sig"; echo "failure=$reason"; echo "walltime=$wt"
  echo "usertime=$ut"; echo "kerneltime=$kt"; echo "maxrss=0"; echo "start=${'$'}{start}000"; echo "end=${'$'}{end}000"
  echo "nodename=$node"
} > "$d/.status.tmp" && mv -f "$d/.status.tmp" "$d/status" || exit ${STATUS_UNWRITTEN_EXIT}
`;
