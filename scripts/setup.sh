#!/usr/bin/env bash
# Installs every Debian 12 package shadowsync needs. Idempotent: packages already present are
# skipped, and apt-get runs only when something is missing.
#
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --bench    also the benchmark peers (PyTorch with OpenBLAS, matplotlib)
#   scripts/setup.sh --docker   also the Docker engine and debootstrap (docker/e2e.sh)
#   scripts/setup.sh --fuzz     also clang's libFuzzer runtime (fuzz targets)
#   scripts/setup.sh --dashboard  also Chromium and Prometheus's promtool (the dashboard's browser
#                               test and the alert rules' test; scripts/run-tests.sh asks for them)
set -euo pipefail

BUILD_PACKAGES=(
  g++ cmake ninja-build pkg-config git ca-certificates
  libcaf-dev libzmq3-dev cppzmq-dev capnproto libcapnp-dev
  librocksdb-dev libspdlog-dev catch2 zlib1g-dev libdnnl-dev
  python3 curl
  docker-compose kubernetes-client python3-kubernetes python3-yaml nodejs npm
)
BENCH_PACKAGES=(time python3-torch libopenblas0-pthread python3-numpy python3-matplotlib libopenblas-dev libblis-dev libeigen3-dev libxsmm-dev)
DOCKER_PACKAGES=(docker.io debootstrap docker-compose)
FUZZ_PACKAGES=(clang libclang-rt-14-dev)
DASHBOARD_PACKAGES=(chromium prometheus)

wanted=("${BUILD_PACKAGES[@]}")
for arg in "$@"; do
  case "$arg" in
    --bench) wanted+=("${BENCH_PACKAGES[@]}") ;;
    --docker) wanted+=("${DOCKER_PACKAGES[@]}") ;;
    --fuzz) wanted+=("${FUZZ_PACKAGES[@]}") ;;
    --dashboard) wanted+=("${DASHBOARD_PACKAGES[@]}") ;;
    --all) wanted+=("${BENCH_PACKAGES[@]}" "${DOCKER_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}" "${DASHBOARD_PACKAGES[@]}") ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

# Packages whose command may come from elsewhere (e.g. nodejs from NodeSource bundles npm and
# conflicts with Debian's npm package): present when the command is.
declare -A PROVIDES=([npm]=npm [nodejs]=node [kubernetes-client]=kubectl [docker-compose]=docker-compose [curl]=curl)

missing=()
for pkg in "${wanted[@]}"; do
  if [ -n "${PROVIDES[$pkg]:-}" ] && command -v "${PROVIDES[$pkg]}" >/dev/null 2>&1; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#wanted[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
# Another apt or dpkg run (unattended upgrades, a second setup) holds the lock: wait for it.
lock_wait=(-o DPkg::Lock::Timeout=600)
$SUDO apt-get "${lock_wait[@]}" update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${lock_wait[@]}" install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
