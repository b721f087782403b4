#!/usr/bin/env bash
# What the default optimizers cost in the one-thread training step (train_step_bench, the default
# model, batch 128, pinned to one core): SGD everywhere (the dense update fused into the backward
# pass) against the job's defaults, Adam and row-wise Adagrad, with Adam applied in one pass after
# the backward pass or per layer inside it, while each layer's gradient is in cache. Runs alternate
# for ROUNDS rounds of SECONDS each, so a noisy machine hits all three alike; prints each one's
# median examples/s, the defaults' as a fraction of SGD's, per layer against one pass, and one
# JSON line.
#
#   bench/micro/optimizer_cost.sh [ROUNDS] [SECONDS]     (defaults 5 and 4; SS_BUILD_DIR: build/)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"
[[ ${1:-} == --help ]] && { bench_usage "$0"; exit 0; }
rounds=${1:-5}
seconds=${2:-4}
bench="${SS_BUILD_DIR:-$bench_root/build}/bench/train_step_bench"
[[ -x $bench ]] || { echo "optimizer_cost: build $bench first (scripts/build.sh)" >&2; exit 1; }
cpu=$(taskset -pc $$ | awk -F': ' '{print $2}' | cut -d, -f1 | cut -d- -f1)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {  # run NAME ARGS...: one run, its examples/s appended to $out/NAME
  local name=$1
  shift
  taskset -c "$cpu" "$bench" --seconds "$seconds" --threads 1 "$@" >"$out/last" 2>&1 ||
    { cat "$out/last" >&2; exit 1; }
  bench_field <(tail -1 "$out/last") examples_per_sec >>"$out/$name"
}

for ((r = 1; r <= rounds; r++)); do
  run sgd --optimizer sgd --sparse-optimizer sgd
  run adam_one_pass --optimizer adam --sparse-optimizer rowwise-adagrad --dense-update one-pass
  run adam_per_layer --optimizer adam --sparse-optimizer rowwise-adagrad --dense-update per-layer
  echo "round $r of $rounds: sgd $(tail -1 "$out/sgd"), defaults with adam in one pass $(tail -1 "$out/adam_one_pass")," \
       "per layer $(tail -1 "$out/adam_per_layer") examples/s" >&2
done
sgd=$(bench_median <"$out/sgd")
one=$(bench_median <"$out/adam_one_pass")
per=$(bench_median <"$out/adam_per_layer")
machine=$(grep -m1 "machine" "$out/last" | sed 's/^ *machine *//')
awk -v s="$sgd" -v o="$one" -v p="$per" -v n="$rounds" -v t="$seconds" -v m="$machine" 'BEGIN {
  printf "optimizer cost, one thread on one core, median of %d alternating runs of %g s (%s)\n", n, t, m
  printf "  sgd dense (fused into the backward pass) and sparse         %8.0f examples/s\n", s
  printf "  adam + row-wise adagrad, adam in one pass after the backward %8.0f examples/s = %.1f%% of sgd\n", o, 100 * o / s
  printf "  adam + row-wise adagrad, adam per layer inside the backward  %8.0f examples/s = %.1f%% of sgd, %.3fx one pass\n", p, 100 * p / s, p / o
  printf "{\"bench\":\"optimizer_cost\",\"rounds\":%d,\"seconds\":%g,\"sgd\":%.1f,\"adam_one_pass\":%.1f,\"adam_per_layer\":%.1f,", n, t, s, o, p
  printf "\"adam_one_pass_of_sgd\":%.4f,\"adam_per_layer_of_sgd\":%.4f,\"per_layer_over_one_pass\":%.4f}\n", o / s, p / s, p / o
}'
