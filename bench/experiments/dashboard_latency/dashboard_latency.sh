#!/usr/bin/env bash
# The dashboard's data endpoints on a real 64-member job: `shadowsync local` in one process with
# 55 trainers, 2 shards and 7 readers (simulated compute: 55 trainers on a laptop), its ops
# endpoint on loopback; after SECONDS_IN (default 30) of training, REPS (default 100) requests each
# of /api/status, /api/history (all of it, as a page opening) and /api/history?since= (as a page
# polling), timed by curl (time_total: connect to last byte). Prints median, p99 and max per
# endpoint, then one JSON line. The history here is as long as the job so far; build/bench/dashboard_bench
# (bench/micro/dashboard_bench.cpp) times the history at its bound.
#
#   bench/experiments/dashboard_latency/dashboard_latency.sh build/services/cli/shadowsync [SECONDS_IN] [REPS]
set -euo pipefail
bin=$(readlink -f "$1")
wait_s=${2:-30}
reps=${3:-100}
work=$(mktemp -d /tmp/ss-dashlat.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
"$bin" local --trainers 55 --shards 2 --readers 7 --simulate-step-ms 20 --simulate-steps 100000 \
  --ops-listen 127.0.0.1:0 --log-level info >job.out 2>job.err &
port=""
for _ in $(seq 1 400); do
  port=$(sed -n 's#.*: dashboard at http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' job.err)
  [[ -n "$port" ]] && break
  sleep 0.05
done
[[ -n "$port" ]] || { echo "no dashboard address" >&2; exit 1; }
sleep "$wait_s"
base="http://127.0.0.1:$port"
members=$(curl -s "$base/api/status" | python3 -c 'import json,sys; s=json.load(sys.stdin)["service"]; print(len(s["members"]), s["state"])')
echo "job: $members (members, state) after ${wait_s}s"
time_of() {  # time_of URL: REPS times in ms, sorted
  for _ in $(seq 1 "$reps"); do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done | awk '{printf "%.3f\n", $1 * 1000}' | sort -n
}
json="{\"bench\":\"dashboard_latency\",\"members\":${members% *},\"seconds_in\":$wait_s,\"reps\":$reps"
for key in status history history_since; do
  case $key in
    status) ep="api/status" ;;
    history) ep="api/history" ;;
    history_since) ep="api/history?since=$((wait_s - 2))" ;;
  esac
  bytes=$(curl -s "$base/$ep" | wc -c)
  mapfile -t ms < <(time_of "$base/$ep")
  n=${#ms[@]}
  med=${ms[$((n / 2))]} p99=${ms[$((n * 99 / 100))]} max=${ms[$((n - 1))]}
  printf '  /%-26s median %7s ms  p99 %7s ms  max %7s ms  (%s bytes)\n' "$ep" "$med" "$p99" "$max" "$bytes"
  json+=",\"${key}_median_ms\":$med,\"${key}_p99_ms\":$p99,\"${key}_max_ms\":$max,\"${key}_bytes\":$bytes"
done
echo "$json}"
