#!/usr/bin/env bash
# Publishing's cost (docs/online.md): the same job with and without --publish-dir at a 1 s
# interval, runs interleaved (A B A B ...: this machine is shared and noisy), examples/s of each;
# and what the deltas hold: rows and bytes per delta against the rows of the table, which shows a
# delta's size follows the rows changed, not the table.
#
# usage: bench/online/publish_cost.sh [--rows N] [--pairs K] [--interval S] [-- LOCAL FLAGS...]
#   --rows N      training rows (default 400,000; generated once into data/bench-N)
#   --pairs K     runs of each (default 3)
#   --interval S  --publish-interval (default 1)
#   LOCAL FLAGS   more flags for both jobs (default: the local defaults)
# Prints a table and a JSON line; writes bench/online/results/publish_cost.{md,json}.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"
rows=400000 pairs=3 interval=1
while (($#)); do
  case $1 in
    --rows) rows=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --help | -h) bench_usage "$0"; exit 0 ;;
    --) shift; break ;;
    *) echo "unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
bin=$(bench_built_bin)
data=$(bench_data "$bin" "$rows")
out_dir="$bench_root/bench/online/results"
work=$(mktemp -d /tmp/ss-publish-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out_dir"

plain=() published=()
for k in $(seq "$pairs"); do
  for mode in plain published; do
    extra=()
    [[ $mode == published ]] && extra=(--publish-dir "$work/pub-$k" --publish-interval "$interval" --publish-retain 100000)
    "$bin" local --train "$data/train.tsv" --progress-interval 0 --log-level warn "${extra[@]}" "$@" \
      >"$work/$mode-$k.out" 2>"$work/$mode-$k.err" || { tail -3 "$work/$mode-$k.err"; exit 1; }
    tail -1 "$work/$mode-$k.out" >"$work/$mode-$k.json"
    eps=$(bench_field "$work/$mode-$k.json" examples_per_sec)
    echo "  run $k $mode: $eps examples/s" >&2
    if [[ $mode == plain ]]; then plain+=("$eps"); else published+=("$eps"); fi
  done
done
plain_median=$(echo "${plain[@]}" | bench_median)
published_median=$(echo "${published[@]}" | bench_median)
ratio=$(awk -v a="$published_median" -v b="$plain_median" 'BEGIN { printf "%.4f", a / b }')

# The deltas of the last published run: rows and bytes each, and the rows of its newest base.
pub="$work/pub-$pairs"
delta_lines=$(for m in "$pub"/*.delta.manifest; do
  awk '$1 == "sequence" || $1 == "rows" || $1 == "data_bytes" || $1 == "tombstones" || $1 == "dense_params" { v[$1] = $3 }
       END { printf "%s %s %s %s %s\n", v["sequence"], v["rows"], v["tombstones"], v["data_bytes"], 4 * v["dense_params"] }' "$m"
done | sort -n)
base_rows=$(awk '$1 == "rows" { print $3 }' "$(ls "$pub"/*.base.manifest | sort | tail -1)")
deltas=$(wc -l <<<"$delta_lines")
# Bytes per row leave out each delta's dense part (every dense parameter, the same in each).
read -r mean_rows mean_bytes per_row dense_bytes < <(awk '{ r += $2; b += $4; d = $5 } END { printf "%.0f %.0f %.1f %d\n", r / NR, b / NR, (b - NR * d) / r, d }' <<<"$delta_lines")

{
  echo "# Publishing's cost: $rows rows, --publish-interval $interval s, $pairs interleaved pairs ($(nproc) CPUs)"
  echo
  echo "| job | examples/s (median) | runs |"
  echo "|---|---|---|"
  echo "| without --publish-dir | $plain_median | ${plain[*]} |"
  echo "| with --publish-dir | $published_median | ${published[*]} |"
  echo
  echo "Publishing keeps $(awk -v r="$ratio" 'BEGIN { printf "%.1f%%", r * 100 }') of the examples/s."
  echo
  echo "Deltas of the last published run: $deltas, on average $mean_rows rows and $mean_bytes bytes: the"
  echo "dense part ($dense_bytes bytes) and $per_row bytes per changed row; its newest base holds $base_rows rows."
} >"$out_dir/publish_cost.md"
cat "$out_dir/publish_cost.md"
json="{\"benchmark\":\"publish_cost\",\"rows\":$rows,\"interval_s\":$interval,\"pairs\":$pairs,\"plain_eps\":$plain_median,\"published_eps\":$published_median,\"ratio\":$ratio,\"deltas\":$deltas,\"delta_rows_mean\":$mean_rows,\"delta_bytes_mean\":$mean_bytes,\"bytes_per_row\":$per_row,\"dense_bytes\":$dense_bytes,\"base_rows\":${base_rows:-0},\"cpus\":$(nproc)}"
echo "$json" | tee "$out_dir/publish_cost.json"
