#!/usr/bin/env bash
# A job resumed on another shard count (docs/durability.md, "Resuming on another shard count"),
# with real processes and RocksDB. One trainer, one worker, no lookahead, no sync: training is
# deterministic, so a job resumed from a snapshot on another shard count must end with the model an
# unchanged resume of the same snapshot ends with, to the last printed digit. That holds only when
# every row is on its new owner once, with its values and optimizer state:
#   - 2 -> 3 shards in one process, 2 -> 1 as processes (shard-1 hands its rows over and leaves,
#     and `local` does not start it again), 2 -> 3 with a memory budget (rows beyond it in storage)
#     and CURVE keys with roles (a shard pulls its rows from the others with a member's key);
#   - a shard killed -9 while rows move, and the coordinator killed -9 while rows move: the move
#     starts over, and the model is the same;
#   - the first snapshot after a change of count resumes only on its own count, with the reason;
#     a resume whose shards do not all come fails after --peer-wait, naming them.
# usage: reshape_resume.sh SHADOWSYNC_BINARY   (SS_RESHAPE_ROWS: the data's rows, 150,000; fewer under ASan)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" reshape
"$bin" gen-data --rows "${SS_RESHAPE_ROWS:-150000}" --test-rows 10000 --out data >/dev/null 2>&1
common=(--trainers 1 --threads 1 --lookahead 0 --readers 1 --sync none --train data/train.tsv --test data/test.tsv
        --progress-interval 0 --snapshot-interval 1 --restart-delay 0.2)
metrics=(test_examples test_logloss test_ne test_auc test_calibration examples_committed export_rows)

# The job on 2 shards, killed -9 (in one process: every service at once) once its third snapshot is
# written: rows trained, with optimizer state, move.
"$bin" local "${common[@]}" --shards 2 --state-dir base >base.out 2>base.err &
pid=$!
for ((i = 0; i < 1200; i++)); do
  (($(ls base/snapshots/snapshot-*/MANIFEST 2>/dev/null | wc -l) >= 3)) && break
  sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null || true
[[ -e base/snapshots/RESULT.json ]] && fail "the job ended before it was killed: nothing to resume"
ls base/snapshots/snapshot-*/MANIFEST >/dev/null 2>&1 || { fail "no snapshot was written"; exit 1; }
committed=$(grep -h "^reader.0 = " base/snapshots/snapshot-*/MANIFEST | tail -1 | awk '{print $7}')
((${committed:-0} > 0)) || fail "the snapshot resumed from holds no trained examples: the test would move untrained rows"

# Moving the rows needs the shards of both counts: a coordinator resuming on 3 whose shards never
# come fails after --peer-wait, naming them, its snapshot untouched.
cp -a base alone.state
if timeout 120 "$bin" coordinator --listen tcp://127.0.0.1:0 --snapshot-dir alone.state/snapshots --shards 3 \
    --readers 1 --sync none --lookahead 0 --train data/train.tsv --test data/test.tsv --peer-wait 2 \
    >alone.out 2>alone.err; then
  fail "a coordinator resuming on 3 shards without any ended ok"
fi
grep -q "resuming on 2 -> 3 shards: shard(s) 0, 1, 2 did not register within --peer-wait 2 s" alone.out alone.err ||
  fail "the coordinator without shards does not say which it waited for: $(tail -2 alone.err)"
diff -r base/snapshots alone.state/snapshots >/dev/null || fail "the coordinator without shards changed the snapshots"

# resume NAME SHARDS [FLAGS...]: resumes a copy of the snapshot with SHARDS shards; its result in
# NAME.json, its log in NAME.err.
resume() {
  local name=$1 shards=$2
  shift 2
  cp -a base "$name.state"
  "$bin" local "${common[@]}" --shards "$shards" --state-dir "$name.state" --export "$name.ssm" --log-level info "$@" \
    >"$name.out" 2>"$name.err" || fail "$name: the resumed job failed: $(tail -3 "$name.err")"
  tail -1 "$name.out" >"$name.json"
}
# moved NAME FROM TO: the log says the rows moved, and the shards' kept rows added up (else the job fails).
moved() {
  grep -q "resumed on $2 -> $3 shards in .*rows moved" "$1.err" || fail "$1: no completed move from $2 to $3 shards"
}

resume same 2
moved_log=$(grep -c "rows moved" same.err || true)
((moved_log == 0)) || fail "a resume on the same shard count moved rows"

resume grow 3 --snapshot-retain 1000  # the first snapshot of 3 shards is kept for the last check
moved grow 2 3
same_fields same.json "resumed on 2 shards" grow.json "resumed on 3" "${metrics[@]}"
predict_reproduces grow.json grow.ssm

resume shrink 1 --processes
moved shrink 2 1
same_fields same.json "resumed on 2 shards" shrink.json "resumed on 1, as processes" "${metrics[@]}"
grep -q "shard-1: the job has 1 shards now: .*leaves the job" shrink.err || fail "shard-1 did not say it leaves the job"
grep -q "local: shard-1 is beyond the job.s 1 shard(s): not started again" shrink.err || fail "local did not see shard-1 leave"
grep -q "local: shard-1 .* starting it again" shrink.err && fail "local started shard-1 again after it left"

resume tiered 3 --processes --memory-budget-mb 1 --curve-dir tiered.keys
moved tiered 2 3
same_fields same.json "resumed on 2 shards" tiered.json "resumed on 3 with a 1 MB budget and CURVE" "${metrics[@]}"

# kill_mid_move NAME WHO: resumes on 3 shards as processes, pages of 16 rows (a move of seconds),
# and kills WHO (a service's name) -9 once rows move; `local` starts it again.
kill_mid_move() {
  local name=$1 who=$2
  cp -a base "$name.state"
  "$bin" local "${common[@]}" --shards 3 --state-dir "$name.state" --export "$name.ssm" --log-level info --processes \
    --move-page-rows 16 --run-dir "$name.run" >"$name.out" 2>"$name.err" &
  local job=$! victim=""
  for ((i = 0; i < 1200; i++)); do
    grep -q "the shards take the rows they now own" "$name.err" 2>/dev/null && break
    sleep 0.05
  done
  sleep 0.3
  grep -q "resumed on 2 -> 3 shards" "$name.err" && fail "$name: the move was over before $who could be killed"
  if [[ $who == coordinator ]]; then
    victim=$(pgrep -f "shadowsync coordinator .*$name.state" | head -1 || true)
  else
    victim=$(pgrep -f "shadowsync shard .*$name.state/$who" | head -1 || true)
  fi
  [[ -n "$victim" ]] && kill -9 "$victim" || fail "$name: no process of $who to kill"
  wait $job || fail "$name: the resumed job failed: $(tail -3 "$name.err")"
  tail -1 "$name.out" >"$name.json"
  moved "$name" 2 3
  same_fields same.json "resumed on 2 shards" "$name.json" "resumed on 3, $who killed while rows moved" "${metrics[@]}"
}
kill_mid_move shard_killed shard-2
grep -q "shard 2 restarted or left during moving rows: that stage starts over" shard_killed.err ||
  grep -q "moving rows failed" shard_killed.err || fail "shard_killed: the coordinator did not start the move over"
kill_mid_move coordinator_killed coordinator
(($(grep -c "the shards take the rows they now own" coordinator_killed.err) >= 2)) ||
  fail "coordinator_killed: the restarted coordinator did not move the rows again"

# The first snapshot of the new count resumes on its own count only: its shards' checkpoints still
# hold the rows that moved away, which a resume on that count drops first.
cp -a grow.state bad.state
rm -f bad.state/snapshots/RESULT.json
first=$(grep -l "^reshaped_from = 2" bad.state/snapshots/snapshot-*/MANIFEST | head -1 || true)
if [[ -z "$first" ]]; then
  fail "no snapshot of grow says reshaped_from = 2"
else
  for m in bad.state/snapshots/snapshot-*/MANIFEST; do
    [[ "$m" > "$first" ]] && rm -rf "$(dirname "$m")"
  done
  if "$bin" local "${common[@]}" --shards 2 --state-dir bad.state >bad.out 2>bad.err; then
    fail "a resume of the first snapshot of 3 shards on 2 was not refused"
  fi
  grep -q "it is the first snapshot after the job went from 2 to 3 shards; resume it with --shards 3" bad.out bad.err ||
    fail "the refusal does not say why: $(tail -2 bad.err)"
fi

if ((failures > 0)); then
  echo "reshape_resume: $failures failure(s); work dir $work"
  exit 1
fi
echo "reshape_resume: ok (2 -> 3, 2 -> 1 as processes, 2 -> 3 with a memory budget and CURVE, a shard and the coordinator" \
     "killed while rows moved: the same model as an unchanged resume, test NE $(field same.json test_ne))"
