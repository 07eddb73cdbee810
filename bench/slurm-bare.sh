#!/usr/bin/env bash
# The baseline for Ceres on Slurm: what a bare sbatch loop gets from the same Slurm.
#   bench/slurm-bare.sh [LATENCY_JOBS] [DRAIN_JOBS]      (SLURM_CONF must name the cluster)
# latency: one `sbatch --wrap /bin/true` at a time, squeue polled every 50 ms until the job
# has left the queue states (PENDING, RUNNING, COMPLETING); p50 and max.
# drain: DRAIN_JOBS submitted in a loop, then polled until none is left in those states.
set -euo pipefail
lat=${1:-20}
drain=${2:-200}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
now() { date +%s.%N; }
busy() { squeue -h -t PD,R,CG,CF -o %i "$@" 2>/dev/null; }

times=()
for _ in $(seq "$lat"); do
  t0=$(now)
  id=$(sbatch --parsable -o /dev/null -D "$out" --wrap /bin/true)
  while [ -n "$(busy -j "$id")" ]; do sleep 0.05; done
  times+=("$(echo "$(now) - $t0" | bc)")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
p50=$(echo "$sorted" | awk -v n="$lat" 'NR == int((n + 1) / 2) { print }')
max=$(echo "$sorted" | tail -1)
printf 'latency: %d jobs, p50 submit -> done %.2f s, max %.2f s\n' "$lat" "$p50" "$max"

t0=$(now)
for _ in $(seq "$drain"); do sbatch --parsable -o /dev/null -D "$out" --wrap /bin/true >/dev/null; done
t1=$(now)
while [ -n "$(busy)" ]; do sleep 0.1; done
t2=$(now)
printf 'drain: %d jobs, submitted in %.2f s, all done after %.2f s (%.2f jobs/s)\n' "$drain" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)" "$(echo "$drain / ($t2 - $t0)" | bc -l)"
