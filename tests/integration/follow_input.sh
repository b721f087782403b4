#!/usr/bin/env bash
# Following input with real processes (docs/online.md):
#  1. `local --processes --follow` on a file this script appends generated rows to in pieces: the
#     file rotated by rename while the writer still appends to the old one, reader-0 killed
#     mid-follow, the coordinator and trainer-1 killed, reader-0 killed again with the file rotated
#     while it is down; then `shadowsync stop`.
#  2. `local --follow` in one process on a directory that gains files (one named out of order,
#     refused), then SIGTERM to local.
# Each must end ok (exit 0) with the job's committed examples equal to the rows appended (every
# row trained once), and its result saying why the input ended.
#
# usage: follow_input.sh SHADOWSYNC_BINARY   (SS_FOLLOW_ROWS: rows, default 40000; SS_KEEP: keep the work dir)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" follow
rows=${SS_FOLLOW_ROWS:-40000}
deadline_s=${SS_FOLLOW_DEADLINE:-240}
"$bin" gen-data --rows "$rows" --test-rows 5000 --out data >/dev/null 2>&1
split -n l/10 -d -a 1 data/train.tsv piece.  # piece.0 .. piece.9, whole lines each
lines() { wc -l <"$1"; }

# committed EP: the job's examples_committed, or nothing while the coordinator does not answer.
committed() {
  "$bin" status --coordinator "$1" --timeout 1 2>/dev/null | grep -o '"examples_committed":[0-9]*' | head -1 |
    cut -d: -f2 || true
}
# wait_committed EP N WHAT: until N examples are committed (a failure after the deadline).
wait_committed() {
  local until=$((SECONDS + deadline_s)) c=""
  while ((SECONDS < until)); do
    c=$(committed "$1")
    [[ -n "$c" ]] && ((c >= $2)) && return 0
    sleep 0.2
  done
  fail "$3: $c examples committed after ${deadline_s}s, not $2"
}
joins() { grep -c "reader-0: registered with the coordinator" "$1" 2>/dev/null || true; }
wait_rejoin() {  # LOG N: reader-0 registered N times
  local until=$((SECONDS + deadline_s))
  until (($(joins "$1") >= $2)) || ((SECONDS > until)); do sleep 0.1; done
  (($(joins "$1") >= $2)) || fail "reader-0 did not register again ($(joins "$1") registrations)"
}
# check_result OUT RC EXPECTED_ROWS WHY: the job's result line.
check_result() {
  local out=$1 rc=$2 want=$3 why=$4
  tail -1 "$out" >"$out.json"
  ((rc == 0)) || fail "$out: exit status $rc, not 0"
  [[ "$(field "$out.json" ok)" == true ]] || fail "$out: not ok: $(text_field "$out.json" error)"
  [[ "$(field "$out.json" examples_committed)" == "$want" ]] ||
    fail "$out: $(field "$out.json" examples_committed) examples committed, $want rows appended"
  grep -q "\"follow_ended\":\"$why" "$out.json" || fail "$out: follow_ended is $(text_field "$out.json" follow_ended)"
  echo "  $out: exit $rc, ok $(field "$out.json" ok), committed $(field "$out.json" examples_committed) of $want," \
    "read $(field "$out.json" examples_read), follow_ended $(text_field "$out.json" follow_ended)"
}

echo "1. a file appended to, rotated, its reader killed (also during a rotation), the coordinator and a trainer killed; shadowsync stop"
: >stream.tsv
"$bin" local --processes --follow --train stream.tsv --trainers 2 --test data/test.tsv --run-dir run1 \
  --state-dir run1/state --snapshot-interval 1 --member-timeout 3 --heartbeat-interval 0.5 --request-timeout 2 \
  --restart-delay 0.5 --log-level info >run1.out 2>run1.err &
job=$!
until [[ -s run1/coordinator.endpoint ]] || ! kill -0 $job 2>/dev/null; do sleep 0.1; done
ep=$(cat run1/coordinator.endpoint)
appended=0
append() {  # PIECE [FILE]
  cat "$1" >>"${2:-stream.tsv}"
  appended=$((appended + $(lines "$1")))
}
append piece.0
append piece.1
wait_committed "$ep" "$appended" "the first pieces"
# reader-0 killed mid-follow: the next piece comes while it is down.
joined=$(joins run1.err)
kill -9 "$(cat run1/reader-0.pid)"
append piece.2
wait_rejoin run1.err $((joined + 1))
wait_committed "$ep" "$appended" "after reader-0's restart"
# Rotation: renamed away, the writer still appends to the old file; a new file takes the name.
mv stream.tsv stream.tsv.1
append piece.3 stream.tsv.1
append piece.4
wait_committed "$ep" "$appended" "after the rotation"
# The coordinator and a trainer killed while the input grows: the job goes on, each row once.
kill -9 "$(cat run1/coordinator.pid)" "$(cat run1/trainer-1.pid)"
append piece.5
wait_committed "$ep" "$appended" "after the coordinator and trainer-1 were killed"
# Rotation while reader-0 is down (stopped first, so that the last rows written before the
# rotation are not read yet): it must find its file among the rotated ones.
joined=$(joins run1.err)
kill -STOP "$(cat run1/reader-0.pid)"
append piece.6
kill -9 "$(cat run1/reader-0.pid)"
mv stream.tsv stream.tsv.2
append piece.7 stream.tsv.2
append piece.8
wait_rejoin run1.err $((joined + 1))
wait_committed "$ep" "$appended" "after a rotation while reader-0 was down"
append piece.9
wait_committed "$ep" "$appended" "the last piece"
"$bin" stop --coordinator "$ep" --reason "the test is done" >stop.out 2>&1 || fail "shadowsync stop: $(cat stop.out)"
rc=0
wait $job || rc=$?
check_result run1.out $rc "$appended" "stopped: the test is done"
((appended == rows)) || fail "appended $appended rows, generated $rows"
grep -q "stream.tsv was rotated: its previous file was read to its end" run1.err || fail "no rotation in the log"
grep -q "rotated while no reader ran: resuming in its previous file, now .*stream.tsv.2" run1.err ||
  fail "reader-0 did not resume in the rotated file"
grep -q "follow_tails_lost\|rows after that position in it are lost" run1.err && fail "a tail was lost"

echo "2. a directory that gains files, one named out of order; SIGTERM to local (in one process)"
mkdir stream.d
port=$((20000 + RANDOM % 20000))
"$bin" local --follow --train stream.d --follow-pattern 'part-*.tsv' --trainers 2 --ops-listen "127.0.0.1:$port" \
  --progress-interval 1 --log-level info >run2.out 2>run2.err &
job=$!
api_committed() {
  curl -s --max-time 1 "http://127.0.0.1:$port/api/status" 2>/dev/null | grep -o '"examples_committed":[0-9]*' |
    head -1 | cut -d: -f2 || true
}
appended=0
for i in 1 2 3; do
  cp "piece.$i" "stream.d/.part-$i.tmp" && mv "stream.d/.part-$i.tmp" "stream.d/part-$i.tsv"  # written, then renamed in
  appended=$((appended + $(lines "piece.$i")))
done
until=$((SECONDS + deadline_s))
until c=$(api_committed) && [[ -n "$c" ]] && ((c >= appended)) || ((SECONDS > until)); do sleep 0.2; done
cp piece.0 stream.d/part-0.tsv  # sorts before part-3.tsv, which is being read: refused, never read
cp piece.4 stream.d/part-4.tsv
appended=$((appended + $(lines piece.4)))
until c=$(api_committed) && [[ -n "$c" ]] && ((c >= appended)) || ((SECONDS > until)); do sleep 0.2; done
kill -TERM $job
rc=0
wait $job || rc=$?
check_result run2.out $rc "$appended" "local: signal 15"
grep -q "part-0.tsv appeared after .*part-3.tsv was reached, and its name sorts before that one: it is not read" \
  run2.err || fail "the out-of-order file was not refused in the log"

((failures == 0)) || {
  echo "follow_input: $failures failure(s); logs in $work (SS_KEEP=1 keeps them)"
  exit 1
}
echo "follow_input: every check passed"
