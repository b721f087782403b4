#!/usr/bin/env bash
# Builds the test suite with sanitizers and runs it (by hand, or after the suite with
# SS_SANITIZERS="asan tsan" scripts/run-tests.sh, which is what .ci/run does).
#
#   scripts/sanitize.sh asan-adapters [CTEST_ARGS...]   ASan + UBSan on the code that takes bytes
#                                                 from outside (wire codec, ZeroMQ transport, RocksDB
#                                                 rows, ops HTTP server) and the embedding store and
#                                                 sync math, with their test suites (build-asan/)
#   scripts/sanitize.sh asan   [CTEST_ARGS...]   AddressSanitizer + UndefinedBehaviorSanitizer,
#                                                 the whole suite (build-asan/)
#   scripts/sanitize.sh tsan   [CTEST_ARGS...]   ThreadSanitizer on the multi-threaded parts that
#                                                 do not race by design (build-tsan/; see below)
#   scripts/sanitize.sh all                       both, one after the other
#
# Any finding fails its test: UBSan does not recover (-fno-sanitize-recover=all), ASan and TSan
# abort with exit code 66, LeakSanitizer reports leaks at exit. Reports go to the test's output
# (ctest --output-on-failure); a service process's report goes to its log, and the test fails on
# the service's exit. Test timeouts are multiplied by SS_TEST_TIMEOUT_SCALE (3 under ASan, 6 under
# TSan; cmake/ss_helpers.cmake), so a timeout still means a hang. One check is left out of one
# target: UBSan's `null` in actor_tests, for CAF 0.17.6's own header (tests/actors/CMakeLists.txt).
#
# ThreadSanitizer and Hogwild: trainer workers update the shared dense parameters without locks
# on purpose (Hogwild). TSan runs the suites whose threads must never race: the ZeroMQ
# transport (poll thread, ZAP thread, senders), the RocksDB adapter (persister vs. writers), the
# ops HTTP server, the wire codec, the actors (CAF's own scheduler threads in the service tests),
# the shard store and embedding tables (striped locks), the sync algorithms, and real service
# processes (ops_endpoints; not resource_limits: its in-process training job makes TSan check and
# suppress CAF hand-overs for many minutes). scripts/tsan.supp suppresses only reports with a
# frame of libzmq, CAF, RocksDB or spdlog on a stack: Debian builds them without TSan, so the
# synchronization inside them is invisible to it (see the file). Suites that train with several
# Hogwild threads through OpenMP/oneDNN (whose runtime TSan cannot see into) are left to ASan.
#
# Environment: SS_SANITIZE_JOBS (build parallelism, default: the CPUs), SS_TEST_JOBS (ctest -j, default 2),
# SS_MATRIX_ROWS, SS_MATRIX_CASES and SS_MATRIX_NE_BOUND (the fault matrix under ASan: 100,000
# rows, three cases, 5%).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. "$root/scripts/lib/steps.sh"
trap steps_summary EXIT
jobs=${SS_SANITIZE_JOBS:-$(nproc)}
kind=${1:-asan}
shift || true

# RelWithDebInfo under sanitizers is -O1 -g1 (CMakeLists.txt says why).
configure() {  # configure BUILD_DIR SANITIZERS
  if [ ! -f "$1/build.ninja" ]; then
    cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSS_WERROR=ON -DSS_BUILD_BENCH=OFF \
      -DSS_SANITIZE="$2" >/dev/null
  fi
}

asan_env() {
  # detect_stack_use_after_return costs little at -O2 and finds dangling captures in callbacks.
  export ASAN_OPTIONS="abort_on_error=0:exitcode=66:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:${LSAN_OPTIONS:-}"
}

run_asan() {
  configure build-asan address,undefined
  step "asan build" thin_build cmake --build build-asan -j "$jobs"
  asan_env
  # Whole jobs train about 10x slower under ASan (compute slows, sync and restarts do not): the
  # scripts that run many jobs of real processes to compare their models run in the plain suite,
  # and their paths run here in a covering set. The fault matrix runs three cases that cover the
  # restart paths (a shard restarted mid-export: the exporter's wait and rewind; a sync server
  # restarted mid-training: the trainers' renewed calls; a live reshard from a shard with a memory
  # budget whose rows leave for good, a trainer killed while the rows are copied: the copy from
  # storage, the hold, the tombstones), on 100,000 rows, about 80 s a case and two undisturbed
  # runs (2026-12-01); the plain suite runs its whole covering set. Its NE bounds are
  # the plain suite's (1% for most cases); under ASan the runs of one job spread more (a sync
  # server restarted mid-training once x1.0106 on 100,000 rows), so here they hold 5%.
  export SS_MATRIX_ROWS=${SS_MATRIX_ROWS:-100000} SS_MATRIX_NE_BOUND=${SS_MATRIX_NE_BOUND:-1.05}
  export SS_MATRIX_CASES=${SS_MATRIX_CASES:-"shard-0:KILL:export sync-1:TERM:training trainer-0:KILL:copying:leavingtiered"}
  # publish_local's two jobs and follow_input's stream on smaller jobs (their checks hold at any
  # size; follow_input's deadline grows with ASan's slower compute).
  export SS_PUBLISH_ROWS=${SS_PUBLISH_ROWS:-60000}
  export SS_FOLLOW_ROWS=${SS_FOLLOW_ROWS:-20000} SS_FOLLOW_DEADLINE=${SS_FOLLOW_DEADLINE:-600}
  # Left to the plain suite (CI's ASan run of 2026-12-01 took over 30 minutes with them):
  # deploy_validation and prometheus_rules check YAML and JSON with node, python and promtool:
  # nothing of ours runs in them. dashboard_browser's job would take minutes under ASan; the
  # dashboard's routes run here in http_tests. netns_cluster bounds the stalls of a job at full
  # speed (seconds after a link heals): its paths (cuts, restarts on other hosts, refused names)
  # are the fault matrix's here. compose_e2e's image has no sanitizer runtimes. fault_injection
  # (5 minutes here on 200,000 rows) kills each kind of service at random while training: the
  # matrix's cases above. export_predict, tiered_rows, row_ttl, admission, row_precision,
  # reshape_resume, reader_resume and reshard_live train whole jobs to compare their models (3 to
  # 8 minutes each under ASan) on paths that run here anyway: the exporter and predict in the
  # matrix's export case and publish_local; a shard with a memory budget over RocksDB, a live
  # reshard and its moves in the matrix's reshard case; a row limit and a row TTL in publish_local's
  # fourth job, full_disk and the reshard case; admission and 16-bit rows in the embedding and
  # shard suites; the plans of a resume on another shape or reader count in the job suite (unit).
  (cd build-asan && step "asan tests" thin_tests ctest --output-on-failure -j "${SS_TEST_JOBS:-2}" \
     -E '^(deploy_validation|prometheus_rules|dashboard_browser|netns_cluster|compose_e2e|fault_injection|export_predict|tiered_rows|row_ttl|admission|row_precision|reshape_resume|reader_resume|reshard_live)$' "$@")
}

adapter_targets=(transport_tests wire_tests storage_tests http_tests embedding_tests sync_tests)
adapter_tests='^(transport_tests|wire_tests|storage_tests|http_tests|embedding_tests|sync_tests):'

run_asan_adapters() {
  configure build-asan address,undefined
  step "asan build (adapters)" thin_build cmake --build build-asan -j "$jobs" --target "${adapter_targets[@]}"
  asan_env
  (cd build-asan && step "asan tests (adapters)" thin_tests ctest --output-on-failure -j "${SS_TEST_JOBS:-2}" -R "$adapter_tests" "$@")
}

tsan_targets=(transport_tests storage_tests http_tests wire_tests actor_tests embedding_tests sync_tests shadowsync)
tsan_tests='^(transport_tests|storage_tests|http_tests|wire_tests|actor_tests|embedding_tests|sync_tests):|^ops_endpoints$'

run_tsan() {
  configure build-tsan thread
  step "tsan build" thin_build cmake --build build-tsan -j "$jobs" --target "${tsan_targets[@]}"
  export TSAN_OPTIONS="exitcode=66:halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp:${TSAN_OPTIONS:-}"
  (cd build-tsan && step "tsan tests" thin_tests ctest --output-on-failure -j "${SS_TEST_JOBS:-2}" -R "$tsan_tests" "$@")
}

case "$kind" in
  asan-adapters) run_asan_adapters "$@" ;;
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  all) run_asan "$@" && run_tsan "$@" ;;
  *)
    echo "usage: scripts/sanitize.sh asan-adapters|asan|tsan|all [CTEST_ARGS...]" >&2
    exit 2
    ;;
esac
