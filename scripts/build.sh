#!/usr/bin/env bash
# Configures and builds shadowsync (Release, -O2) into build/ (or $SS_BUILD_DIR).
#   SS_CMAKE_ARGS="-DSS_WERROR=ON" scripts/build.sh      extra CMake arguments
#   SS_JOBS=1 scripts/build.sh                           fewer parallel compile jobs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/lib/steps.sh"
trap steps_summary EXIT
build_dir=${SS_BUILD_DIR:-$root/build}
# shellcheck disable=SC2086
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${SS_CMAKE_ARGS:-} >/dev/null
thin_build cmake --build "$build_dir" -j "${SS_JOBS:-$(nproc)}"
