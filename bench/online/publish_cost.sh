#!/usr/bin/env bash
# Publishing's cost (docs/online.md): the same job with and without --publish-dir at a 1 s
# interval, in pairs whose order alternates (A B, B A, A B, ...: this machine is shared and noisy),
# examples/s and CPU time per example of each; and what the deltas hold: rows and bytes per delta
# against the rows of the table, which shows a delta's size follows the rows changed, not the table.
#
# usage: bench/online/publish_cost.sh [--rows N] [--pairs K] [--interval S] [-- LOCAL FLAGS...]
#   --rows N      training rows (default 400,000; generated once into data/bench-N)
#   --pairs K     runs of each (default 8)
#   --interval S  --publish-interval (default 1)
#   LOCAL FLAGS   more flags for both jobs (default: the local defaults)
# Prints a table and a JSON line; writes bench/online/results/publish_cost.{md,json}.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"
rows=400000 pairs=8 interval=1
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

# Each pair runs in the other order from the one before (plain first, then published first), so
# that a machine slowing down or warming up over a pair does not count for or against publishing.
# Besides examples/s, the CPU time (user + system) per example: on a VM whose speed wanders,
# examples/s of one run says as much about the neighbours as about the job.
plain=() published=() plain_cpu=() published_cpu=() pair_ratios=()
for k in $(seq "$pairs"); do
  modes=(plain published)
  ((k % 2 == 0)) && modes=(published plain)
  for mode in "${modes[@]}"; do
    extra=()
    [[ $mode == published ]] && extra=(--publish-dir "$work/pub-$k" --publish-interval "$interval" --publish-retain 100000)
    /usr/bin/time -f "%U %S" -o "$work/$mode-$k.time" \
      "$bin" local --train "$data/train.tsv" --progress-interval 0 --log-level warn "${extra[@]}" "$@" \
      >"$work/$mode-$k.out" 2>"$work/$mode-$k.err" || { tail -3 "$work/$mode-$k.err"; exit 1; }
    tail -1 "$work/$mode-$k.out" >"$work/$mode-$k.json"
    eps=$(bench_field "$work/$mode-$k.json" examples_per_sec)
    cpu_us=$(awk -v r="$rows" '{ printf "%.2f", ($1 + $2) / r * 1e6 }' "$work/$mode-$k.time")
    echo "  pair $k $mode: $eps examples/s, $cpu_us us of CPU per example" >&2
    if [[ $mode == plain ]]; then
      plain+=("$eps") plain_cpu+=("$cpu_us")
    else
      published+=("$eps") published_cpu+=("$cpu_us")
    fi
  done
  pair_ratios+=("$(awk -v a="${published[-1]}" -v b="${plain[-1]}" 'BEGIN { printf "%.3f", a / b }')")
done
plain_median=$(echo "${plain[@]}" | bench_median)
published_median=$(echo "${published[@]}" | bench_median)
ratio=$(awk -v a="$published_median" -v b="$plain_median" 'BEGIN { printf "%.4f", a / b }')
plain_cpu_median=$(echo "${plain_cpu[@]}" | bench_median)
published_cpu_median=$(echo "${published_cpu[@]}" | bench_median)
cpu_ratio=$(awk -v a="$published_cpu_median" -v b="$plain_cpu_median" 'BEGIN { printf "%.4f", a / b }')

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
  echo "| job | examples/s (median) | runs | CPU us per example (median) | runs |"
  echo "|---|---|---|---|---|"
  echo "| without --publish-dir | $plain_median | ${plain[*]} | $plain_cpu_median | ${plain_cpu[*]} |"
  echo "| with --publish-dir | $published_median | ${published[*]} | $published_cpu_median | ${published_cpu[*]} |"
  echo
  echo "Publishing keeps $(awk -v r="$ratio" 'BEGIN { printf "%.1f%%", r * 100 }') of the examples/s (pair by pair:"
  echo "${pair_ratios[*]}; odd pairs ran without publishing first) and uses"
  echo "$(awk -v r="$cpu_ratio" 'BEGIN { printf "%.1f%%", r * 100 }') of the CPU time per example."
  echo
  echo "Deltas of the last published run: $deltas, on average $mean_rows rows and $mean_bytes bytes: the"
  echo "dense part ($dense_bytes bytes) and $per_row bytes per changed row; its newest base holds $base_rows rows."
} >"$out_dir/publish_cost.md"
cat "$out_dir/publish_cost.md"
json="{\"benchmark\":\"publish_cost\",\"rows\":$rows,\"interval_s\":$interval,\"pairs\":$pairs,\"plain_eps\":$plain_median,\"published_eps\":$published_median,\"ratio\":$ratio,\"pair_ratios\":[$(IFS=,; echo "${pair_ratios[*]}")],\"plain_cpu_us_per_example\":$plain_cpu_median,\"published_cpu_us_per_example\":$published_cpu_median,\"cpu_ratio\":$cpu_ratio,\"deltas\":$deltas,\"delta_rows_mean\":$mean_rows,\"delta_bytes_mean\":$mean_bytes,\"bytes_per_row\":$per_row,\"dense_bytes\":$dense_bytes,\"base_rows\":${base_rows:-0},\"cpus\":$(nproc)}"
echo "$json" | tee "$out_dir/publish_cost.json"
