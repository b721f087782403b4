#!/usr/bin/env bash
# Fault injection with real processes: `shadowsync local --processes` runs the cluster on loopback
# and restarts any service that dies; this script kills services while the job trains and checks
# the guarantees of docs/durability.md:
#   - the job finishes ok, and every good row of the data is committed exactly once
#     (examples_committed == rows), never lost;
#   - replays (example-trainings beyond the rows) stay bounded;
#   - test NE at most 1% (SS_FAULT_NE_TOLERANCE) above the worse of two undisturbed runs' (runs
#     differ by themselves: Hogwild and background sync depend on timing; at 400,000 rows four
#     undisturbed runs here spanned 1.0%, so one run is no baseline);
#   - a corrupt snapshot and a missing shard checkpoint are detected and the previous one used,
#     with a clear message.
# Kill points are random fractions of the job (seed printed; SS_FAULT_SEED reproduces a run).
#
# usage: fault_injection.sh SHADOWSYNC_BINARY [WORK_DIR]
set -euo pipefail

bin=$(readlink -f "$1")
work=${2:-$(mktemp -d /tmp/ss-fault.XXXXXX)}
mkdir -p "$work"
cd "$work"
seed=${SS_FAULT_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$seed
rows=${SS_FAULT_ROWS:-1000000}
tolerance=${SS_FAULT_NE_TOLERANCE:-0.01}
tolerance_pct=$(awk -v t="$tolerance" 'BEGIN { print t * 100 }')
echo "fault injection in $work (seed $seed, $rows rows)"

"$bin" gen-data --rows $rows --test-rows 50000 --out data >/dev/null 2>&1

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

job_flags=(--processes --trainers 2 --shards 2 --readers 1 --train data/train.tsv --test data/test.tsv
  --sync s-easgd --snapshot-interval 1.5 --member-timeout 3 --heartbeat-interval 0.5 --request-timeout 2
  --restart-delay 0.5 --log-level info)

json_field() {  # json_field FILE NAME -> the value of a top-level number/bool field
  grep -o "\"$2\":[^,}]*" "$1" | head -1 | cut -d: -f2
}

committed_now() {  # examples committed so far, as the coordinator reports it ("" while it is down)
  local ep
  ep=$(cat "$1/coordinator.endpoint" 2>/dev/null) || return 0
  "$bin" status --coordinator "$ep" --timeout 1 2>/dev/null | grep -o '"examples_committed":[0-9]*' | head -1 |
    cut -d: -f2 || true
}

wait_fraction() {  # wait_fraction RUN_DIR FRACTION: until that share of the rows is committed
  local target deadline c
  target=$(awk -v r=$rows -v f="$2" 'BEGIN { printf "%d", r * f }')
  deadline=$((SECONDS + 240))
  while ((SECONDS < deadline)); do
    c=$(committed_now "$1")
    if [[ -n "$c" ]] && ((c >= target)); then return 0; fi
    sleep 0.3
  done
  echo "timed out waiting for $2 of the job"
  return 1
}

random_fraction() {  # a kill point between $1 and $2 (fractions)
  awk -v lo="$1" -v hi="$2" -v r=$RANDOM 'BEGIN { printf "%.3f", lo + (hi - lo) * r / 32767 }'
}

start_job() {  # start_job NAME: runs the cluster in the background with run dir NAME
  rm -rf "$1"
  "$bin" local "${job_flags[@]}" --run-dir "$1" --state-dir "$1/state" --keep-state >"$1.out" 2>"$1.err" &
  echo $! >"$1.local.pid"
  local deadline=$((SECONDS + 30))
  until [[ -s "$1/coordinator.endpoint" ]] || ((SECONDS > deadline)); do sleep 0.1; done
}

finish_job() {  # finish_job NAME: waits for the cluster and leaves its JSON line in NAME.json
  local rc=0
  wait "$(cat "$1.local.pid")" || rc=$?
  tail -1 "$1.out" >"$1.json"
  echo "  $1: exit $rc, $(grep -o '"ok":[a-z]*' "$1.json"), committed $(json_field "$1.json" examples_committed)," \
    "trainings $(json_field "$1.json" examples), test NE $(json_field "$1.json" test_ne)"
  return $rc
}

kill_role() {  # kill_role RUN_DIR ROLE SIGNAL
  local pid
  pid=$(cat "$1/$2.pid")
  echo "  $(date +%T) kill -$3 $2 (pid $pid)"
  kill "-$3" "$pid" 2>/dev/null || true
}

check_counts() {  # check_counts NAME MAX_EXTRA_TRAININGS_FRACTION
  local ok committed trainings ne
  ok=$(json_field "$1.json" ok)
  committed=$(json_field "$1.json" examples_committed)
  trainings=$(json_field "$1.json" examples)
  ne=$(json_field "$1.json" test_ne)
  [[ "$ok" == "true" ]] || fail "$1: the job did not finish ok: $(json_field "$1.json" error)"
  [[ "$committed" == "$rows" ]] || fail "$1: $committed examples committed, expected exactly $rows"
  # Trainings are what trainers reported, best effort: replays add some; a SIGKILLed trainer's
  # last heartbeat of reports, and a departed trainer's reports after the last snapshot when the
  # coordinator restarts, are lost (their batches stay committed). Only bounded above here.
  awk -v t="${trainings:-0}" -v r=$rows -v x="$2" 'BEGIN { exit !(t > 0 && t <= r * (1 + x)) }' ||
    fail "$1: $trainings trainings reported: more than $rows x (1 + $2)"
  # Quality must hold: NE at most $tolerance above the worse undisturbed run's. (Replayed batches
  # are extra training, so a disturbed run can come out better; that is not a failure.)
  awk -v a="${ne:-9}" -v b="$base_ne" -v t="$tolerance" 'BEGIN { exit !(a <= b * (1 + t)) }' ||
    fail "$1: test NE $ne is more than $tolerance_pct% above the worse undisturbed run's $base_ne"
  echo "  $1: NE $(awk -v a="${ne:-9}" -v b="$base_ne" 'BEGIN { printf "%+.2f%%", (a / b - 1) * 100 }') vs the worse undisturbed run"

}

echo "1. two undisturbed runs"
for name in base base2; do
  start_job $name
  finish_job $name || fail "the undisturbed run $name failed"
  [[ "$(json_field $name.json examples_committed)" == "$rows" ]] || fail "$name: not every row committed"
done
ne1=$(json_field base.json test_ne)
ne2=$(json_field base2.json test_ne)
base_ne=$(awk -v a="$ne1" -v b="$ne2" 'BEGIN { print (a > b ? a : b) }')
echo "  undisturbed runs $(awk -v a="$ne1" -v b="$ne2" 'BEGIN { printf "%.3f%%", (a > b ? a / b - 1 : b / a - 1) * 100 }')" \
  "apart; the bound is the worse one's NE + $tolerance_pct%"

for sig in KILL TERM; do
  name=sig$sig
  echo "2. SIG$sig to each kind of service in turn, at random points"
  start_job $name
  at=0.1
  for role in shard-1 trainer-0 reader-0 coordinator shard-0; do
    at=$(random_fraction "$at" "$(awk -v a="$at" 'BEGIN { print a + 0.15 }')")
    wait_fraction $name "$at" || break
    kill_role $name $role $sig
    sleep 1
  done
  finish_job $name || true
  restarts=$(grep -c "starting it again" $name.err || true)
  [[ "$restarts" -ge 5 ]] || fail "$name: expected 5 restarts, the log shows $restarts"
  check_counts $name 0.6
done

echo "3. full stop (every process killed), a corrupt newest snapshot and a missing shard checkpoint, then resume"
start_job full
wait_fraction full "$(random_fraction 0.4 0.7)" || true
# Let at least three snapshots complete, then kill everything at once (a power cut).
deadline=$((SECONDS + 60))
while (($(ls full/state/snapshots/snapshot-*/MANIFEST 2>/dev/null | wc -l) < 3)) && ((SECONDS < deadline)); do sleep 0.2; done
kill -9 "$(cat full.local.pid)" $(cat full/*.pid) 2>/dev/null || true
wait "$(cat full.local.pid)" 2>/dev/null || true
sleep 0.5
# The cut may fall while a snapshot is being written: one without its MANIFEST is half-made, and
# the resume removes it (checked below); the damage goes to the newest complete ones.
half_made=$(comm -23 <(ls -d full/state/snapshots/snapshot-* | sort) \
  <(ls full/state/snapshots/snapshot-*/MANIFEST | xargs -n1 dirname | sort) | wc -l)
mapfile -t snaps < <(ls full/state/snapshots/snapshot-*/MANIFEST | xargs -n1 dirname | sort)
newest=${snaps[-1]}
previous=${snaps[-2]}
newest_id=$((10#${newest##*-}))
previous_id=$((10#${previous##*-}))
sst=$(ls full/state/shard-1/checkpoints/$previous_id/*.sst | head -1)
echo "  corrupting $newest/dense.bin; deleting $sst from shard-1's checkpoint $previous_id"
printf '\xff\xff\xff\xff' | dd of="$newest/dense.bin" bs=1 seek=100 conv=notrunc status=none
rm -f "$sst"
mv full full.killed
mkdir -p full && mv full.killed/state full/ && rm -rf full.killed
"$bin" local "${job_flags[@]}" --run-dir full --state-dir full/state --keep-state >full.out 2>full.err &
echo $! >full.local.pid
finish_job full || true
grep -q "snapshot $newest_id .*corrupt.*using snapshot $previous_id\|snapshot $newest_id.*; using snapshot $previous_id" full.err ||
  fail "full: no message that snapshot $newest_id is corrupt and $previous_id is used"
if ((half_made > 0)); then
  echo "  the cut fell while a snapshot was being written ($half_made without a MANIFEST)"
  grep -q "removed $half_made half-made snapshot" full.err || fail "full: no message that the half-made snapshot was removed"
fi
grep -q "shard-1: checkpoint $previous_id is unusable" full.err ||
  fail "full: no message that shard-1's checkpoint $previous_id is damaged"
[[ "$(json_field full.json resumed_from_snapshot)" == "$previous_id" ]] ||
  fail "full: resumed from snapshot $(json_field full.json resumed_from_snapshot), expected $previous_id"
check_counts full 0.8
grep -h "corrupt\|unusable" full.err | head -4 | sed 's/^/  log: /'

if ((failures > 0)); then
  echo "fault injection: $failures check(s) failed (seed $seed; logs in $work)"
  exit 1
fi
echo "fault injection: every check passed (seed $seed)"
[[ -n "${2:-}" ]] || rm -rf "$work"
