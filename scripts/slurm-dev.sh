#!/usr/bin/env bash
# A private single-node Slurm (munge + slurmctld + slurmd on loopback) for tests and trials.
#
#   scripts/slurm-dev.sh start DIR    write DIR/slurm.conf, start the daemons, wait until the node is idle
#   scripts/slurm-dev.sh stop DIR     stop the daemons by their pid files
#   scripts/slurm-dev.sh status DIR   say which daemons run (exit 1 when not all of them)
#
# Everything lives in DIR (configuration, state, spool, logs, pid files, its own munge key
# and socket); nothing is written elsewhere and nothing starts by itself. Needs root and the
# Debian packages `slurm-wlm munge` (`apt-get install -y --no-install-recommends slurm-wlm munge`).
# Two partitions: `debug` (the default, MaxTime=60 minutes) and `long` (no limit).
# Ports: SLURM_DEV_PORT (slurmctld, default 6817) and SLURM_DEV_PORT+1 (slurmd).
# `start` prints `export SLURM_CONF=DIR/slurm.conf`; every Slurm command needs it.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|status DIR" >&2
  exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf
export SLURM_CONF=$conf

# The daemons in the order they start; each writes DIR/<name>.pid.
daemons=(munged slurmctld slurmd)

alive() { # name: its pid file names a live process
  local pid
  [ -s "$dir/$1.pid" ] || return 1
  read -r pid < "$dir/$1.pid" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

need() {
  for p in munged slurmctld slurmd sinfo; do
    command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || {
      echo "$0: $p is not installed (apt-get install -y --no-install-recommends slurm-wlm munge)" >&2
      exit 3
    }
  done
  [ "$(id -u)" = 0 ] || { echo "$0: must run as root (the daemons switch users)" >&2; exit 3; }
}

write_conf() {
  local host cpus mem port
  host=$(hostname)
  # More CPUs than the host has (at least 8): test jobs mostly wait, and Slurm starts at most one job per CPU.
  cpus=${SLURM_DEV_CPUS:-$(( $(nproc) > 8 ? $(nproc) : 8 ))}
  port=${SLURM_DEV_PORT:-6817}
  # Leave the host some memory; every job asks for DefMemPerCPU unless it says otherwise.
  mem=$(awk '/^MemTotal:/ { m = int($2 / 1024 / 2); print (m > 256 ? m : 256) }' /proc/meminfo)
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  # Other accounts submit too (runuser -u ACCOUNT -- sbatch): they need the socket and the configuration.
  chmod 755 "$dir" "$dir/munge"
  cat > "$conf.tmp" <<CONF
# Written by scripts/slurm-dev.sh: a single-node Slurm on loopback.
ClusterName=ceres
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000
MpiDefault=none
ReturnToService=2
# The node may claim more CPUs than the host has (see cpus above).
SlurmdParameters=config_overrides
MinJobAge=300
MaxJobCount=20000
KillWait=5
EnforcePartLimits=ALL
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=60 State=UP
PartitionName=long Nodes=$host MaxTime=INFINITE State=UP
CONF
  mv -f "$conf.tmp" "$conf"
  # A key of its own: no dependence on the system munge daemon or its key.
  if [ ! -s "$dir/munge/munge.key" ]; then
    (umask 077 && dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none)
  fi
}

start() {
  need
  if alive munged && alive slurmctld && alive slurmd; then
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  stop_all quiet
  write_conf
  /usr/sbin/munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"
  /usr/sbin/slurmctld
  /usr/sbin/slurmd
  # 30 s of wall time: with no controller each sinfo itself waits for its message timeout.
  local end=$((SECONDS + 30)) name
  while :; do
    for name in "${daemons[@]}"; do
      # A daemon that wrote its pid file and exited (its port taken, a bad configuration)
      # never comes back by itself.
      if [ -s "$dir/$name.pid" ] && ! alive "$name"; then give_up "$name exited"; fi
    done
    [ "$(timeout 3 sinfo -h -o %t 2>/dev/null | head -1)" = idle ] && break
    [ $SECONDS -lt $end ] || give_up "the node did not become idle within 30 s"
    sleep 0.1
  done
  echo "export SLURM_CONF=$conf"
}

give_up() { # why
  echo "$0: $1; logs in $dir" >&2
  tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  stop_all quiet now
  exit 1
}

stop_all() { # [quiet] [now]: now kills at once (a start that failed has nothing to save)
  local name pid pids=() sig=TERM
  [ "${2:-}" = now ] && sig=KILL
  for name in slurmd slurmctld munged; do
    if alive "$name"; then
      read -r pid < "$dir/$name.pid"
      kill -s "$sig" "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  # Wait (at most 5 s in all) for them to go, then kill what is left.
  local i=0
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null || true
  done
  for name in slurmd slurmctld munged; do rm -f "$dir/$name.pid"; done
  # A job step's slurmstepd whose slurmd is gone waits for it for ever (SIGTERM does not end
  # it): those of this cluster (working in its directory) go with it.
  local cwd
  for pid in $(pgrep -x slurmstepd || true); do
    cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
    case "$cwd" in "$dir" | "$dir"/*) kill -9 "$pid" 2>/dev/null || true ;; esac
  done
  [ "${1:-}" = quiet ] || echo "stopped"
}

status() {
  local ok=0 name
  for name in "${daemons[@]}"; do
    if alive "$name"; then echo "$name: running (pid $(cat "$dir/$name.pid"))"; else echo "$name: stopped"; ok=1; fi
  done
  return $ok
}

case $cmd in
  start) start ;;
  stop) stop_all ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status DIR" >&2; exit 2 ;;
esac
