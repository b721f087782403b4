#!/usr/bin/env bash
# Load and soak: bounded-time runs of `shadowsync local --processes` (every service its own
# process on loopback tcp) that look for unbounded memory growth, lost or duplicated examples and
# latency under load. Three scenarios on the same generated data set, each for several epochs (the
# --train list repeats the files), so that after epoch 1 every id exists and the embedding tables
# stop growing: memory is judged on that steady state.
#   hammer       16 trainers (--threads 1) on ONE shard, 1 reader, shadow EASGD, a small model
#   fast-reader  1 trainer with a large model against 4 readers: readers far faster than the
#                trainer, which pulls with bounded credits, so readers must not buffer
#   members64    a coordinator with 64 members: 40 trainers + 16 readers + 8 shards, small model
#   tiered       2 trainers on one shard with a 4 MB --memory-budget-mb (its rows several times
#                that): its RSS must stay within the budget plus a stated overhead (soak_report.py)
# Shards run with a small RocksDB budget (--storage-memory-mb, SOAK_STORAGE_MEMORY_MB, default 8):
# their memtables and block cache fill toward that bound over minutes, and a bounded-time run
# should see them reach it and stay there (the report checks they never pass it), not fill.
# Every service's RSS is sampled each second, the job's status every 2 s (bench/soak/soak_report.py),
# and the verdicts (exactly once, flat memory, bounded time) printed and written to
# bench/soak/results/soak-STAMP.{txt,json} and soak-STAMP-<scenario>.png. Exit status 1 if one fails.
#
# usage: bench/soak/soak.sh [--bin PATH] [--smoke | --scale X] [--scenarios a,b,c] [--rows N] [--out DIR]
#   --bin        the shadowsync binary (or SHADOWSYNC=...); default build/services/cli/shadowsync
#   --scale X    multiplies every scenario's epochs (default 1: about 8-10 minutes on a 2-core
#                machine; --scale 8 for a long soak); --smoke is --scale 0.1 (about 2 minutes)
#   --rows N     rows of the generated data set (default 300000, 16 files; kept in
#                SOAK_DATA=/tmp/ss-soak-data and reused)
#   --timeout S  watchdog per scenario (default: 300 s + 4 x the scenario's expected time)
#   --out DIR    where results go (default bench/soak/results)
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"
root=$bench_root
bin=$(bench_bin)
scale=1
rows=300000
scenarios=hammer,fast-reader,members64,tiered
out_dir=$root/bench/soak/results
timeout=""
snapshot_interval=${SOAK_SNAPSHOT_INTERVAL:-30} # a few snapshots per scenario: part of the soak
storage_memory_mb=${SOAK_STORAGE_MEMORY_MB:-8}
while (($#)); do
  case $1 in
  --bin) bin=$2; shift 2 ;;
  --scale) scale=$2; shift 2 ;;
  --smoke) scale=0.1; shift ;;
  --scenarios) scenarios=$2; shift 2 ;;
  --rows) rows=$2; shift 2 ;;
  --out) out_dir=$2; shift 2 ;;
  --timeout) timeout=$2; shift 2 ;;
  -h | --help) bench_usage "$0"; exit 0 ;;
  *) echo "soak.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "soak.sh: no shadowsync binary at $bin (give --bin or SHADOWSYNC)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
py=/usr/bin/python3
report=$root/bench/soak/soak_report.py
started=$(date +%s)

# One data set for every scenario: 16 files, so that 1, 4 and 16 readers split each epoch evenly.
data=${SOAK_DATA:-/tmp/ss-soak-data}/rows-$rows
if [ ! -f "$data/teacher.json" ]; then
  "$bin" gen-data --out "$data" --rows "$rows" --test-rows 0 --files 16 >/dev/null
fi
files=$(printf '%s,' "$data"/train-*.tsv)
files=${files%,}

work=$(mktemp -d /tmp/ss-soak.XXXXXX)
supervisor=""
sampler=""
# Kill what this script started, by pid: the supervisor, its services (from the pid files), the sampler.
cleanup_run() {
  local run=$1 p
  if [ -n "$supervisor" ]; then kill -TERM "$supervisor" 2>/dev/null || true; fi
  sleep 1
  for f in "$run"/*.pid; do
    [ -f "$f" ] || continue
    p=$(cat "$f")
    if [ -r "/proc/$p/cmdline" ] && grep -q shadowsync "/proc/$p/cmdline" 2>/dev/null; then
      echo "soak.sh: $(basename "$f" .pid) (pid $p) still running after the run: killing it" | tee -a "$run/../stderr.txt" >&2
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
  if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null || true; fi
  supervisor=""
  sampler=""
}
trap 'cleanup_run "${current_run:-/nonexistent}"; echo "soak.sh: work files in $work" >&2' EXIT
trap 'exit 130' INT TERM

# scenario NAME DESCRIPTION EPOCHS EXPECTED_EPS TRAINERS SHARDS READERS [local flags...]
order=0
scenario() {
  local name=$1 desc=$2 base_epochs=$3 eps_guess=$4 trainers=$5 shards=$6 readers=$7
  shift 7
  case ",$scenarios," in *",$name,"*) ;; *) return 0 ;; esac
  local epochs train deadline dir t0 t1 rc
  epochs=$(awk -v e="$base_epochs" -v s="$scale" 'BEGIN { n = int(e * s + 0.5); print (n < 2 ? 2 : n) }')
  train=$(for ((i = 0; i < epochs; ++i)); do printf '%s,' "$files"; done)
  train=${train%,}
  # Watchdog: generous (the machine is shared), but bounded.
  deadline=${timeout:-$(awk -v r="$rows" -v e="$epochs" -v g="$eps_guess" 'BEGIN { print int(300 + 4 * r * e / g) }')}
  dir=$work/$name
  mkdir -p "$dir"
  current_run=$dir/run
  echo "soak: $name: $trainers trainers, $shards shards, $readers readers, $rows rows x $epochs epochs (watchdog ${deadline}s)" >&2
  t0=$(date +%s.%N)
  "$bin" local --processes --run-dir "$dir/run" --trainers "$trainers" --shards "$shards" --readers "$readers" \
    --train "$train" --snapshot-interval "$snapshot_interval" --storage-memory-mb "$storage_memory_mb" --startup-timeout 180 --progress-interval 10 "$@" \
    >"$dir/stdout.txt" 2>"$dir/stderr.txt" &
  supervisor=$!
  "$py" "$report" sample --run-dir "$dir/run" --bin "$bin" --supervisor "$supervisor" --out "$dir/samples.jsonl" \
    --deadline "$deadline" 2>"$dir/sampler.err" &
  sampler=$!
  rc=0
  wait "$supervisor" || rc=$?
  t1=$(date +%s.%N)
  wait "$sampler" || true
  supervisor=""
  sampler=""
  cleanup_run "$dir/run"
  rm -rf "$dir/run/state" # the shards' RocksDB and the snapshots: only the logs and samples are kept
  order=$((order + 1))
  # The flags go into the report as given, without the long --train list.
  "$py" - "$dir/meta.json" "$name" "$desc" "$rows" "$epochs" "$trainers" "$shards" "$readers" "$rc" "$t0" "$t1" \
    "$deadline" "$order" "$* --storage-memory-mb $storage_memory_mb --snapshot-interval $snapshot_interval" <<'PY'
import json, sys
a = sys.argv
json.dump({"name": a[2], "description": a[3], "rows": int(a[4]), "epochs": int(a[5]), "trainers": int(a[6]),
           "shards": int(a[7]), "readers": int(a[8]), "exit_status": int(a[9]), "wall_seconds": float(a[11]) - float(a[10]),
           "deadline": float(a[12]), "order": int(a[13]), "flags": a[14]}, open(a[1], "w"))
PY
  echo "soak: $name: exit $rc after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }') s: $(grep -o '"examples_committed":[0-9]*' "$dir/stdout.txt" || echo 'no result')" >&2
}

small=(--bottom-mlp 64-16 --top-mlp 64-1)
scenario hammer "16 trainers hammering one shard, 1 reader, s-easgd" 50 100000 16 1 1 \
  --threads 1 --sync s-easgd "${small[@]}"
scenario fast-reader "4 readers feeding 1 trainer with a large model (readers far faster)" 8 16000 1 1 4 \
  --threads 1 --bottom-mlp 1024-512-64-16 --top-mlp 1024-512-1
scenario members64 "coordinator with 64 members: 40 trainers, 16 readers, 8 shards, s-easgd" 20 20000 40 8 16 \
  --threads 1 --sync s-easgd "${small[@]}"
scenario tiered "2 trainers on 1 shard whose rows are several times its 4 MB memory budget" 6 15000 2 1 1 \
  --threads 1 --memory-budget-mb 4 "${small[@]}"
current_run=""

mkdir -p "$out_dir"
stamp=$(date +%Y%m%d-%H%M)
rc=0
"$py" "$report" report --work "$work" --out "$out_dir/soak-$stamp" --bin-label "$bin" \
  --host "$(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), scale $scale" \
  --total-seconds "$(($(date +%s) - started))" || rc=$?
echo "soak: results in $out_dir/soak-$stamp.{txt,json} and soak-$stamp-*.png; $(($(date +%s) - started)) s in all" >&2
exit $rc
