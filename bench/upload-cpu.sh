#!/bin/bash
# Uploads a 1 GiB sparse file N times into one parked job's session of a Ceres started
# from CHECKOUT (its bin/ceres, with --trace-gc), over one file name (each upload replaces
# the last), and prints per upload: MiB/s, the service's CPU time (ticks of 10 ms, from
# /proc/<pid>/stat) and its full (Mark-Compact) collections. `sync` after each upload.
# Run two checkouts alternately to compare them (docs/performance.md, "Uploads").
#
#   bash bench/upload-cpu.sh CHECKOUT [N]
set -eu
co=$(readlink -f "$1"); n=${2:-4}
root=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$root"' EXIT
echo '{"jobs":{"maxActiveJobsPerUser":0},"engine":{"maxRunningJobsPerUser":0}}' > "$root/cfg.json"
CERES_NODE_FLAGS=--trace-gc "$co/bin/ceres" serve --listen 127.0.0.1:0 --state-dir "$root/state" \
  --config "$root/cfg.json" > "$root/log" 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q "PKI folder" "$root/log" && break; sleep 0.2; done
url=$(sed -n 's/.*service URL \([^ ]*\).*/\1/p' "$root/log")
pki=$(sed -n 's/.*PKI folder //p' "$root/log")
tls=(--cacert "$pki/ca.pem" --cert "$pki/userproxy.pem" --key "$pki/userproxy.pem")
id=$(curl -sS "${tls[@]}" -X POST -H 'Content-Type: application/rsl' -H 'Accept: application/json' \
  --data '&(executable="/bin/true")(inputfiles=("wait.txt" ""))' "$url/rest/1.0/jobs?action=new" |
  sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
truncate -s 1G "$root/src.bin"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
for i in $(seq "$n"); do
  c0=$(ticks); l0=$(wc -l < "$root/log")
  rate=$(curl -sS "${tls[@]}" -H 'Expect:' -T "$root/src.bin" -o /dev/null -w '%{speed_upload}' \
    "$url/rest/1.0/jobs/$id/session/big.bin")
  c1=$(ticks)
  mc=$(tail -n +"$l0" "$root/log" | grep -c Mark-Compact || true)
  echo "upload $i: $((${rate%.*} / 1048576)) MiB/s, service CPU $((c1 - c0)) ticks, $mc full collections"
  sync
done
