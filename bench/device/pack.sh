#!/usr/bin/env bash
# Packs the release binary for a lent machine that has none of its libraries (the device tool's
# machine: Ubuntu, no Debian packages, nothing to download): into .devpkg/ (ignored by git; name
# it in the device run's carry), the stripped binary, its shared libraries but the C library's
# own (a newer glibc runs binaries built against Debian 12's), libstdc++ included, as lib.tar.xz,
# and /usr/bin/time (the benchmarks time runs with it). About 20 MB.
#
# usage: bench/device/pack.sh [BINARY]     (default build/services/cli/shadowsync)
# Then, with the device tool: run `bash bench/device/remote.sh` with carry [".devpkg"].
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${1:-$root/build/services/cli/shadowsync}
out=$root/.devpkg
[[ -x $bin ]] || { echo "no binary at $bin: scripts/build.sh first" >&2; exit 1; }
grep -qx '/.devpkg/' "$root/.git/info/exclude" 2>/dev/null || { mkdir -p "$root/.git/info"; echo '/.devpkg/' >>"$root/.git/info/exclude"; }
rm -rf "$out" && mkdir -p "$out/lib"
strip -o "$out/shadowsync" "$bin"
ldd "$bin" | awk '$3 ~ /^\// { print $3 }' | grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
tar -C "$out" -cJf "$out/lib.tar.xz" lib && rm -rf "$out/lib"
cp /usr/bin/time "$out/time"
du -sh "$out"
