#!/usr/bin/env bash
# Runs on the lent machine, in the repository's copy (bench/device/pack.sh made .devpkg/): unpacks
# the libraries, then the benchmarks that need many cores, each under a time limit, their outputs
# into $OUT. What ran on 2026-11-29 (16 CPUs): scaling by trainers, then publishing's cost.
#   ROWS, TRAINERS: scaling.sh's --rows and --trainers; PAIRS: publish_cost.sh's --pairs;
#   BENCHES: which of "scaling publish_cost" (default both).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p /tmp/ss && tar xJf .devpkg/lib.tar.xz -C /tmp/ss
export LD_LIBRARY_PATH=/tmp/ss/lib SHADOWSYNC=$PWD/.devpkg/shadowsync
[[ -x /usr/bin/time ]] || cp .devpkg/time /usr/bin/time
out=${OUT:-/tmp/ss-out}
mkdir -p "$out"
echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(. /etc/os-release; echo "$PRETTY_NAME")"
"$SHADOWSYNC" --version || { ldd "$SHADOWSYNC"; exit 1; }
for bench in ${BENCHES:-scaling publish_cost}; do
  start=$SECONDS
  case $bench in
    scaling)
      timeout 330 bench/experiments/scaling/scaling.sh --rows "${ROWS:-600000}" --repeat 2 \
        --trainers "${TRAINERS:-1 2 4 8 12}" --out "$out/scaling" 2>&1 | tee "$out/scaling.log" ;;
    publish_cost)
      timeout 200 bench/online/publish_cost.sh --rows 400000 --pairs "${PAIRS:-6}" 2>&1 | tee "$out/publish_cost.log"
      cp bench/online/results/publish_cost.md bench/online/results/publish_cost.json "$out/" 2>/dev/null ;;
    *) echo "unknown bench $bench" >&2 ;;
  esac
  echo "== $bench took $((SECONDS - start)) s"
done
