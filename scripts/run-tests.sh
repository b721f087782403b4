#!/usr/bin/env bash
# The test command of the README: installs dependencies (apt-get, idempotent), builds with
# warnings as errors, and runs the whole test suite with CTest.
#   scripts/run-tests.sh                 everything
#   scripts/run-tests.sh -L unit         extra arguments go to ctest (here: one label)
#   SS_FUZZ_SECONDS=30 scripts/run-tests.sh   then also runs every libFuzzer target 30 s (clang,
#                                        ASan+UBSan; scripts/fuzz.sh); CI does this
#   SS_SANITIZERS="asan tsan" scripts/run-tests.sh   then also builds and runs test suites under
#                                        sanitizers (asan-adapters, asan, tsan: see
#                                        scripts/sanitize.sh); CI does this
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/lib/steps.sh"
trap steps_summary EXIT
# --dashboard: Chromium and promtool, which the dashboard_browser and prometheus_rules tests need;
# --docker: the Docker engine and debootstrap, which compose_e2e needs (docker/e2e.sh, as root);
# installed here, so those tests fail rather than skip when they cannot run.
step "packages" "$root/scripts/setup.sh" --dashboard --docker
export SS_BROWSER_REQUIRE=1 SS_PROMTOOL_REQUIRE=1 SS_DOCKER_REQUIRE=1
export SS_CMAKE_ARGS="-DSS_WERROR=ON ${SS_CMAKE_ARGS:-}"
step "build" "$root/scripts/build.sh"
build_dir=${SS_BUILD_DIR:-$root/build}
cd "$build_dir"
step "tests" thin_tests ctest --output-on-failure -j "${SS_TEST_JOBS:-2}" "$@"
for kind in ${SS_SANITIZERS:-}; do
  "$root/scripts/sanitize.sh" "$kind" "$@"
done
if [ "${SS_FUZZ_SECONDS:-0}" != 0 ]; then
  step "fuzz packages" "$root/scripts/setup.sh" --fuzz
  step "fuzz" "$root/scripts/fuzz.sh" "$SS_FUZZ_SECONDS"
fi
