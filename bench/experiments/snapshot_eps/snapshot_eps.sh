#!/usr/bin/env bash
# Training throughput while cluster snapshots are taken, against the same cluster without them.
# Three configurations of `shadowsync local --processes` on the same generated data, run in turn
# (A B C A B C ...) so that the machine's noise hits them alike; reports medians and ratios:
#   memory      rows in memory only (no --state-dir): the cluster of issue 3
#   durable     shards persist changed rows to RocksDB every --flush-interval, no snapshots
#   snapshots   durable, plus a cluster snapshot every INTERVAL seconds
# usage: bench/experiments/snapshot_eps/snapshot_eps.sh [ROWS] [REPEAT] [INTERVAL]      (default 1000000 3 2)
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/bench.sh"
bin=$(bench_bin)
rows=${1:-1000000}
repeat=${2:-3}
interval=${3:-2}
work=$(mktemp -d /tmp/ss-snapeps.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin" gen-data --rows "$rows" --test-rows 10000 --out "$work/data" >/dev/null 2>&1
common=(--processes --trainers 2 --shards 2 --readers 1 --train "$work/data/train.tsv" --test "$work/data/test.tsv"
  --log-level warn)

run() {  # run NAME [flags...] -> prints examples/s and snapshot count
  local name=$1
  shift
  rm -rf "$work/run"
  "$bin" local "${common[@]}" --run-dir "$work/run" "$@" >"$work/$name.out" 2>"$work/$name.err"
  local json
  json=$(tail -1 "$work/$name.out")
  echo "$(echo "$json" | grep -o '"examples_per_sec":[0-9.]*' | cut -d: -f2) $(echo "$json" | grep -o '"snapshots":[0-9]*' | cut -d: -f2)"
}

declare -A eps
snaps=()
for ((i = 1; i <= repeat; ++i)); do
  read -r m _ < <(run memory)
  read -r d _ < <(run durable --state-dir "$work/run/state" --snapshot-interval 0)
  read -r s n < <(run snapshots --state-dir "$work/run/state" --snapshot-interval "$interval")
  eps[memory]+="$m "
  eps[durable]+="$d "
  eps[snapshots]+="$s "
  snaps+=("$n")
  printf 'round %d: memory %.0f, durable %.0f, snapshots %.0f examples/s (%s snapshots)\n' "$i" "$m" "$d" "$s" "$n" >&2
done

m=$(echo "${eps[memory]}" | bench_median)
d=$(echo "${eps[durable]}" | bench_median)
s=$(echo "${eps[snapshots]}" | bench_median)
echo "shadowsync snapshot throughput: $rows rows, 2 trainers, 2 shards, 1 reader, --processes, medians of $repeat"
printf '  memory only        %8.0f examples/s\n' "$m"
printf '  durable (RocksDB)  %8.0f examples/s  %5.1f%% of memory only\n' "$d" "$(awk -v a="$d" -v b="$m" 'BEGIN { print 100 * a / b }')"
printf '  + snapshot every %ss %8.0f examples/s  %5.1f%% of durable without snapshots (%s snapshots per run)\n' \
  "$interval" "$s" "$(awk -v a="$s" -v b="$d" 'BEGIN { print 100 * a / b }')" "${snaps[*]}"
printf '{"bench":"snapshot_eps","rows":%s,"repeat":%s,"interval":%s,"memory_eps":%.0f,"durable_eps":%.0f,"snapshot_eps":%.0f,"durable_vs_memory":%.4f,"snapshot_vs_durable":%.4f}\n' \
  "$rows" "$repeat" "$interval" "$m" "$d" "$s" "$(awk -v a="$d" -v b="$m" 'BEGIN { print a / b }')" \
  "$(awk -v a="$s" -v b="$d" 'BEGIN { print a / b }')"
