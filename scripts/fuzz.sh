#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time (CI's fuzz step, and by hand).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
#
# Configures build-fuzz/ with clang (ASan + UBSan + libFuzzer instrumentation of every library
# the targets link), builds the targets (only those), and runs each one for SECONDS_PER_TARGET on
# its seed corpus (tests/fuzz/corpus/<target>/) and past findings (tests/fuzz/regressions/<target>/).
# New interesting inputs go to build-fuzz/fuzz-work/<target>/, never into the repository. A crash,
# leak, timeout or out-of-memory input is copied to tests/fuzz/regressions/<target>/ (the ctest
# `fuzz_regressions` replays it in every normal build from then on) and the script exits 1.
#
# Environment: SS_FUZZ_JOBS (build parallelism, default 2), SS_FUZZ_LANES (targets run at once,
# default the CPUs), SS_FUZZ_TARGETS (a subset, space-separated), SS_FUZZ_BUILD_DIR (default
# build-fuzz). Needs `scripts/setup.sh --fuzz`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. "$root/scripts/lib/steps.sh"
trap steps_summary EXIT
seconds=${1:-60}
build=${SS_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${SS_FUZZ_JOBS:-2}
targets=(${SS_FUZZ_TARGETS:-fuzz_frame fuzz_messages fuzz_row_parser fuzz_config fuzz_publish})

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found; run scripts/setup.sh --fuzz" >&2
  exit 2
fi

san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS_FUZZ="-O1 -g1" -DCMAKE_C_FLAGS_FUZZ="-O1 -g1" \
    -DSS_FUZZ=ON -DSS_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS="$san -fsanitize=fuzzer-no-link" -DCMAKE_C_FLAGS="$san"
fi
step "fuzz build" thin_build ninja -C "$build" -j"$jobs" "${targets[@]}"

# -max_len: frames up to 1 MiB; rows, config text, delta files and manifests up to 64 KiB.
max_len_of() {
  case "$1" in
    fuzz_frame|fuzz_messages) echo $((1 << 20)) ;;
    *) echo $((64 << 10)) ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One target a core (SS_FUZZ_LANES, default the CPUs): each fuzzer is one process on one core, so
# the step's wall time is the targets' total over the lanes, with the same fuzzing per target.
fuzz_one() {  # fuzz_one TARGET: runs it, writes its report lines to $build/fuzz-TARGET.report
  local t=$1 work artifacts seeds regress log rc execs speed cov found f report
  work="$build/fuzz-work/$t"
  artifacts="$build/fuzz-artifacts/$t"
  seeds="tests/fuzz/corpus/$t"
  regress="tests/fuzz/regressions/$t"
  report="$build/fuzz-$t.report"
  mkdir -p "$work" "$artifacts" "$regress"
  rm -f "$artifacts"/*
  log="$build/fuzz-$t.log"
  {
    echo "== $t: ${seconds}s, -max_len=$(max_len_of "$t")"
    set +e
    "$build/tests/fuzz/$t" "$work" "$seeds" "$regress" \
      -max_total_time="$seconds" -max_len="$(max_len_of "$t")" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1
    rc=$?
    set -e
    execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
    speed=$(grep -Eo 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    found=0
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      cp "$f" "$regress/"
      echo "   finding: $regress/$(basename "$f")"
      found=1
    done
    if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
      echo "   FAILED (exit $rc); log: $log"
      grep -E 'ERROR|runtime error|fuzz invariant failed|SUMMARY' "$log" | head -5 | sed 's/^/   /'
      echo "FAILED" >"$report.failed"
    fi
    echo "SUMMARY $t: $execs runs, $speed exec/s, $cov, exit $rc"
  } >"$report"
}

lanes=${SS_FUZZ_LANES:-$(nproc)}
rm -f "$build"/fuzz-*.report "$build"/fuzz-*.report.failed
running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  running=$((running + 1))
  if ((running >= lanes)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true
failed=0
summary=()
for t in "${targets[@]}"; do
  report="$build/fuzz-$t.report"
  if [ ! -f "$report" ]; then
    echo "== $t: no report (the runner itself failed)"
    failed=1
    continue
  fi
  grep -v '^SUMMARY ' "$report"
  [ ! -f "$report.failed" ] || failed=1
  if ! grep -q '^SUMMARY ' "$report"; then
    echo "   FAILED: its runner stopped before its summary; log: $build/fuzz-$t.log"
    failed=1
    continue
  fi
  summary+=("$(grep '^SUMMARY ' "$report" | sed 's/^SUMMARY //')")
done
echo "== summary"
printf '   %s\n' "${summary[@]}"
exit "$failed"
