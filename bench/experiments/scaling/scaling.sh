#!/usr/bin/env bash
# Throughput and quality by trainer count, each service a process of its own (`local --processes`,
# loopback tcp), on one machine with enough cores for every trainer: the question ShadowSync asks,
# does examples/s grow with trainers while test NE holds, with background sync (the default at 2+
# trainers) against none. Shards, readers and sync servers grow with the trainers (one of each per
# 4 trainers). Each configuration runs REPEAT times in alternation; medians reported, with each
# run's examples/s per trainer against one trainer's (efficiency = eps(n) / (n * eps(1))).
#
# usage: bench/experiments/scaling/scaling.sh [--rows N] [--repeat K] [--trainers "1 2 4 8"] [--out DIR]
#   --rows N        training rows (default 600,000; data/bench-N, 100,000 test rows)
#   --repeat K      runs of each configuration (default 2)
#   --trainers LIST trainer counts (default "1 2 4 8"; more than the cores measures the cores)
#   --out DIR       where scaling.md and scaling.json go (default bench/experiments/scaling/results)
# Prints a table and a JSON line.
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/bench.sh"
rows=600000 repeat=2 trainers="1 2 4 8" out_dir="$bench_root/bench/experiments/scaling/results"
while (($#)); do
  case $1 in
    --rows) rows=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --trainers) trainers=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --help | -h) bench_usage "$0"; exit 0 ;;
    *) echo "unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
bin=$(bench_built_bin)
data=$(bench_data "$bin" "$rows")
work=$(mktemp -d /tmp/ss-scaling.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out_dir"

# "n sync" pairs: one trainer has nobody to sync with.
configs=()
for n in $trainers; do
  configs+=("$n none")
  ((n > 1)) && configs+=("$n default")
done
for r in $(seq "$repeat"); do
  for c in "${configs[@]}"; do
    read -r n sync <<<"$c"
    side=$(((n + 3) / 4))
    sync_flags=()
    [[ $sync == none ]] && sync_flags=(--sync none)
    tag="n$n-$sync-$r"
    "$bin" local --processes --run-dir "$work/$tag" --trainers "$n" --threads 1 --shards "$side" \
      --readers "$side" --sync-servers "$side" "${sync_flags[@]}" \
      --train "$data/train.tsv" --test "$data/test.tsv" --progress-interval 0 --log-level warn \
      >"$work/$tag.out" 2>"$work/$tag.err" || { tail -5 "$work/$tag.err" >&2; exit 1; }
    tail -1 "$work/$tag.out" >"$work/$tag.json"
    echo "  run $r: $n trainer(s), sync $sync: $(bench_field "$work/$tag.json" examples_per_sec) examples/s," \
      "test NE $(bench_field "$work/$tag.json" test_ne), sync rounds $(bench_field "$work/$tag.json" sync_rounds)" >&2
  done
done

median_of() { # median_of N SYNC FIELD
  for r in $(seq "$repeat"); do bench_field "$work/n$1-$2-$r.json" "$3"; done | bench_median
}
first_n=$(awk '{print $1}' <<<"$trainers")
base=$(median_of "$first_n" none examples_per_sec)
{
  echo "# Scaling by trainers: $rows rows, $repeat run(s) each, $(nproc) CPUs, every service a process"
  echo
  echo "Shards, readers and sync servers: one per 4 trainers. Efficiency: examples/s per trainer"
  echo "against $first_n trainer(s) without sync. Medians."
  echo
  echo "| trainers | sync | examples/s | efficiency | test NE | sync rounds |"
  echo "| ---: | --- | ---: | ---: | ---: | ---: |"
  for c in "${configs[@]}"; do
    read -r n sync <<<"$c"
    eps=$(median_of "$n" "$sync" examples_per_sec)
    awk -v n="$n" -v s="$sync" -v e="$eps" -v b="$base" -v f="$first_n" -v ne="$(median_of "$n" "$sync" test_ne)" \
      -v rounds="$(median_of "$n" "$sync" sync_rounds)" \
      'BEGIN { printf "| %d | %s | %.0f | %.1f%% | %.5f | %.0f |\n", n, s, e, 100 * e / n / (b / f), ne, rounds }'
  done
} | tee "$out_dir/scaling.md"
json=$(for c in "${configs[@]}"; do
  read -r n sync <<<"$c"
  printf '{"trainers":%d,"sync":"%s","examples_per_sec":%s,"test_ne":%s,"sync_rounds":%s}\n' "$n" "$sync" \
    "$(median_of "$n" "$sync" examples_per_sec)" "$(median_of "$n" "$sync" test_ne)" "$(median_of "$n" "$sync" sync_rounds)"
done | paste -sd, -)
echo "{\"bench\":\"scaling\",\"rows\":$rows,\"repeat\":$repeat,\"cpus\":$(nproc),\"runs\":[$json]}" | tee "$out_dir/scaling.json"
