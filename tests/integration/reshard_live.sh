#!/usr/bin/env bash
# A running job's shard count changed with `shadowsync reshard` (docs/durability.md, "Resharding a
# running job"), every service a process of its own on loopback, as docs/cluster.md starts them, the
# shards with storage (--data-dir). The job (2 readers, 2 trainers, s-easgd) starts on 2 shards;
# once a tenth of its rows are committed it grows to 3 by shard 2's registration alone (the
# coordinator's --grow-shards, as a StatefulSet scaled up), then to 4 (asked, then shard 3 started),
# and once that is done and a third are, it shrinks to 3 (shard 3 hands its rows over and leaves);
# then the coordinator is killed and started again with its first command line (--shards 2), and
# keeps the job's 3 shards. The shrink itself is cut short too: once its rows moved, shard 0 is
# paused (SIGSTOP: the switch or the snapshot of the new shape waits for it) and the coordinator
# killed, the switch stored; started again (--shards 2), it keeps 3 shards and ends the reshard. It must end ok with every row
# committed once and test NE within the fault matrix's bound of an undisturbed run of the same job,
# each change logged with the rows it copied while the job trained, those it moved under the hold
# (only the rows changed since their copy) and how long the input was held. Refused with the
# reason, the job going on: a reshard while another is under way, to 0 shards, to the count the job
# has; rolled back, the job going on: a reshard whose new shard never registers (--peer-wait).
# usage: reshard_live.sh SHADOWSYNC_BINARY
#   SS_RESHARD_ROWS      the data's rows (700,000: each change holds the input a few seconds, and
#                        the job must still be training when both are done)
#   SS_RESHARD_NE_BOUND  test NE at most this times the undisturbed run's (1.01)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" reshard
rows=${SS_RESHARD_ROWS:-700000}
ne_bound=${SS_RESHARD_NE_BOUND:-1.01}
"$bin" gen-data --rows "$rows" --test-rows 20000 --files 2 --out data >/dev/null 2>&1
train=$(ls data/train-*.tsv | paste -sd,)

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# job NAME [RESHARD]: runs the job; with RESHARD, the changes of shard count above. Its result line
# in NAME.json, each service's log in NAME.SERVICE.err.
job() {
  local name=$1 reshard=${2:-} cport
  cport=$(port)
  local coord=tcp://127.0.0.1:$cport
  mkdir -p "$name"
  # The coordinator, as it is started again after a kill: the same command line (--shards 2).
  coordinator() {
    "$bin" coordinator --listen "$coord" --shards 2 --readers 2 --train "$train" --test data/test.tsv \
      --snapshot-dir "$name/snapshots" --snapshot-interval 2 --member-timeout 3 --peer-wait 6 --progress-interval 0 --grow-shards \
      --log-level info >>"$name.coordinator.out" 2>>"$name.coordinator.err" &
    coord_pid=$!
  }
  local coord_pid
  coordinator
  shard() { "$bin" shard --index "$1" --coordinator "$coord" --listen tcp://127.0.0.1:0 --data-dir "$name/shard-$1" \
              --log-level info >"$name.shard-$1.out" 2>"$name.shard-$1.err" & }
  shard 0
  local shard0_pid=$!
  shard 1
  for i in 0 1; do
    "$bin" reader --index $i --coordinator "$coord" --listen tcp://127.0.0.1:0 >"$name.reader-$i.out" \
      2>"$name.reader-$i.err" &
  done
  for i in 0 1; do
    "$bin" trainer --coordinator "$coord" --listen tcp://127.0.0.1:0 --threads 1 --log-level info \
      >"$name.trainer-$i.out" 2>"$name.trainer-$i.err" &
  done
  if [[ -n $reshard ]]; then
    committed() { "$bin" status --coordinator "$coord" --timeout 2 2>/dev/null | grep -o '"examples_committed":[0-9]*' |
                    head -1 | cut -d: -f2; }
    wait_for() { local i; for ((i = 0; i < 600; i++)); do (($(committed || echo 0) >= $1)) && return 0; sleep 0.1; done; return 1; }
    ask() { "$bin" reshard --coordinator "$coord" --timeout 5 "$@"; }
    wait_for $((rows / 10)) || fail "$name: the job never reached a tenth of its rows"
    # Refused with the reason: the count it has, zero.
    ask --shards 2 >"$name.same.out" 2>&1 && fail "$name: a reshard to the job's own count was accepted"
    grep -q "the job has 2 shards already" "$name.same.out" || fail "$name: no reason for the same count: $(tail -1 "$name.same.out")"
    ask --shards 0 >"$name.zero.out" 2>&1 && fail "$name: a reshard to 0 shards was accepted"
    # Rolled back: shard 2 never comes within --peer-wait.
    ask --shards 3 >"$name.lonely.out" 2>&1 || fail "$name: a reshard to 3 was refused: $(tail -1 "$name.lonely.out")"
    ask --shards 4 >"$name.busy.out" 2>&1 && fail "$name: a second reshard while one is under way was accepted"
    grep -q "another change of the shard count is under way" "$name.busy.out" ||
      fail "$name: no reason for the second reshard: $(tail -1 "$name.busy.out")"
    local i
    for ((i = 0; i < 200; i++)); do grep -q "rolled back" "$name.coordinator.err" && break; sleep 0.1; done
    grep -q "resharding 2 -> 3 shards rolled back: shard(s) 2 did not register within --peer-wait" \
      "$name.coordinator.err" || fail "$name: the reshard without its new shard was not rolled back"
    # 2 -> 3: shard 2 started, nothing asked (--grow-shards: as a StatefulSet scaled up).
    shard 2
    for ((i = 0; i < 600; i++)); do grep -q "resharded 2 -> 3 shards in" "$name.coordinator.err" && break; sleep 0.1; done
    grep -q "shard-2 registers beyond the job's 2 shards (--grow-shards): the job grows to 3" "$name.coordinator.err" ||
      fail "$name: shard 2, started beyond the job's count, did not make it grow"
    grep -q "resharded 2 -> 3 shards in" "$name.coordinator.err" || fail "$name: the reshard to 3 did not complete"
    # 3 -> 4: asked, then the new shard started.
    ask --shards 4 >"$name.grow.out" 2>&1 || fail "$name: the reshard to 4 was refused: $(tail -1 "$name.grow.out")"
    shard 3
    for ((i = 0; i < 600; i++)); do grep -q "resharded 3 -> 4 shards" "$name.coordinator.err" && break; sleep 0.1; done
    wait_for $((rows / 3)) || fail "$name: the job never reached a third of its rows"
    grep -q "resharded 3 -> 4 shards in" "$name.coordinator.err" || fail "$name: the reshard to 4 did not complete"
    # 4 -> 3: shard 3 hands its rows over and leaves. Once the rows moved, shard 0 is paused: the
    # members cannot all switch, or the snapshot of the new shape cannot be taken; the coordinator is
    # killed with the switch stored, and started again (--shards 2): it keeps 3 and ends the reshard.
    ask --shards 3 >"$name.shrink.out" 2>&1 || fail "$name: the reshard to 3 was refused: $(tail -1 "$name.shrink.out")"
    for ((i = 0; i < 3000; i++)); do
      grep -q "resharding 4 -> 3 shards: .* now the members switch to the new count" "$name.coordinator.err" && break
      sleep 0.01
    done
    kill -STOP "$shard0_pid"
    for ((i = 0; i < 100; i++)); do [[ -f $name/snapshots/RESHARD ]] && break; sleep 0.05; done
    [[ -f $name/snapshots/RESHARD ]] || fail "$name: no switch stored in $name/snapshots/RESHARD once the rows moved"
    kill -9 "$coord_pid"
    wait "$coord_pid" 2>/dev/null || true
    kill -CONT "$shard0_pid"
    coordinator
    for ((i = 0; i < 600; i++)); do grep -q "resharded 4 -> 3 shards in" "$name.coordinator.err" && break; sleep 0.1; done
    grep -q "stopped while it switched from 4 to 3 shards (after snapshot [0-9]*): it keeps 3 shards" \
      "$name.coordinator.err" || fail "$name: the coordinator started again after the switch did not keep 3 shards"
    # The coordinator killed and started again from its command line (--shards 2, as a ConfigMap
    # that was not changed): the job keeps its 3 shards.
    kill -9 "$coord_pid"
    wait "$coord_pid" 2>/dev/null || true
    coordinator
  fi
  local rc=0
  wait "$coord_pid" || rc=$?
  ((rc == 0)) || fail "$name: the coordinator exited $rc: $(tail -3 "$name.coordinator.err")"
  grep -h '^{"command":"cluster"' "$name.coordinator.out" "$name.coordinator.err" | tail -1 >"$name.json" || true
  wait || true
}

job base
job live yes
[[ "$(field live.json ok)" == true ]] || fail "the resharded job did not end ok: $(text_field live.json error)"
[[ "$(field live.json examples_committed)" == "$rows" ]] ||
  fail "the resharded job committed $(field live.json examples_committed) examples, expected exactly $rows"
grep -q "resharded 4 -> 3 shards in" live.coordinator.err || fail "the reshard to 3 did not complete"
# Both changes copied the rows while the job trained, and moved under the hold only those changed
# since (shards without a memory budget, row TTL or full table's evictions).
for change in "2 -> 3" "3 -> 4" "4 -> 3"; do
  grep -q "resharding $change shards: [0-9]* rows (.*) copied in .* while the job trained" live.coordinator.err ||
    fail "resharding $change shards copied no rows while the job trained: $(grep -h "no copy while" live.coordinator.err | head -1)"
done
grep -q "input no longer held" live.reader-0.err || fail "reader-0 never saw its input released"
grep -q "was resharded from 2 to 3 shards while it ran (snapshot [0-9]*): it keeps 3 shards" \
  live.coordinator.err || fail "the coordinator started again with --shards 2 did not keep the job's 3 shards"
base_ne=$(field base.json test_ne)
live_ne=$(field live.json test_ne)
awk -v a="$live_ne" -v b="$base_ne" -v x="$ne_bound" 'BEGIN { exit !(a <= b * x) }' ||
  fail "test NE $live_ne is more than x$ne_bound the undisturbed run's $base_ne"
echo "reshard_live: undisturbed NE $base_ne, resharded 2 -> 3 -> 4 -> 3 NE $live_ne"
grep -h "resharded\|input settled\|input is released\|copied in\|stopped while it switched" live.coordinator.err | sed 's/^/  /'
((failures == 0)) || exit 1
echo "reshard_live: ok"
