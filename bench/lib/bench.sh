# What the shell benchmarks share; sourced (bash), never run:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"       (or ../../lib from bench/experiments/NAME/)
#
#   bench_root              the repository
#   bench_bin               the shadowsync binary: $SHADOWSYNC, else $SS_BUILD_DIR/services/cli/shadowsync
#                           ($SS_BUILD_DIR: build/ by default)
#   bench_built_bin         the same, built first with scripts/build.sh when it is missing
#   bench_data BIN ROWS     data/bench-ROWS (ROWS training rows, 100,000 test rows), generated with BIN
#                           once and reused; prints the folder
#   bench_usage FILE        prints FILE's header comment (line 2 up to `set -euo pipefail`): --help
#   bench_field FILE NAME   the first number of JSON field NAME in FILE
#   bench_median            the median of the numbers on stdin (any white space between them)
# shellcheck shell=bash
bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

bench_bin() {
  echo "${SHADOWSYNC:-${SS_BUILD_DIR:-$bench_root/build}/services/cli/shadowsync}"
}

bench_built_bin() {
  local bin
  bin=$(bench_bin)
  [[ -x $bin || -n ${SHADOWSYNC:-} ]] || "$bench_root/scripts/build.sh" >&2
  echo "$bin"
}

bench_data() {
  local bin=$1 rows=$2 data="$bench_root/data/bench-$2"
  [[ -f $data/teacher.json ]] || "$bin" gen-data --out "$data" --rows "$rows" --test-rows 100000 >/dev/null
  echo "$data"
}

bench_usage() {
  sed -n '2,/^set -euo/p' "$1" | sed '$d; s/^# \{0,1\}//'
}

bench_field() {
  grep -o "\"$2\":[0-9.]*" "$1" | head -1 | cut -d: -f2
}

bench_median() {
  tr -s ' \t' '\n' | grep -v '^$' | sort -g |
    awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
