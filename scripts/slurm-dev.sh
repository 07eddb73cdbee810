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
#
# SLURM_DEV_ACCOUNTING=1 (at start) adds job accounting as a site with slurmdbd has it: a
# private MariaDB (its data in DIR/mysql, on 127.0.0.1:SLURM_DEV_PORT+3) and slurmdbd
# (SLURM_DEV_PORT+2), so that `sacct` answers. Needs the Debian packages `slurmdbd
# mariadb-server` as well. Without it the cluster has no accounting storage, as a site
# without slurmdbd (sacct then fails).
# SLURM_DEV_MAX_JOB_COUNT (default 20000) is slurmctld's MaxJobCount, the jobs it holds at once,
# ended ones included; SLURM_DEV_MIN_JOB_AGE (default 300 s) how long an ended job stays
# listed (and counted). A benchmark of many jobs raises both.
# `start` prints `export SLURM_CONF=DIR/slurm.conf`; every Slurm command needs it.
#
# Switches for routing trials and benchmarks (at start; unset: as above):
#   SLURM_DEV_EXTRA_PARTITIONS="short mc"  more partitions on the node (no time limit)
#   SLURM_DEV_ACCOUNTS="vo_a vo_b"        batch accounts, made in slurmdbd with an association
#                                         of every SLURM_DEV_ACCOUNT_USERS user (default root)
#   SLURM_DEV_QOS="low high"              QoS made in slurmdbd and allowed to those associations
#   SLURM_DEV_MAX_JOB_COUNT=N             MaxJobCount (default 20000)
#   SLURM_DEV_CPUS=N                      the node's CPUs (config_overrides: more than the host has)
# The accounts and QoS need SLURM_DEV_ACCOUNTING=1.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|status DIR" >&2
  exit 2
fi
max_job_count=${SLURM_DEV_MAX_JOB_COUNT:-20000}
min_job_age=${SLURM_DEV_MIN_JOB_AGE:-300}
for v in "SLURM_DEV_MAX_JOB_COUNT=$max_job_count" "SLURM_DEV_MIN_JOB_AGE=$min_job_age"; do
  if ! [[ ${v#*=} =~ ^[1-9][0-9]{0,8}$ ]]; then
    echo "$0: ${v%%=*} must be a whole number above 0, not '${v#*=}'" >&2
    exit 2
  fi
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf
export SLURM_CONF=$conf

# The daemons in the order they start; each writes DIR/<name>.pid. With accounting, the
# database and slurmdbd start after munged and before slurmctld (which registers with slurmdbd).
accounting=${SLURM_DEV_ACCOUNTING:-0}
if [ "$cmd" != start ] && [ -s "$dir/mariadbd.pid" ]; then accounting=1; fi
if [ "$accounting" = 1 ]; then
  daemons=(munged mariadbd slurmdbd slurmctld slurmd)
else
  daemons=(munged slurmctld slurmd)
fi

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
  if [ "$accounting" = 1 ]; then
    for p in slurmdbd mariadbd mariadb-install-db; do
      command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || {
        echo "$0: $p is not installed (apt-get install -y --no-install-recommends slurmdbd mariadb-server)" >&2
        exit 3
      }
    done
  fi
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
MinJobAge=$min_job_age
MaxJobCount=$max_job_count
KillWait=5
EnforcePartLimits=ALL
JobAcctGatherType=jobacct_gather/linux
# Each job's processes sampled every second: for a process the batch step did not reap (its
# wrapper killed), the CPU time and memory accounting records are those of its last sample.
JobAcctGatherFrequency=1
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
$(accounting_conf "$port")
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=60 State=UP
PartitionName=long Nodes=$host MaxTime=INFINITE State=UP
$(for p in ${SLURM_DEV_EXTRA_PARTITIONS:-}; do echo "PartitionName=$p Nodes=$host MaxTime=INFINITE State=UP"; done)
CONF
  mv -f "$conf.tmp" "$conf"
  # A key of its own: no dependence on the system munge daemon or its key.
  if [ ! -s "$dir/munge/munge.key" ]; then
    (umask 077 && dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none)
  fi
}

accounting_conf() { # port: the accounting lines of slurm.conf
  if [ "$accounting" = 1 ]; then
    cat <<CONF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$(($1 + 2))
# The accounting connections authenticate with munge too: this cluster's own socket.
AccountingStoragePass=$dir/munge/munge.socket
CONF
  else
    echo "AccountingStorageType=accounting_storage/none"
  fi
}

# MariaDB on loopback with its data in DIR/mysql, the accounting database and its user,
# then slurmdbd. The database is made once per DIR (a few seconds); later starts reuse it.
start_accounting() {
  local port=${SLURM_DEV_PORT:-6817} db=$dir/mysql pass
  local sock=$dir/mysql/mysqld.sock
  local client=(mariadb --no-defaults --socket="$sock" -u root)
  if [ ! -d "$db/mysql" ]; then
    mariadb-install-db --no-defaults --datadir="$db" --user=root --skip-test-db \
      --auth-root-authentication-method=socket >"$dir/mariadb-install.log" 2>&1 ||
      give_up "mariadb-install-db failed (DIR/mariadb-install.log)"
  fi
  # Not a daemon by itself: its own session, its pid in its pid file.
  setsid /usr/sbin/mariadbd --no-defaults --datadir="$db" --socket="$sock" --user=root \
    --bind-address=127.0.0.1 --port=$((port + 3)) --pid-file="$dir/mariadbd.pid" \
    --log-error="$dir/mariadbd.log" --skip-log-bin --innodb-buffer-pool-size=16M \
    --innodb-log-file-size=8M </dev/null >/dev/null 2>&1 &
  # setsid execs in place here (a background job is no group leader): $! is mariadbd.
  local db_pid=$! end=$((SECONDS + 30))
  until mariadb-admin --no-defaults --socket="$sock" -u root ping >/dev/null 2>&1; do
    # Its port taken, a bad data directory: it exits at once, and says why in its log.
    kill -0 "$db_pid" 2>/dev/null || give_up "mariadbd exited"
    [ $SECONDS -lt $end ] || give_up "MariaDB did not answer within 30 s"
    sleep 0.1
  done
  # A password of this DIR, kept in slurmdbd.conf alone (0600, read by the SlurmUser).
  if [ -s "$dir/slurmdbd.conf" ]; then
    pass=$(sed -n 's/^StoragePass=//p' "$dir/slurmdbd.conf")
  else
    pass=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  fi
  "${client[@]}" -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
    CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || give_up "cannot create the accounting database"
  (umask 077 && cat >"$dir/slurmdbd.conf" <<CONF
# Written by scripts/slurm-dev.sh: slurmdbd of the single-node Slurm, storing in MariaDB on loopback.
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
DbdHost=$(hostname)
DbdAddr=127.0.0.1
DbdPort=$((port + 2))
SlurmUser=root
PidFile=$dir/slurmdbd.pid
LogFile=$dir/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((port + 3))
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
CONF
  )
  /usr/sbin/slurmdbd
  end=$((SECONDS + 30))
  until timeout 3 sacctmgr -n -P show cluster format=cluster >/dev/null 2>&1; do
    if [ -s "$dir/slurmdbd.pid" ] && ! alive slurmdbd; then give_up "slurmdbd exited"; fi
    [ $SECONDS -lt $end ] || give_up "slurmdbd did not answer within 30 s"
    sleep 0.2
  done
  # The cluster must be known before slurmctld registers (no error when it already is).
  timeout 10 sacctmgr -i add cluster ceres >/dev/null 2>&1 || true
  add_associations
}

# SLURM_DEV_QOS, SLURM_DEV_ACCOUNTS and the associations of SLURM_DEV_ACCOUNT_USERS with them.
add_associations() {
  local q a u qos=${SLURM_DEV_QOS:-} accounts=${SLURM_DEV_ACCOUNTS:-}
  for q in $qos; do
    timeout 10 sacctmgr -i add qos "$q" >/dev/null 2>&1 || true
    timeout 10 sacctmgr -n -P show qos "$q" format=name | grep -qx "$q" || give_up "cannot add QoS $q"
  done
  for a in $accounts; do
    timeout 10 sacctmgr -i add account "$a" cluster=ceres >/dev/null 2>&1 || true
    for u in ${SLURM_DEV_ACCOUNT_USERS:-root}; do
      timeout 10 sacctmgr -i add user "$u" account="$a" cluster=ceres >/dev/null 2>&1 || true
      if [ -n "$qos" ]; then
        timeout 10 sacctmgr -i modify user "$u" where account="$a" set qos+="${qos// /,}" >/dev/null 2>&1 || true
      fi
    done
    timeout 10 sacctmgr -n -P show account "$a" format=account | grep -qx "$a" || give_up "cannot add account $a"
  done
}

start() {
  need
  local name all=1
  for name in "${daemons[@]}"; do alive "$name" || all=0; done
  if [ $all = 1 ]; then
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  stop_all quiet
  write_conf
  /usr/sbin/munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"
  if [ "$accounting" = 1 ]; then start_accounting; fi
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
  local logs=("$dir/slurmctld.log" "$dir/slurmd.log")
  [ "$accounting" = 1 ] && logs+=("$dir/mariadb-install.log" "$dir/slurmdbd.log" "$dir/mariadbd.log")
  tail -n 5 "${logs[@]}" >&2 2>/dev/null || true
  stop_all quiet now
  exit 1
}

stop_all() { # [quiet] [now]: now kills at once (a start that failed has nothing to save)
  local name pid pids=() sig=TERM
  [ "${2:-}" = now ] && sig=KILL
  # The database last: slurmctld and slurmdbd flush to it when they stop.
  local order=(slurmd slurmctld slurmdbd mariadbd munged)
  for name in "${order[@]}"; do
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
  for name in "${order[@]}"; do rm -f "$dir/$name.pid"; done
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
