#!/usr/bin/env bash
# The main job of the README: installs dependencies, builds, generates a training set (two
# files) and a test set from a hidden teacher (once; kept in data/), and trains on it with a
# whole cluster on this machine: a coordinator, 2 embedding shards, 2 readers and 2 trainers,
# as actors in one process. Ends with a summary and a JSON line.
#   scripts/run-demo.sh --processes             every service as its own process on loopback
#   scripts/run-demo.sh --trainers 4            any `shadowsync local` option
#   SS_DEMO_ROWS=2000000 scripts/run-demo.sh    more training rows (default 1,000,000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
bin=${SS_BUILD_DIR:-$root/build}/services/cli/shadowsync
rows=${SS_DEMO_ROWS:-1000000}
data="$root/data/demo-$rows"
if [ ! -f "$data/teacher.json" ]; then
  "$bin" gen-data --out "$data" --rows "$rows" --test-rows 100000 --files 2
fi
exec "$bin" local --trainers 2 --shards 2 --readers 2 \
  --train "$data/train-00000-of-00002.tsv,$data/train-00001-of-00002.tsv" --test "$data/test.tsv" "$@"
