#!/usr/bin/env bash
# The main job of the README: installs dependencies, builds, generates a training and a test set
# from a hidden teacher (once; kept in data/demo), and trains on it, ending with a summary and a
# JSON line. Extra arguments go to the trainer, e.g.  scripts/run-demo.sh --threads 2
#   SS_DEMO_ROWS=2000000 scripts/run-demo.sh     more training rows (default 1,000,000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
bin=${SS_BUILD_DIR:-$root/build}/services/cli/shadowsync
rows=${SS_DEMO_ROWS:-1000000}
data="$root/data/demo-$rows"
if [ ! -f "$data/teacher.json" ]; then
  "$bin" gen-data --out "$data" --rows "$rows" --test-rows 100000
fi
exec "$bin" train --train "$data/train.tsv" --test "$data/test.tsv" --threads "$(nproc)" "$@"
