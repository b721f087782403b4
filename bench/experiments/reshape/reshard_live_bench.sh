#!/usr/bin/env bash
# A running job's shard count changed with `shadowsync reshard` (docs/durability.md, "Resharding a
# running job"), and what it costs the training: every service a process of its own on loopback,
# the shards with storage, 2 readers and 2 trainers (one thread each). Once 30% of the rows are
# committed the job is asked to go from FROM to TO shards; the new shards (when it grows) start
# 1.5 s later, as an operator would start them. Every member heartbeats every 50 ms (a reshard's
# own pace, so that the trainers' counts are as fresh before it as during it). Reports, from the
# coordinator's log (progress every 0.25 s): examples/s in the 10 s before the request; during the
# move (from the copy's start to the input's release: the copy while training plus the hold); from
# the release to the drop of the rows that moved (the new shape's snapshot, the drop); over the
# whole reshard (from the request to the drop); how long the input was held; the rows copied while
# training and moved under the hold, and seconds per million; the job's end (ok, every row
# committed once, test NE) against an undisturbed run of the same job (first). Then one JSON line.
# usage: bench/experiments/reshape/reshard_live_bench.sh [ROWS] [FROM] [TO]   (default 2000000 2 4)
#   SS_BENCH_SHARD_FLAGS  more flags for every shard (e.g. "--memory-budget-mb 24": rows in two tiers)
#   SS_BENCH_JOB_FLAGS    more flags for the coordinator, which hands the job's settings to the
#                         shards (e.g. "--row-ttl 200000ex": rows leave for good while they move)
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/bench.sh"
[[ ${1:-} == -h || ${1:-} == --help ]] && { bench_usage "$0"; exit 0; }
bin=$(bench_built_bin)
rows=${1:-2000000}
from=${2:-2}
to=${3:-4}
work=$(mktemp -d /tmp/ss-reshard-bench.XXXXXX)
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  wait 2>/dev/null || true
  [[ -n ${SS_KEEP:-} ]] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
"$bin" gen-data --rows "$rows" --test-rows 20000 --files 2 --out "$work/data" >/dev/null 2>&1
train=$(ls "$work"/data/train-*.tsv | paste -sd,)
# run NAME [RESHARD]: the job (its files NAME.*), resharded once 30% of its rows are committed.
run() {
  local name=$1 reshard=${2:-} port coord coord_pid rc=0 i
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  coord=tcp://127.0.0.1:$port
  "$bin" coordinator --listen "$coord" --shards "$from" --readers 2 --train "$train" --test "$work/data/test.tsv" \
    --snapshot-dir "$work/$name.snapshots" --snapshot-interval 30 --progress-interval 0.1 --heartbeat-interval 0.05 \
    --log-level info ${SS_BENCH_JOB_FLAGS:-} >"$work/$name.coordinator.out" 2>"$work/$name.coordinator.err" &
  coord_pid=$!
  declare -A member_pid=()
  shard() {
    "$bin" shard --index "$1" --coordinator "$coord" --listen tcp://127.0.0.1:0 --data-dir "$work/$name.shard-$1" \
      --heartbeat-interval 0.05 --log-level info ${SS_BENCH_SHARD_FLAGS:-} >/dev/null 2>"$work/$name.shard-$1.err" &
    member_pid[shard-$1]=$!
  }
  # A service that exits with an error while the job runs ends the bench at once (the coordinator
  # would wait for it as long as its limits allow, as it should for a member that may come back).
  watch_members() {
    local m rc
    for m in "${!member_pid[@]}"; do
      kill -0 "${member_pid[$m]}" 2>/dev/null && continue
      rc=0
      wait "${member_pid[$m]}" || rc=$?
      unset "member_pid[$m]"
      ((rc == 0)) || { echo "$name: $m exited $rc: $(tail -2 "$work/$name.$m.err")"; exit 1; }
    done
  }
  for ((i = 0; i < from; i++)); do shard "$i"; done
  for i in 0 1; do
    "$bin" reader --index "$i" --coordinator "$coord" --listen tcp://127.0.0.1:0 --heartbeat-interval 0.05 \
      >/dev/null 2>"$work/$name.reader-$i.err" &
    member_pid[reader-$i]=$!
    "$bin" trainer --coordinator "$coord" --listen tcp://127.0.0.1:0 --threads 1 --heartbeat-interval 0.05 \
      >/dev/null 2>"$work/$name.trainer-$i.err" &
    member_pid[trainer-$i]=$!
  done
  if [[ -n $reshard ]]; then
    committed() {
      "$bin" status --coordinator "$coord" --timeout 2 2>/dev/null | grep -o '"examples_committed":[0-9]*' | head -1 |
        cut -d: -f2
    }
    for ((i = 0; i < 1200; i++)); do
      (($(committed || echo 0) >= rows * 3 / 10)) && break
      watch_members
      sleep 0.5
    done
    "$bin" reshard --coordinator "$coord" --timeout 5 --shards "$to" >"$work/reshard.out" 2>&1 ||
      { echo "the reshard was refused: $(tail -1 "$work/reshard.out")"; exit 1; }
    sleep 1.5
    for ((i = from; i < to; i++)); do shard "$i"; done
  fi
  while kill -0 "$coord_pid" 2>/dev/null; do
    watch_members
    sleep 0.5
  done
  wait "$coord_pid" || rc=$?
  ((rc == 0)) || { echo "$name: the coordinator exited $rc: $(tail -3 "$work/$name.coordinator.err")"; exit 1; }
  wait
}
run base
run live yes
python3 - "$work/live.coordinator.err" "$work/live.coordinator.out" "$work/base.coordinator.out" "$rows" "$from" "$to" \
  "$(nproc)" <<'EOF'
import json, re, sys
err, out, base_out, rows, frm, to, cores = sys.argv[1:4] + [int(x) for x in sys.argv[4:7]] + [sys.argv[7]]
stamp = re.compile(r"^\[(\d\d):(\d\d):(\d\d\.\d+)\] ")
def seconds(line):
    m = stamp.match(line)
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3)) if m else None
progress, events = [], {}
for line in open(err):
    t = seconds(line)
    if t is None:
        continue
    m = re.search(r"\] info (\d+) examples", line)
    if m:
        progress.append((t, int(m.group(1))))
    for key, pattern in [("request", r"resharding \d+ -> \d+ shards: waiting for|resharding \d+ -> \d+ shards: the rows of"),
                         ("copy", r"every shard registered; the rows are copied"),
                         ("hold", r"the input is held until"),
                         ("release", r"the input is released after"),
                         ("done", r"resharded \d+ -> \d+ shards in")]:
        if key not in events and re.search(pattern, line):
            events[key] = (t, line.strip())
missing = [k for k in ("request", "copy", "hold", "release", "done") if k not in events]
if missing:
    sys.exit("reshard_live_bench: the coordinator's log lacks " + ", ".join(missing))
def examples_at(t):  # linear between the progress lines around t
    before = [p for p in progress if p[0] <= t]
    after = [p for p in progress if p[0] >= t]
    if not before or not after:
        sys.exit("reshard_live_bench: no progress lines around a moment of the reshard")
    (t0, e0), (t1, e1) = before[-1], after[0]
    return e0 if t1 == t0 else e0 + (e1 - e0) * (t - t0) / (t1 - t0)
def rate(a, b):
    return (examples_at(b) - examples_at(a)) / (b - a)
request, copy, hold, release, done = (events[k][0] for k in ("request", "copy", "hold", "release", "done"))
if not progress or progress[0][0] >= request:
    sys.exit("reshard_live_bench: no progress line before the reshard's request")
before = rate(max(request - 10, progress[0][0]), request)  # the 10 s before (less on a short job)
move = rate(copy, release)
after = rate(release, done)
whole = rate(request, done)
finished = events["done"][1]
copied = re.search(r"(\d+) rows copied while training \(([\d.]+) s per million\)", finished)
held = re.search(r"(\d+) rows moved under the hold \(([\d.]+)s, ([\d.]+) s per million\)", finished)
moved_all = re.search(r"(\d+) rows moved under the hold|(\d+) rows moved", finished)
def result_of(path):
    return json.loads([l for l in open(path) if l.startswith('{"command":"cluster"')][-1])
result, base = result_of(out), result_of(base_out)
summary = {
    "rows": rows, "from": frm, "to": to, "cores": int(cores),
    "eps_before": round(before), "eps_during_move": round(move), "move_ratio": round(move / before, 3),
    "eps_release_to_drop": round(after), "release_to_drop_ratio": round(after / before, 3),
    "eps_whole_reshard": round(whole), "whole_ratio": round(whole / before, 3),
    "copy_and_hold_seconds": round(release - copy, 2), "hold_seconds": round(release - hold, 2),
    "reshard_seconds": round(done - request, 2),
    "rows_copied": int(copied.group(1)) if copied else 0,
    "copy_seconds_per_million": float(copied.group(2)) if copied else None,
    "rows_moved_under_hold": int(held.group(1)) if held else None,
    "ok": result.get("ok"), "examples_committed": result.get("examples_committed"), "test_ne": result.get("test_ne"),
    "undisturbed_test_ne": base.get("test_ne"), "ne_ratio": round(result["test_ne"] / base["test_ne"], 4),
}
print(f"reshard {frm} -> {to} shards on {rows} rows (this machine: {cores} cores):")
print(f"  examples/s: {before:.0f} in the {request - max(request - 10, progress[0][0]):.0f} s before; {move:.0f} during the move ({move / before:.0%}: the copy "
      f"while training and the hold, {release - copy:.2f} s); {after:.0f} from the release to the drop ({after / before:.0%}: "
      f"the new shape's snapshot, the drop, {done - release:.2f} s); {whole:.0f} over the whole reshard "
      f"({whole / before:.0%}, {done - request:.2f} s from the request to the drop)")
print(f"  input held {release - hold:.2f} s; {summary['rows_copied']} rows copied while training, "
      f"{summary['rows_moved_under_hold']} moved under the hold")
print(f"  the job: ok {summary['ok']}, {summary['examples_committed']} of {rows} rows committed, test NE "
      f"{summary['test_ne']} (undisturbed: {summary['undisturbed_test_ne']}, x{summary['ne_ratio']})")
print(json.dumps(summary))
if not summary["ok"] or summary["examples_committed"] != rows:
    sys.exit(1)
EOF
