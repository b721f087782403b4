#!/usr/bin/env bash
# A shard store's rows a second at FP32, bf16 and fp16, against FP32 in the same run: for each dim,
# `row_precision_bench` (lookups and pushes of 4,096 rows over 1,000,000 rows, row-wise Adagrad)
# for each precision in turn, ROUNDS times, each a process of its own pinned to one core; medians
# and each precision's ratio to FP32's median. This machine is shared and noisy: the rounds
# alternate so that a slow spell costs every precision alike.
#
#   bench/micro/row_precision_store.sh [--rounds R] [--dims "16 64"] [--core C] [--batches B]
#   (SS_BUILD_DIR: the build to run, build/ by default)
# Prints one line per run, a summary, and one JSON line.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"

rounds=5 dims="16 64" core=1 batches=800
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --dims) dims=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    -h | --help) bench_usage "$0"; exit 0 ;;
    *) echo "row_precision_store: unknown argument $1" >&2; exit 2 ;;
  esac
done

bin=${SS_BUILD_DIR:-$bench_root/build}/bench/row_precision_bench
[[ -x $bin ]] || { echo "row_precision_store: no $bin (build the project first)" >&2; exit 1; }

precisions="fp32 bf16 fp16"
declare -A runs
for ((r = 1; r <= rounds; ++r)); do
  for d in $dims; do
    for p in $precisions; do
      rate=$(taskset -c "$core" "$bin" --precision "$p" --dim "$d" --rows 1000000 --batches "$batches" |
        grep -o '"rows_per_second":[0-9.]*' | cut -d: -f2)
      runs[$d.$p]+=" $rate"
      printf 'round %d  dim %-3s %-5s %10.0f rows/s\n' "$r" "$d" "$p" "$rate"
    done
  done
done

echo "row_precision_store: medians of $rounds rounds, core $core"
json=""
for d in $dims; do
  base=$(bench_median <<<"${runs[$d.fp32]}")
  for p in $precisions; do
    med=$(bench_median <<<"${runs[$d.$p]}")
    ratio=$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.3f", a / b }')
    printf '  dim %-3s %-5s %10.0f rows/s  %sx fp32  (runs:%s)\n' "$d" "$p" "$med" "$ratio" "${runs[$d.$p]}"
    json+="${json:+,}{\"dim\":$d,\"precision\":\"$p\",\"rows_per_second\":$med,\"vs_fp32\":$ratio}"
  done
done
echo "{\"bench\":\"row_precision_store\",\"rounds\":$rounds,\"batches\":$batches,\"results\":[$json]}"
