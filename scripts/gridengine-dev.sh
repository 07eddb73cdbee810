#!/usr/bin/env bash
# A private single-host Grid Engine (sge_qmaster + sge_execd on loopback) for tests and trials.
#
#   scripts/gridengine-dev.sh start DIR    make a cell in DIR, start the daemons, wait until the queue takes jobs
#   scripts/gridengine-dev.sh stop DIR     stop the daemons by their pid files
#   scripts/gridengine-dev.sh status DIR   say which daemons run (exit 1 when not all of them)
#
# Everything lives in DIR: DIR/root is the SGE_ROOT (links to the installed programs, a cell
# `default` of its own), DIR/spool the qmaster's Berkeley DB spool (a copy of the one the
# Debian package made at install, never the package's own), DIR/execd the execution
# daemon's spool; nothing is written elsewhere and nothing starts by itself. Needs root and
# the Debian packages `gridengine-master gridengine-exec gridengine-client` (8.1.9; preseed
# their debconf questions, .ci/run). The daemons run as root (admin_user none), so DIR may be
# private to root.
# Two queues: `all.q` (the default, 4 slots, h_rt at most one hour) and `long` (2 slots, no limit).
# Ports: GRIDENGINE_DEV_PORT (sge_qmaster, default 6444) and GRIDENGINE_DEV_PORT+1 (sge_execd).
# `start` prints the environment every Grid Engine command needs (SGE_ROOT, SGE_CELL, the ports).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|status DIR" >&2
  exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
installed=/var/lib/gridengine
port=${GRIDENGINE_DEV_PORT:-6444}
if [ "$cmd" != start ] && [ -s "$dir/port" ]; then port=$(cat "$dir/port"); fi
export SGE_ROOT=$dir/root SGE_CELL=default SGE_QMASTER_PORT=$port SGE_EXECD_PORT=$((port + 1))
common=$SGE_ROOT/default/common
# The host name as Grid Engine resolves it on loopback.
host=localhost

pid_of() { # the pid in a daemon's pid file, when that process runs
  local f=$1 pid
  [ -s "$f" ] || return 1
  pid=$(tr -dc 0-9 <"$f")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}
qmaster_pid() { pid_of "$dir/qmaster/qmaster.pid"; }
execd_pid() { pid_of "$dir/execd.pid"; }

wait_for() { # wait_for SECONDS WHAT COMMAND...
  local s=$1 what=$2
  shift 2
  for _ in $(seq 1 $((s * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "gridengine-dev: $what did not happen within ${s}s" >&2
  return 1
}

status() {
  local ok=0
  if p=$(qmaster_pid); then echo "sge_qmaster running (pid $p)"; else echo "sge_qmaster not running"; ok=1; fi
  if p=$(execd_pid); then echo "sge_execd running (pid $p)"; else echo "sge_execd not running"; ok=1; fi
  return $ok
}

stop() {
  local pids=() p
  if p=$(execd_pid); then pids+=("$p"); fi
  if p=$(qmaster_pid); then pids+=("$p"); fi
  [ ${#pids[@]} -eq 0 ] && return 0
  kill "${pids[@]}" 2>/dev/null || true
  # sge_qmaster takes several seconds to exit.
  for _ in $(seq 1 300); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return 0
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}

# Writes a configuration file for `qconf -A*`/`-M*` from key/value lines.
conf_file() { # conf_file PATH  (lines from stdin)
  cat >"$1"
}

start() {
  if status >/dev/null; then
    echo "gridengine-dev: already running in $dir" >&2
    return 0
  fi
  [ -x /usr/sbin/sge_qmaster ] || {
    echo "gridengine-dev: Grid Engine is not installed (apt-get install gridengine-master gridengine-exec gridengine-client)" >&2
    exit 1
  }
  [ -d /var/spool/gridengine/spooldb ] || {
    echo "gridengine-dev: the package's spool /var/spool/gridengine/spooldb is missing (debconf gridengineconfig false?)" >&2
    exit 1
  }
  echo "$port" >"$dir/port"
  mkdir -p "$common" "$dir/qmaster/job_scripts" "$dir/execd" "$dir/conf"
  for d in bin lib util utilbin; do ln -sfn "$installed/$d" "$SGE_ROOT/$d"; done
  if [ ! -e "$dir/spool/sge" ]; then
    rm -rf "$dir/spool"
    cp -a /var/spool/gridengine/spooldb "$dir/spool"
  fi
  chown -R root:root "$dir/spool" "$dir/qmaster" "$dir/execd"
  cat >"$common/bootstrap" <<CONF
admin_user              none
default_domain          none
ignore_fqdn             true
spooling_method         berkeleydb
spooling_lib            libspoolb
spooling_params         $dir/spool
binary_path             /usr/sbin
qmaster_spool_dir       $dir/qmaster
security_mode           none
listener_threads        2
worker_threads          2
scheduler_threads       1
CONF
  echo "$host" >"$common/act_qmaster"
  echo "$host $(hostname)" >"$common/host_aliases"
  (cd "$dir/qmaster" && /usr/sbin/sge_qmaster) >"$dir/qmaster.log" 2>&1
  wait_for 30 "sge_qmaster answering" qconf -sh

  # Jobs of root's and of any account (min_uid 0), loads reported every 5 s, the execd
  # spool in DIR; the scheduler every second.
  qconf -sconf global >"$dir/conf/global"
  sed -i -e 's#^min_uid .*#min_uid 0#' -e 's#^min_gid .*#min_gid 0#' \
    -e 's#^load_report_time .*#load_report_time 00:00:05#' \
    -e "s#^execd_spool_dir .*#execd_spool_dir $dir/execd#" \
    -e 's#^mailer .*#mailer /bin/true#' -e 's#^execd_params .*#execd_params ENABLE_ADDGRP_KILL=TRUE#' "$dir/conf/global"
  qconf -Mconf "$dir/conf/global" >/dev/null 2>&1
  qconf -ssconf >"$dir/conf/sched"
  sed -i -e 's#^schedule_interval .*#schedule_interval 0:0:1#' -e 's#^flush_submit_sec .*#flush_submit_sec 1#' \
    -e 's#^flush_finish_sec .*#flush_finish_sec 1#' "$dir/conf/sched"
  qconf -Msconf "$dir/conf/sched" >/dev/null 2>&1
  if ! qconf -se "$host" >/dev/null 2>&1; then
    conf_file "$dir/conf/exechost" <<CONF
hostname $host
load_scaling NONE
complex_values NONE
user_lists NONE
xuser_lists NONE
projects NONE
xprojects NONE
usage_scaling NONE
report_variables NONE
CONF
    qconf -Ae "$dir/conf/exechost" >/dev/null 2>&1
  fi
  qconf -as "$host" >/dev/null 2>&1 || true
  for q in all.q:4:01:00:00 long:2:INFINITY; do
    local name=${q%%:*} rest=${q#*:}
    local slots=${rest%%:*} hrt=${rest#*:}
    qconf -sq "$name" >/dev/null 2>&1 && continue
    qconf -sq >"$dir/conf/queue" 2>/dev/null || true
    sed -i -e "s#^qname .*#qname $name#" -e "s#^hostlist .*#hostlist $host#" -e "s#^slots .*#slots $slots#" \
      -e 's#^load_thresholds .*#load_thresholds NONE#' -e 's#^shell .*#shell /bin/sh#' \
      -e 's#^pe_list .*#pe_list NONE#' -e "s#^h_rt .*#h_rt $hrt#" -e 's#^terminate_method .*#terminate_method SIGTERM#' "$dir/conf/queue"
    qconf -Aq "$dir/conf/queue" >/dev/null 2>&1
  done
  (cd "$dir/execd" && SGE_EXECD_PIDFILE=$dir/execd.pid /usr/sbin/sge_execd) >"$dir/execd.log" 2>&1
  # The queue takes jobs once the execution daemon reports (no `u` state).
  wait_for 60 "sge_execd reporting" sh -c "qstat -f -q all.q | grep -q 'all.q@' && ! qstat -f -q all.q | grep 'all.q@' | awk '{print \$6}' | grep -q u"
  echo "export SGE_ROOT=$SGE_ROOT SGE_CELL=$SGE_CELL SGE_QMASTER_PORT=$SGE_QMASTER_PORT SGE_EXECD_PORT=$SGE_EXECD_PORT"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 start|stop|status DIR" >&2
    exit 2
    ;;
esac
