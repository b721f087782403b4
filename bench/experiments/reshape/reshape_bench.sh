#!/usr/bin/env bash
# How long a job takes to move its rows when it resumes on another shard count
# (docs/durability.md, "Resuming on another shard count"). A job on FROM shards trains to its end
# (its last snapshot holds every row); with its stored result removed, the same state resumes on
# each TO count in turn (a copy each): the rows move before the job (which has nothing left to
# train) scores again. Reports, per TO, the rows moved, the seconds of the moving stage and of the
# whole reshape (from the first registration to training), and seconds per million rows moved;
# then one JSON line.
# usage: bench/experiments/reshape/reshape_bench.sh [ROWS] [FROM] [TO...]      (default 2000000 2 3 4 1)
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/bench.sh"
bin=$(bench_bin)
rows=${1:-2000000}
from=${2:-2}
shift $(($# >= 2 ? 2 : $#))
targets=("$@")
((${#targets[@]} > 0)) || targets=(3 4 1)
work=$(mktemp -d /tmp/ss-reshape-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin" gen-data --rows "$rows" --test-rows 10000 --out "$work/data" >/dev/null 2>&1
common=(--processes --trainers 2 --readers 1 --train "$work/data/train.tsv" --test "$work/data/test.tsv"
  --progress-interval 0 --snapshot-interval 0 --log-level info)
"$bin" local "${common[@]}" --shards "$from" --state-dir "$work/base" >"$work/base.out" 2>"$work/base.err"
rm -f "$work/base/snapshots/RESULT.json"
table_rows=$(grep -h "^shard\.[0-9]* = " "$work"/base/snapshots/snapshot-*/MANIFEST | tail -"$from" | awk '{s += $4} END {print s}')
echo "reshape: $rows generated rows, $table_rows embedding rows on $from shards (this machine: $(nproc) cores)"
json="{\"rows\":$rows,\"embedding_rows\":$table_rows,\"from\":$from,\"runs\":["
first=1
for to in "${targets[@]}"; do
  rm -rf "$work/state"
  cp -a "$work/base" "$work/state"
  "$bin" local "${common[@]}" --shards "$to" --state-dir "$work/state" >"$work/$to.out" 2>"$work/$to.err" ||
    { echo "resuming on $to shards failed: $(tail -3 "$work/$to.err")"; exit 1; }
  moving=$(grep -o "[0-9]* rows ([0-9.]* MB) moved in [0-9.]*s" "$work/$to.err" | tail -1)
  whole=$(grep -o "resumed on $from -> $to shards in [0-9.]*s" "$work/$to.err" | tail -1 | grep -o "[0-9.]*s$" | tr -d s)
  moved=$(echo "$moving" | awk '{print $1}')
  mb=$(echo "$moving" | grep -o "([0-9.]* MB)" | tr -d '(MB )')
  seconds=$(echo "$moving" | grep -o "[0-9.]*s$" | tr -d s)
  per_million=$(awk -v s="$seconds" -v n="$moved" 'BEGIN { printf "%.2f", (n > 0 ? s * 1e6 / n : 0) }')
  printf "  %d -> %d shards: %d rows (%s MB) moved in %s s (%s s per million rows); the whole reshape %s s\n" \
    "$from" "$to" "$moved" "$mb" "$seconds" "$per_million" "$whole"
  ((first)) || json+=","
  first=0
  json+="{\"to\":$to,\"rows_moved\":$moved,\"mb_moved\":$mb,\"move_seconds\":$seconds,\"seconds_per_million\":$per_million,\"reshape_seconds\":$whole}"
done
echo "$json]}"
