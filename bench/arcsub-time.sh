#!/usr/bin/env bash
# Wall time of the real ARC client's `arcsub` (one trivial job per run, a new delegation each
# time, as the client does) against an ARC REST endpoint: what a user waits for per submission.
#
#   bash bench/arcsub-time.sh URL [RUNS]     URL = service URL without /rest, e.g. https://host:8443/arex
#
# Needs nordugrid-arc-client and nordugrid-arc-plugins-arcrest, X509_USER_PROXY (a valid proxy)
# and X509_CERT_DIR (hash-linked CA directory trusting the server). Prints each run's seconds
# and the median. The jobs are left on the endpoint (they end at once; clean them with arcclean).
set -euo pipefail
url="${1:?usage: arcsub-time.sh URL [RUNS]}"
runs="${2:-9}"
: "${X509_USER_PROXY:?set X509_USER_PROXY to a valid proxy}"
: "${X509_CERT_DIR:?set X509_CERT_DIR to the CA directory}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/.arc"
printf '[common]\nproxypath = %s\ncacertificatesdirectory = %s\ntimeout = 60\n' "$X509_USER_PROXY" "$X509_CERT_DIR" > "$work/.arc/client.conf"
times=()
for ((i = 1; i <= runs; i++)); do
  t0=$(date +%s%N)
  if ! HOME="$work" arcsub -z "$work/.arc/client.conf" -C "$url" -T arcrest -Q NONE -j "$work/jobs.dat" -e '&(executable="/bin/true")(jobname="arcsub-time")' > "$work/out" 2>&1; then
    echo "arcsub failed:" >&2; cat "$work/out" >&2; exit 1
  fi
  t1=$(date +%s%N)
  times+=("$(( (t1 - t0) / 1000000 ))")
  sleep 0.5 # a user between two submissions; also lets a key pool refill
done
printf 'run %s ms\n' "${times[@]}"
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "median ${sorted[$(( runs / 2 ))]} ms over $runs runs"
