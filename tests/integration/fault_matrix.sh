#!/usr/bin/env bash
# The fault matrix: a service of a `local --processes` cluster (or two at once) killed (SIGKILL,
# or KILL5: five times in a row), stopped (SIGTERM) or paused (SIGSTOP, SIGCONT later) at a chosen
# phase of a small job, one case per run, each under a hard deadline. Every such case must end ok
# with every row committed once, test NE at most 1% above the worse of two undisturbed runs' of
# the same algorithm (3% for a shard killed outright; a paused coordinator or sync server, which
# holds back its slice of the dense vector while paused, no worse than an unsynchronized run), and
# what the case names on top (e.g. syncing resumed). Storage and input damage, where the job must fail with the reason and a result line
# (or, for NODISK, finish and say so):
#   CORRUPT  a shard's RocksDB CURRENT overwritten, then SIGKILL (it must restore a checkpoint)
#   WIPE     a shard's data directory deleted, then SIGKILL
#   FOREIGN  a shard's data directory replaced by another job's, then SIGKILL
#   NOCKPT   a shard's checkpoints deleted before a resume (its live rows must serve)
#   FOREIGN at resume: the snapshots replaced by another job's before the resume
#   DELETE   a reader's training file deleted, then SIGKILL
#   CHANGE   a reader's training file rewritten with other rows of the same size, then SIGKILL
#   NODISK   the snapshot directory made unwritable
# fault_injection.sh covers kills while training on a larger job; this script covers the cases
# one at a time.
#
# usage: fault_matrix.sh SHADOWSYNC_BINARY [WORK_DIR]
#   SS_MATRIX_CASES="sync-1:KILL:startup shard-0+coordinator:KILL:training trainer-1:KILL:draining:nosync ..."
#   runs only those cases (SERVICE[+SERVICE]:SIGNAL:PHASE[:VARIANT], see run_case);
#   SS_MATRIX_CASES=ci (the default: the plain suite and CI): each phase once with every service
#   kind and signal among them (cover_product), each kind of damage and each variant once, and the
#   regressions whose paths nothing else in the set takes; 23 cases (see special_ci).
#   SS_MATRIX_CASES=wide: cover_product, every special, reshard and regression case and four online
#   cases; 61 cases, about 16 minutes on the 2-vCPU VM (CI's set until 2026-12-01).
#   SS_MATRIX_CASES=pairs: every pair of service, signal and phase (pairwise_product), the special
#   cases, the online cases and the regressions; 80 cases (about 23 minutes: too long for CI).
#   SS_MATRIX_CASES=full: the whole cross product (full_product) and the special cases.
#   SS_MATRIX_CASES=online: only the cases of a following, publishing job (variant online).
#   SS_MATRIX_CASES=reshard: only the cases of a live reshard (variants reshard, tiered, shrink).
#   SS_MATRIX_ROWS (default 150000): rows of the training file.
#   SS_MATRIX_NE_BOUND (default none): the least NE bound of every case (sanitized runs, whose
#   compute slows 10x while sync and restarts do not, spread more; the plain suite holds each
#   case's own bound).
set -euo pipefail
# fail and check_publications (its field is the matrix's own below: the first value, not the last).
source "$(dirname "$0")/lib.sh"

bin=$(readlink -f "$1")
work=${2:-$(mktemp -d /tmp/ss-matrix.XXXXXX)}
mkdir -p "$work"
cd "$work"
trap 'pkill -P $$ 2>/dev/null || true' EXIT
rows=${SS_MATRIX_ROWS:-150000}
"$bin" gen-data --rows "$rows" --test-rows 30000 --out data >/dev/null 2>&1

field() { grep -o "\"$2\":[^,}]*" "$1" | head -1 | cut -d: -f2 || true; }

job_flags=(--processes --trainers 2 --readers 1 --sync-servers 2 --test data/test.tsv --member-timeout 3 --heartbeat-interval 0.5 --request-timeout 2
  --restart-delay 0.5 --snapshot-interval 1 --log-level info)

# joined_mark SERVICE: the log line that says SERVICE (re)joined the job: a member's registration,
# the coordinator's coming up.
joined_mark() {
  if [[ $1 == coordinator ]]; then echo "coordinator: up at"; else echo "${1/sync-/sync-server-}: registered with the coordinator"; fi
}
# joins NAME SERVICE: how often SERVICE joined the job of case NAME so far.
joins() { grep -c "$(joined_mark "$2")" "$1.err" 2>/dev/null || true; }

# run_case NAME SERVICE SIGNAL PHASE [VARIANT]: runs the job, delivers SIGNAL to SERVICE at PHASE,
# waits for the job under a deadline; leaves the JSON line in NAME.json and the log in NAME.err.
# SERVICE may name two services, a+b: both get the signal at once. VARIANT changes the job: nosync
# (--sync none; the default is s-easgd), shards2 (2 shards; the default is 1), epochs (2 epochs,
# shuffled in windows of 20,000 rows, the test file scored for validation after each), online
# (the input followed, up to --follow-limit-examples, and the model published: check_chain),
# reshard (1 shard, grown to 2 while it runs), tiered (reshard's, with a memory budget), leaving and
# leavingtiered (reshard's, rows given up for good: a row limit and a TTL, without and with a memory
# budget), shrink (2 shards, shrunk to 1 while it runs; the final model exported and scored:
# check_export).
# KILL5 kills the service five times in a row, each time once its successor has registered.
#   startup  - 0.5 s after the service registered with the coordinator (its first seconds); the
#              coordinator: as soon as it is up, while the others register
#   training - once 30% of the rows are committed
#   draining - once the input is exhausted and the job waits for the batches in flight
#   scoring  - once the coordinator scores the test files (ten copies of the test file here, so
#              that scoring lasts long enough to be hit; the metrics are those of one copy)
#   export   - once the final export (--export NAME.ssm, in pages of 100 rows) has begun
#   snapshot - once 30% of the rows are committed, as the next snapshot starts
#   exportreq - once 30% of the rows are committed, as an export asked for by `shadowsync export`
#              (pages of 300 rows) begins; the export must succeed (export_pid, NAME.export)
#   epoch2   - once 30% of the second epoch's rows are committed (variant epochs)
#   validating - once the coordinator scores the first epoch's model, the readers waiting (epochs)
#   copying  - (variant reshard, tiered, leaving*) once 30% of the rows are committed, `shadowsync reshard --shards 2`
#              is asked (local starts shard 1); as the rows are copied while the job trains.
#              (variant shrink) `--shards 1` is asked; once shard 0 took a copy of shard 1's rows
#   holding  - (variant reshard, tiered, shrink) likewise; as the input is held to move the rows changed since
#   resume   - the whole cluster killed at once (a power cut) once 30% of the rows are committed
#              and two snapshots exist, then the job started again on its state directory; SERVICE
#              `all`, or a damage signal (NOCKPT, WIPE, FOREIGN): that damage done before the restart;
#              a KILL, TERM or STOP to one service: delivered once it has registered with the
#              resumed job (while it restores the snapshot's state)
run_case() {
  local name=$1 service=$2 signal=$3 phase=$4 variant=${5:-} deadline pid rc=0 extra=()
  local first=${service%%+*}  # the service whose phase is waited for
  extra=(--sync s-easgd --shards 1)
  [[ $variant == nosync ]] && extra=(--sync none --shards 1)
  [[ $variant == shards2 ]] && extra=(--sync s-easgd --shards 2)
  # reshard: 1 shard, then 2 by `shadowsync reshard` (phases copying, holding).
  [[ $variant == reshard ]] && extra=(--sync s-easgd --shards 1)
  # tiered: reshard's, with a memory budget of 2 MB (a tenth of the rows in RAM): the copy while
  # training reads storage, and rows that leave RAM changed since their copy move under the hold.
  [[ $variant == tiered ]] && extra=(--sync s-easgd --shards 1 --memory-budget-mb 2)
  # leaving: reshard's, the shard's rows given up for good while it trains (at most 2,000 rows a
  # table, and a TTL of 20,000 examples): the copy while training goes on, and the rows given up
  # since their copy go as tombstones under the hold; leavingtiered: with a memory budget too.
  [[ $variant == leaving ]] && extra=(--sync s-easgd --shards 1 --max-rows-per-table 2000 --row-ttl 20000ex)
  [[ $variant == leavingtiered ]] &&
    extra=(--sync s-easgd --shards 1 --memory-budget-mb 2 --max-rows-per-table 2000 --row-ttl 20000ex)
  # shrink: 2 shards, then 1 by `shadowsync reshard`; the final model is exported (check_export).
  [[ $variant == shrink ]] && extra=(--sync s-easgd --shards 2 --export "$work/$name.ssm")
  [[ $variant == epochs ]] && extra=(--sync s-easgd --shards 1 --epochs 2 --shuffle-buffer 20000 --validation data/test.tsv)
  # online: the input followed as it grows (here a file that does not), ended by its limit, and the
  # model published every 0.3 s (beside the run directory: a resume keeps only the state).
  [[ $variant == online ]] && extra=(--sync s-easgd --shards 1 --follow --follow-limit-examples "$rows"
    --publish-dir "$work/$name.pub" --publish-interval 0.3 --publish-retain 100000)
  rm -rf "$name" "$name.ssm" "$name.pub"
  # resume: snapshots every 0.3 s, so that the two the cut waits for exist by 30% of the rows on
  # a fast machine too (at one a second, one CI machine cut these jobs at 70-95% of their rows).
  [[ $phase == resume ]] && extra+=(--snapshot-interval 0.3)
  [[ $phase == export ]] && extra+=(--export "$work/$name.ssm" --export-page-rows 100)
  [[ $phase == exportreq ]] && extra+=(--export-page-rows 300)
  [[ $phase == scoring ]] && extra+=(--test "$(printf 'data/test.tsv,%.0s' $(seq 9))data/test.tsv")
  local train=data/train.tsv
  if [[ $signal == DELETE || $signal == CHANGE ]]; then  # this case spoils its training file: a copy of its own
    train=$name.train.tsv
    cp data/train.tsv "$train"
  fi
  extra+=(--train "$train")
  "$bin" local "${job_flags[@]}" "${extra[@]}" --run-dir "$name" --state-dir "$name/state" \
    >"$name.out" 2>"$name.err" &
  local job=$!
  alive() { kill -0 "$job" 2>/dev/null; }  # the job is still running (a failed one ends the wait)
  if [[ "$service" != none ]]; then
    # Reaching the phase is bounded by the case's deadline too (a slow build takes minutes).
    deadline=$((SECONDS + ${SS_MATRIX_DEADLINE:-240}))
    local reached=false
    case $phase in
      startup)
        # The coordinator: as it comes up, while the members register.
        local pause=0.5
        [[ $first == coordinator ]] && pause=0
        until (($(joins "$name" "$first") > 0)) || ((SECONDS > deadline)) || ! alive; do sleep 0.05; done
        sleep $pause
        (($(joins "$name" "$first") > 0)) && reached=true
        ;;
      training | resume | snapshot | exportreq | epoch2 | copying | holding)
        until [[ -s "$name/coordinator.endpoint" ]] || ((SECONDS > deadline)) || ! alive; do sleep 0.1; done
        local target=$((rows * 3 / 10)) c
        [[ $phase == epoch2 ]] && target=$((rows * 13 / 10))
        while ((SECONDS < deadline)) && alive; do
          c=$("$bin" status --coordinator "$(cat "$name/coordinator.endpoint")" --timeout 1 2>/dev/null |
            grep -o '"examples_committed":[0-9]*' | head -1 | cut -d: -f2 || true)
          if [[ -n "$c" ]] && ((c >= target)); then
            reached=true
            break
          fi
          sleep 0.2
        done
        if $reached && [[ $phase == snapshot ]]; then
          # The next snapshot's start (one a second): the signal lands while it is under way.
          reached=false
          local taken
          taken=$(grep -c "coordinator: snapshot [0-9]* started" "$name.err" || true)
          until (($(grep -c "coordinator: snapshot [0-9]* started" "$name.err" || true) > taken)) ||
            ((SECONDS > deadline)) || ! alive; do sleep 0.01; done
          (($(grep -c "coordinator: snapshot [0-9]* started" "$name.err" || true) > taken)) && reached=true
        fi
        if $reached && [[ $phase == copying || $phase == holding ]]; then
          # The job grows to 2 shards (shrinks to 1); the signal lands as its stage begins.
          reached=false
          local to=2 mark="the rows are copied while the job trains"
          [[ $variant == shrink ]] && to=1 mark="shard-0: took [0-9]* rows"
          "$bin" reshard --coordinator "$(cat "$name/coordinator.endpoint")" --shards $to --timeout 5 \
            >"$name.reshard" 2>&1 || fail "$name: the reshard to $to shard(s) was refused: $(tail -1 "$name.reshard")"
          [[ $phase == holding ]] && mark="the input is held until what was handed out is trained"
          until grep -q "$mark" "$name.err" || ((SECONDS > deadline)) || ! alive; do sleep 0.01; done
          grep -q "$mark" "$name.err" && reached=true
        fi
        if $reached && [[ $phase == exportreq ]]; then
          # An operator's export of the running job's model; the signal lands while it is written.
          reached=false
          "$bin" export --coordinator "$(cat "$name/coordinator.endpoint")" --out "$work/$name.req.ssm" \
            >"$name.export" 2>&1 &
          export_pid=$!
          until grep -q "exporting the model to .* (on request)" "$name.err" || ((SECONDS > deadline)) || ! alive; do
            sleep 0.01
          done
          grep -q "exporting the model to .* (on request)" "$name.err" && reached=true
        fi
        ;;
      export | draining | scoring | validating)
        local mark="writing the model to"
        [[ $phase == draining ]] && mark="job running -> draining"
        [[ $phase == validating ]] && mark="scoring the validation data"
        [[ $phase == scoring ]] && mark="scoring [0-9]* test file"
        until grep -q "$mark" "$name.err" || ((SECONDS > deadline)) || ! alive; do sleep 0.02; done
        grep -q "$mark" "$name.err" && reached=true
        ;;
    esac
    $reached || fail "$name: the job never reached the $phase phase (it ended, or the deadline passed); signalled anyway"
    if [[ $phase == resume ]]; then
      until (($(ls -d "$name"/state/snapshots/snapshot-* 2>/dev/null | wc -l) >= 2)) || ((SECONDS > deadline)); do
        sleep 0.1
      done
      echo "  $name: $(date +%T) every process killed, then $signal for $service, then the job started again"
      kill -9 "$job" $(cat "$name"/*.pid) 2>/dev/null || true
      wait "$job" 2>/dev/null || true
      mv "$name" "$name.killed" && mkdir "$name" && mv "$name.killed/state" "$name/" && rm -rf "$name.killed"
      # NOCKPT: every checkpoint of the shard deleted (its live rows, newer, must serve instead);
      # WIPE: its whole data directory (the job must fail, saying so).
      [[ $signal == NOCKPT ]] && rm -rf "$name/state/$service/checkpoints"/*
      [[ $signal == WIPE ]] && rm -rf "$name/state/$service"
      # FOREIGN: the snapshots replaced by another job's with the same settings (the undisturbed
      # run's, less its stored result: as if it had been cut short): the shards hold this job's
      # rows, not that job's, and must say so rather than clear them.
      if [[ $signal == FOREIGN ]]; then
        rm -rf "$name/state/snapshots" && cp -r base/state/snapshots "$name/state/snapshots"
        rm -f "$name/state/snapshots/RESULT.json"
      fi
      local joined
      joined=$(joins "$name" "$first")
      "$bin" local "${job_flags[@]}" "${extra[@]}" --run-dir "$name" --state-dir "$name/state" \
        >"$name.out" 2>>"$name.err" &
      job=$!
      if [[ $service == all || ! $signal =~ ^(KILL|TERM|STOP)$ ]]; then
        signal=none  # the damage above was the fault
      else
        # A service of the resumed job: signalled once it has registered again (it restores the
        # snapshot's state meanwhile), a moment later.
        deadline=$((SECONDS + ${SS_MATRIX_DEADLINE:-240}))
        until (($(joins "$name" "$first") > joined)) || ((SECONDS > deadline)) || ! alive; do sleep 0.05; done
        (($(joins "$name" "$first") > joined)) || fail "$name: $first did not join the resumed job; signalled anyway"
        sleep 0.3
      fi
    fi
    local pids=() one
    if [[ $signal != none ]]; then
      for one in ${service//+/ }; do pids+=("$(cat "$name/$one.pid")"); done
    fi
    pid=${pids[*]:-}
    local what="SIG$signal"
    [[ $signal == CORRUPT ]] && what="CURRENT overwritten and SIGKILL"
    [[ $signal == DELETE ]] && what="training file deleted and SIGKILL"
    [[ $signal == CHANGE ]] && what="training file rewritten (same size, labels swapped) and SIGKILL"
    [[ $signal == NODISK ]] && what="snapshot directory made unwritable (no signal)"
    [[ $signal == WIPE ]] && what="data directory deleted and SIGKILL"
    [[ $signal == FOREIGN ]] && what="data directory replaced by another job's and SIGKILL"
    [[ $signal == KILL5 ]] && what="SIGKILL five times in a row"
    [[ $signal == none ]] || echo "  $name: $(date +%T) $what to $service (pid $pid) at $phase"
    if [[ $signal == none ]]; then
      :
    elif [[ $signal == STOP ]]; then
      kill -STOP "${pids[@]}" || fail "$name: $service was not running when it was to be paused"
      sleep 4  # past --member-timeout: the coordinator drops it, and it must come back
      kill -CONT "${pids[@]}" 2>/dev/null || true
    elif [[ $signal == KILL5 ]]; then
      # Each successor killed once it has registered and worked a moment.
      local joined kills=0
      for _ in 1 2 3 4 5; do
        joined=$(joins "$name" "$first")
        kill -KILL "$(cat "$name/$first.pid")" 2>/dev/null && kills=$((kills + 1))
        until (($(joins "$name" "$first") > joined)) ||
          ((SECONDS > deadline)) || ! alive; do sleep 0.05; done
        sleep 0.5
      done
      echo "  $name: $(date +%T) $kills kills delivered"
      ((kills == 5)) || fail "$name: only $kills of 5 kills found $first alive (the job ended first?)"
    elif [[ $signal == DELETE ]]; then
      # The training file deleted, then the reader killed: its successor cannot resume, and the
      # job must fail with the reason and a result line (it crash-looped without a result).
      rm -f "$train"
      kill -KILL "$pid" 2>/dev/null || true
    elif [[ $signal == CHANGE ]]; then
      # The training file replaced by other rows of the same size, then the reader killed: its
      # successor must not resume at the old offset in the new file (the size alone cannot tell).
      tr 01 10 <"$train" >"$train.new" && mv "$train.new" "$train"
      kill -KILL "$pid" 2>/dev/null || true
    elif [[ $signal == WIPE ]]; then
      # The shard's data directory deleted (rows and checkpoints), then the shard killed: its
      # successor must not serve an empty table as the job's; the job fails with the reason.
      rm -rf "$name/state/$service"
      kill -KILL "$pid" 2>/dev/null || true
    elif [[ $signal == FOREIGN ]]; then
      # The shard's data directory replaced by another job's (the undisturbed run's), the shard
      # paused meanwhile so that it writes into neither, then killed: its successor must neither
      # clear that job's rows nor serve an empty table; the job fails with the reason.
      kill -STOP "$pid"
      rm -rf "$name/state/$service" && cp -r "base/state/$service" "$name/state/$service"
      kill -KILL "$pid" 2>/dev/null || true
    elif [[ $signal == NODISK ]]; then
      # The snapshot directory made unwritable (a file in its place, as root ignores modes): every
      # later snapshot fails, the last one too; the job must finish, and say so (exit 3).
      # (A snapshot under way may create the directory again between the two steps: retry.)
      for _ in $(seq 50); do
        rm -rf "$name/state/snapshots"
        { : >"$name/state/snapshots"; } 2>/dev/null && break
        sleep 0.05
      done
      [[ -f "$name/state/snapshots" ]] || fail "$name: could not put a file in place of the snapshot directory"
    elif [[ $signal == CORRUPT ]]; then
      # A shard's RocksDB CURRENT file overwritten with garbage, then the shard killed: its
      # successor must restore the newest checkpoint instead of failing at every start.
      until ls -d "$name"/state/snapshots/snapshot-* >/dev/null 2>&1 || ((SECONDS > deadline)); do sleep 0.1; done
      printf 'garbage\n' >"$name/state/$service/live/CURRENT"
      kill -KILL "$pid" 2>/dev/null || true
    else
      kill "-$signal" "${pids[@]}" 2>/dev/null || true
    fi
  fi
  # The hard deadline: a job that outlives it hangs.
  deadline=$((SECONDS + ${SS_MATRIX_DEADLINE:-240}))
  while kill -0 $job 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 $job 2>/dev/null; then
    fail "$name: no result within the deadline (the job hangs)"
    kill -9 $job "$(cat "$name"/*.pid 2>/dev/null)" 2>/dev/null || true
  fi
  wait $job || rc=$?
  last_rc=$rc
  tail -1 "$name.out" >"$name.json"
  echo "  $name: exit $rc, $(grep -o '"ok":[a-z]*' "$name.json"), committed $(field "$name.json" examples_committed)," \
    "test NE $(field "$name.json" test_ne), sync rounds $(field "$name.json" sync_rounds)"
}

# check_case NAME [NE_BOUND]: the guarantees every case keeps; NE at most NE_BOUND (default 1.01)
# times the undisturbed run's.
check_case() {
  local ne bound=${2:-1.01} expected=$rows
  if [[ -n ${SS_MATRIX_NE_BOUND:-} ]]; then
    bound=$(awk -v a="$bound" -v b="$SS_MATRIX_NE_BOUND" 'BEGIN { print (a > b ? a : b) }')
  fi
  [[ $1 == *-epochs ]] && expected=$((rows * 2))  # each row once per epoch
  [[ "$(field "$1.json" ok)" == true ]] || fail "$1: the job did not end ok: $(field "$1.json" error)"
  [[ "$(field "$1.json" examples_committed)" == "$expected" ]] ||
    fail "$1: $(field "$1.json" examples_committed) examples committed, expected exactly $expected"
  ne=$(field "$1.json" test_ne)
  awk -v a="${ne:-9}" -v b="$base_ne" -v x="$bound" 'BEGIN { exit !(a <= b * x) }' ||
    fail "$1: test NE $ne is more than x$bound the undisturbed run's $base_ne"
}

# check_syncing NAME: syncing went on after a sync server's restart. A call to the dead process
# is never answered; unless the trainers send it again to the new one, every round waits out its
# timeout and the job syncs a fraction of the undisturbed run's rounds. Compared per second of
# training: the runs' lengths vary with the machine's load (10.3 rounds/s in both of two runs
# that took 27 s and 15 s).
check_syncing() {
  local rounds seconds
  rounds=$(field "$1.json" sync_rounds)
  seconds=$(field "$1.json" seconds)
  awk -v a="${rounds:-0}" -v s="${seconds:-1}" -v b="$base_rounds" -v t="$base_seconds" \
    'BEGIN { exit !(s > 0 && t > 0 && a / s >= 0.6 * b / t) }' ||
    fail "$1: $rounds sync rounds in ${seconds}s, under 60% of the undisturbed run's rate ($base_rounds in ${base_seconds}s): syncing stalled"
  grep -q "sync server 1 restarted; sending round" "$1.err" ||
    fail "$1: no trainer sent its round again to the restarted sync server"
}

# check_reshard NAME SERVICE FROM TO: a reshard from FROM to TO shards with a fault in it ends with
# TO shards; the coordinator's restart before the switch forgets it (the job goes on with FROM: a
# shard that was to join is not started again, a shard that took rows drops them), after the switch
# it ends it (the switch was stored).
check_reshard() {
  local from=$3 to=$4
  if grep -q "resharded $from -> $to shards in" "$1.err"; then
    echo "  $1: the reshard ended: $(grep -o "resharded $from -> $to shards in.*" "$1.err" | tail -1 | cut -c1-160)"
  elif [[ $2 == coordinator ]] && ! grep -q "stopped while it switched from $from to $to shards" "$1.err"; then
    if ((to > from)); then
      grep -q "local: shard-$from is beyond the job's $from shard(s): not started again" "$1.err" ||
        fail "$1: the reshard was forgotten with the coordinator, but shard $from was not let go"
      echo "  $1: the coordinator's restart before the switch forgot the reshard; the job went on with $from shard(s)"
    else
      grep -q "shard-0: the reshard to $to shards whose rows came here did not happen: dropped the [1-9][0-9]* rows" "$1.err" ||
        fail "$1: the reshard was forgotten with the coordinator, but shard 0 did not drop the rows it had taken"
      echo "  $1: the coordinator's restart before the switch forgot the reshard: $(grep -o "shard-0: the reshard to $to shards whose rows came here.*" "$1.err" | head -1 | cut -c1-160)"
    fi
  else
    fail "$1: the reshard to $to shard(s) did not end ($(grep -h "reshard\|resharding" "$1.err" | tail -1 | cut -c1-200))"
  fi
}

# check_fallback NAME SHARD: the successor of a shard whose live database is corrupt says so and
# restores its newest checkpoint.
check_fallback() {
  grep -q "$2: its stored rows are unusable: .*CURRENT" "$1.err" ||
    fail "$1: no message that $2's stored rows are unusable (CURRENT)"
  grep -q "$2: loaded rows of checkpoint [0-9]* (the stored rows were unusable)" "$1.err" ||
    fail "$1: $2 did not restore a checkpoint"
}

# check_snapshots_failed NAME RC: a job whose snapshots fail finishes ok, with the failure in the
# result, the summary and the exit status (3).
check_snapshots_failed() {
  [[ "$2" == 3 ]] || fail "$1: exit $2, expected 3 (finished, but the last snapshot failed)"
  grep -q '"snapshot_error":"[^"]' "$1.json" || fail "$1: no snapshot_error in the result"
  grep -q "the last snapshot FAILED" "$1.out" || fail "$1: the summary does not say that the last snapshot failed"
}

# check_job_failed NAME ERROR_PATTERN WHAT [COMMITTED]: a loss the job cannot recover from ends it
# at once, with a result line whose error matches ERROR_PATTERN (a grep pattern) and says WHAT,
# and that counts at least COMMITTED rows committed before the failure.
check_job_failed() {
  [[ "$(field "$1.json" ok)" == false ]] || fail "$1: the job did not fail (ok: $(field "$1.json" ok))"
  grep -q "\"error\":\"$2" "$1.json" || fail "$1: the result does not say $3: $(field "$1.json" error)"
  local committed
  committed=$(field "$1.json" examples_committed)
  ((${committed:-0} >= ${4:-0})) || fail "$1: the result counts $committed rows committed, expected at least ${4:-0}"
}

# check_rows_kept NAME SHARD: a shard stopped with SIGTERM refuses new row requests, finishes those
# it took and writes every row before it leaves: its successor loads exactly the rows it held.
check_rows_kept() {
  local held loaded
  # The first stop's count, and what the next start of the shard loaded after it.
  read -r held loaded < <(grep -oE "$2: (all [0-9]+ rows written to storage before stopping|loaded its stored rows: [0-9]+ rows)" "$1.err" |
    awk '/written/ && !h { h = $3; next } h && /loaded/ { print h, $6; exit }' || true)
  [[ -n "$held" && "$held" == "$loaded" ]] ||
    fail "$1: $2 held ${held:-?} rows when it stopped, its successor loaded ${loaded:-?}"
}

# check_export NAME SIGNAL [SHARD]: the final model was written although a service went away
# while it was being written (a shard: the exporter waited for it through the cluster view), and
# predict scores it: as the job did, unless a shard was killed outright (within 1%: the rows' last
# --flush-interval of updates are lost).
check_export() {
  local ne
  if [[ -n ${3:-} && $2 != STOP ]]; then
    grep -q "exporter: shard $3: .*waiting for it" "$1.err" ||
      fail "$1: the export did not see the shard go (it finished before the signal?); the case proves nothing"
  fi
  [[ -s "$1.ssm" ]] || { fail "$1: no model file"; return; }
  "$bin" predict --model "$1.ssm" --test data/test.tsv --threads 1 >"$1.predict" 2>&1 ||
    { fail "$1: predict failed: $(tail -1 "$1.predict")"; return; }
  ne=$(tail -1 "$1.predict" | grep -o '"test_ne":[^,}]*' | cut -d: -f2)
  if [[ $2 != KILL* || -z ${3:-} ]]; then
    [[ "$ne" == "$(field "$1.json" test_ne)" ]] ||
      fail "$1: predict with the exported model gives NE $ne, the job measured $(field "$1.json" test_ne)"
  else
    awk -v a="${ne:-9}" -v b="$(field "$1.json" test_ne)" 'BEGIN { exit !(a <= b * 1.01) }' ||
      fail "$1: predict with the exported model gives NE $ne, over 1% above the job's $(field "$1.json" test_ne)"
  fi
}

# check_export_request NAME [SHARD]: the export an operator asked for while the job trained was
# written although a service went away meanwhile (a shard: it waited for it), and predict reads it.
check_export_request() {
  local rc=0
  wait "$export_pid" || rc=$?
  if ((rc != 0)) && [[ $1 == coordinator-* ]] && grep -q "the job is done: export while it runs" "$1.export"; then
    # The restarted coordinator was asked again, but the job had ended meanwhile (on this short
    # job it may): the client says so at once, which is all it can do.
    echo "  $1: the job ended before the restarted coordinator could export; the client said so"
    return
  fi
  ((rc == 0)) || fail "$1: shadowsync export exited $rc: $(tail -1 "$1.export")"
  if [[ -n ${2:-} && $1 != *-STOP-* ]]; then
    grep -q "exporter: shard $2: .*waiting for it" "$1.err" ||
      fail "$1: the export did not see shard $2 go (it finished before the signal?); the case proves nothing"
  fi
  "$bin" predict --model "$1.req.ssm" --test data/test.tsv --threads 1 >"$1.predict" 2>&1 ||
    fail "$1: predict cannot use the exported model: $(tail -1 "$1.predict")"
}

# check_snapshot_abandoned NAME SHARD: a snapshot under way when the shard went is abandoned with
# the reason (the next one is taken an interval later, and the job goes on).
check_snapshot_abandoned() {
  grep -q "snapshot [0-9]* abandoned: shard $2 restarted or left" "$1.err" ||
    fail "$1: no snapshot was abandoned for shard $2's restart (it completed before the signal?)"
}

# check_chain NAME: an online case's publications are numbered 1, 2, ... without a gap, each delta
# following the one before, and the newest is the job's final model: predict --publish-dir scores
# the test file exactly as the job did (serve answers as predict does: serve_tests).
check_chain() {
  local dir="$1.pub"
  [[ -d $dir ]] || { fail "$1: no publish directory"; return; }
  check_publications "$dir" "$1: "
  ((publications > 1)) || fail "$1: $publications publications, expected several"
  "$bin" predict --publish-dir "$dir" --test data/test.tsv --threads 1 >"$1.chain" 2>&1 ||
    fail "$1: predict --publish-dir failed: $(tail -1 "$1.chain")"
  [[ "$(tail -1 "$1.chain" | grep -o '"test_ne":[^,}]*' | cut -d: -f2)" == "$(field "$1.json" test_ne)" ]] ||
    fail "$1: the chain's newest model scores NE $(tail -1 "$1.chain" | grep -o '"test_ne":[^,}]*'), the job $(field "$1.json" test_ne)"
}

# check_epochs NAME: both epochs ran and were scored (by a restarted coordinator too), and a reader
# killed in the second epoch resumed in it.
check_epochs() {
  [[ "$(field "$1.json" epochs_run)" == 2 ]] || fail "$1: $(field "$1.json" epochs_run) epochs run, expected 2"
  grep -q '"epoch_scores":\[.*"epoch":2,' "$1.json" || fail "$1: the second epoch was not scored"
  if [[ $1 == reader-0-* ]] && ! grep -q "reader-0: resuming in epoch 2 at" "$1.err"; then
    fail "$1: the restarted reader did not resume in epoch 2"
  fi
}

# check_scoring_waited NAME SHARD: the scoring saw the shard go and waited for it through the
# cluster view (it asked its successor), so the job's test metrics are complete.
check_scoring_waited() {
  grep -q "evaluator: shard $2: .*waiting for it" "$1.err" ||
    fail "$1: the scoring did not see shard $2 go (it finished before the signal?); the case proves nothing"
}

echo "fault matrix in $work ($rows rows)"
# Two undisturbed runs: runs of one job differ by themselves (Hogwild and background sync depend on
# timing), so NE is bounded against the worse of the two.
worse_ne() { awk -v a="$(field "$1.json" test_ne)" -v b="$(field "$2.json" test_ne)" 'BEGIN { print (a > b ? a : b) }'; }
run_case base none - -
run_case base2 none - -
for b in base base2; do
  [[ "$(field $b.json ok)" == true ]] || fail "the undisturbed run $b failed: $(field $b.json error)"
done
s_easgd_ne=$(worse_ne base base2)
echo "  undisturbed runs: test NE $(field base.json test_ne) and $(field base2.json test_ne)"
base_ne=$s_easgd_ne
base_rounds=$(field base.json sync_rounds)
base_seconds=$(field base.json seconds)

services="coordinator shard-0 reader-0 trainer-0 sync-1"
signals=(KILL TERM STOP)
phases="startup training snapshot draining scoring export exportreq resume"
# The cross product: every service kind x KILL, TERM, STOP x every phase of a job (120 cases).
full_product() {
  local service signal phase
  for service in $services; do
    for signal in "${signals[@]}"; do
      for phase in $phases; do echo "$service:$signal:$phase"; done
    done
  done
}
# Every pair of the three, in 40 cases: each service in each phase once, with the signal
# (i + j) mod 3 for the i-th service and the j-th phase, so that every service also meets every
# signal and every phase every signal.
pairwise_product() {
  local i=0 j service phase
  for service in $services; do
    j=0
    for phase in $phases; do
      echo "$service:${signals[$(((i + j) % 3))]}:$phase"
      j=$((j + 1))
    done
    i=$((i + 1))
  done
}
# Each phase once, the service and the signal turning with it: every service kind, signal and
# phase is hit at least once in 8 cases (the pairs above are a bench run: SS_MATRIX_CASES=pairs).
cover_product() {
  local -a svc=($services) phs=($phases)
  local j
  for j in "${!phs[@]}"; do echo "${svc[$((j % ${#svc[@]}))]}:${signals[$((j % 3))]}:${phs[$j]}"; done
}
# Two faults at once, five kills in a row, damage to storage and input, epochs, no sync.
special_cases="all:KILL:resume shard-0:NOCKPT:resume shard-0:WIPE:resume all:FOREIGN:resume
  shard-0:CORRUPT:training reader-0:DELETE:training reader-0:CHANGE:training coordinator:NODISK:training
  shard-0:WIPE:training shard-0:FOREIGN:training
  shard-0+coordinator:KILL:training shard-0+shard-1:KILL:training:shards2 shard-0:KILL5:training
  trainer-1:KILL:draining:nosync trainer-0:KILL:training:nosync
  reader-0:KILL:epoch2:epochs coordinator:KILL:validating:epochs shard-0:KILL:validating:epochs"
# A following, publishing job (online): every service kind, each phase of training once, and a
# power cut; the chain must be unbroken and end at the job's final model.
online_cases="coordinator:KILL:training:online shard-0:KILL:training:online reader-0:KILL:training:online
  all:KILL:resume:online trainer-0:TERM:training:online sync-1:STOP:training:online
  shard-0:TERM:snapshot:online coordinator:TERM:draining:online"
online_ci="coordinator:KILL:training:online shard-0:KILL:training:online reader-0:KILL:training:online
  all:KILL:resume:online"
# A live reshard from 1 to 2 shards with a fault in it: the source or the new shard killed while the
# rows are copied or moved, the coordinator killed while they are.
reshard_cases="shard-0:KILL:copying:reshard shard-1:KILL:copying:reshard coordinator:KILL:copying:reshard
  shard-0:KILL:holding:reshard coordinator:KILL:holding:reshard"
# A live shrink from 2 shards to 1 whose coordinator is killed after shard 0 took a copy of shard
# 1's rows, or as the input is held: forgotten (shard 0 drops the copies) or ended.
shrink_cases="coordinator:KILL:copying:shrink coordinator:KILL:holding:shrink"
# A live reshard from shards with a memory budget: the source killed while the rows changed since
# their copy move, the coordinator killed while they are copied. From shards whose rows leave for
# good: a trainer killed while they are copied (the reshard must end, its tombstones taken).
tiered_cases="shard-0:KILL:holding:tiered coordinator:KILL:copying:tiered trainer-0:KILL:copying:leaving
  trainer-0:KILL:copying:leavingtiered"
# Cases that once failed, kept whatever the pairs choose.
regressions="sync-1:KILL:startup sync-1:TERM:training sync-1:STOP:training shard-0:TERM:training coordinator:STOP:training
  reader-0:STOP:startup reader-0:KILL:draining shard-0:TERM:draining shard-0:KILL:scoring shard-0:TERM:scoring
  shard-0:KILL:export shard-0:TERM:export trainer-0:STOP:startup trainer-0:KILL:training trainer-1:TERM:draining
  shard-0:KILL:snapshot shard-0:TERM:exportreq coordinator:TERM:export coordinator:STOP:exportreq coordinator:KILL:exportreq
  coordinator:STOP:resume"
# The covering set CI runs: every service kind, signal and phase (cover_product), each kind of
# damage, two faults at once, five kills, a variant of each kind of job (epochs, online, shrink,
# tiered, rows leaving for good; a paused slice holder brings the runs without sync), and the
# regressions whose paths nothing else here takes.
special_ci="all:KILL:resume shard-0:NOCKPT:resume all:FOREIGN:resume shard-0:CORRUPT:training
  reader-0:CHANGE:training coordinator:NODISK:training shard-0+coordinator:KILL:training shard-0:KILL5:training
  reader-0:KILL:epoch2:epochs"
online_cover="all:KILL:resume:online"
reshard_cover="coordinator:KILL:holding:shrink shard-0:KILL:holding:tiered trainer-0:KILL:copying:leavingtiered"
regressions_ci="shard-0:KILL:export shard-0:KILL:snapshot"
case ${SS_MATRIX_CASES:-ci} in
  ci) cases="$(cover_product) $special_ci $online_cover $reshard_cover $regressions_ci" ;;
  wide) cases="$(cover_product) $special_cases $online_ci $reshard_cases $shrink_cases $tiered_cases $regressions" ;;
  full) cases="$(full_product) $special_cases $online_cases $reshard_cases $shrink_cases $tiered_cases" ;;
  pairs) cases="$(pairwise_product) $special_cases $online_cases $reshard_cases $shrink_cases $tiered_cases $regressions" ;;
  online) cases=$online_cases ;;
  reshard) cases="$reshard_cases $shrink_cases $tiered_cases" ;;
  *) cases=$SS_MATRIX_CASES ;;
esac
# Each case once, in the order given.
cases=$(for c in $cases; do echo "$c"; done | awk '!seen[$0]++')
echo "  $(wc -w <<<"$cases") cases"
for c in $cases; do
  IFS=: read -r service signal phase variant <<<"$c"
  name="${service//+/-and-}-$signal-$phase${variant:+-$variant}"
  # NE is compared with an undisturbed run of the same algorithm.
  base_ne=$s_easgd_ne
  # A paused coordinator or sync server holds back its slice of the dense vector (the others sync
  # on): while it is paused, that slice trains as without sync on every trainer. Paused for 4 s
  # of this 5-second job, NE may therefore drift towards an unsynchronized run's, never past it.
  paused_slice=false
  [[ $signal == STOP && $service =~ ^(coordinator|sync-[0-9]+)$ && -z $variant ]] && paused_slice=true
  if [[ $variant == nosync ]] || $paused_slice; then
    [[ -f base-nosync.json ]] || { run_case base-nosync none - - nosync; run_case base-nosync2 none - - nosync; }
  fi
  [[ $variant == nosync ]] && base_ne=$(worse_ne base-nosync base-nosync2)
  run_case "$name" "$service" "$signal" "$phase" "$variant"
  # A shard restored from its checkpoint has lost its updates since (the readers do not rewind):
  # about 2% of NE on this small job, where a checkpoint is a second old.
  if [[ $signal == DELETE ]]; then
    check_job_failed "$name" "$service: .*$name.train.tsv: no such file" "that the training file is missing" $((rows * 3 / 10))
    continue
  fi
  if [[ $signal == CHANGE ]]; then
    check_job_failed "$name" "$service: .*$name.train.tsv changed since it was read (line [0-9]*" \
      "that the training file changed" $((rows * 3 / 10))
    continue
  fi
  if [[ $signal == WIPE && $phase == resume ]]; then
    check_job_failed "$name" "$service: .*resuming from snapshot [0-9]*: no checkpoint" "that $service's rows are gone"
    continue
  fi
  if [[ $signal == FOREIGN && $phase == resume ]]; then
    check_job_failed "$name" "shard-0: .*its storage holds rows of job [0-9a-f]*, not of this job [0-9a-f]*, which resumes from snapshot" \
      "that the snapshots are another job's"
    grep -q "the storage holds rows of job .*clearing it" "$name.err" && fail "$name: a shard cleared its rows"
    continue
  fi
  if [[ $signal == FOREIGN ]]; then
    check_job_failed "$name" "$service: .*its storage holds rows of job [0-9a-f]*, not of this job [0-9a-f]*, which is running" \
      "that $service's storage is another job's" $((rows * 3 / 10))
    grep -q "$service: the storage holds rows of job .*clearing it" "$name.err" && fail "$name: $service cleared another job's rows"
    continue
  fi
  if [[ $signal == WIPE ]]; then
    check_job_failed "$name" "$service: .*holds nothing of this job" "that $service's rows are gone"
    continue
  fi
  if [[ $signal == NOCKPT ]]; then
    grep -q "$service: resuming from snapshot [0-9]*: .*using its live rows instead" "$name.err" ||
      fail "$name: $service did not say that it serves its live rows for want of a checkpoint"
  fi
  if [[ $phase == resume ]] && grep -q "refused the snapshot's state" "$name.err"; then
    fail "$name: a sync server refused the snapshot's state (its slice starts over)"
  fi
  if [[ $signal == NODISK ]]; then
    check_snapshots_failed "$name" "$last_rc"
  elif [[ $last_rc != 0 ]]; then
    # 3: the last snapshot failed. A shard's restart during it is no reason: it is taken again.
    fail "$name: exit $last_rc, expected 0 (the summary says: $(grep -m1 FAILED "$name.out" || true))"
  fi
  # A shard killed outright loses its updates since its last write to storage (at most a second
  # here, where snapshots come every second): up to 2-3% of NE on this short job, whose kill comes
  # a few seconds in (fault_injection.sh holds 1% on a longer one).
  # Where the cut came (a late one costs more, durability.md): printed, for a failure to show.
  if [[ $phase == resume ]]; then
    echo "  $name: $(grep -m1 -o "from snapshot [0-9]*: [0-9]* examples committed" "$name.err" || echo "no resume line")"
  fi
  if [[ $signal == CORRUPT ]]; then
    check_case "$name" 1.05
  elif [[ $signal == NOCKPT ]]; then
    # The live rows serve, newer than the snapshot the dense state and the readers resume from:
    # every example since is trained twice into the embeddings (documented), a large share of
    # this short job when the machine is slow to take its snapshots.
    check_case "$name" 1.05
  elif [[ $variant == epochs ]]; then
    # The best of two epochs (validation on the test file) against one undisturbed epoch.
    check_case "$name" 1.03
    check_epochs "$name"
  elif [[ $signal == KILL* && $service == *shard-* ]]; then
    check_case "$name" 1.03
  elif [[ $phase == resume ]]; then
    # A power cut resumes the trainers from the snapshot's central copy and the trainers' averaged
    # optimizer state (before 2026-12-02 a fresh Adam: +0.3% NE on average here at a third of the
    # rows, more when cut late; a late cut of two trainers still costs more, durability.md), and
    # single runs of both jobs spread about as much (on this VM, nine resumed runs of
    # the online case: x0.998 to x1.006 the worse undisturbed run; once x1.011 in CI). Every case
    # of this phase is such a power cut before its own fault (reader-0-TERM-resume once x1.0100).
    check_case "$name" 1.02
  elif [[ $signal == KILL && $service == trainer-* && $variant == nosync ]]; then
    # As a shard killed outright loses its rows' updates since its last write, a trainer without
    # sync loses its replica's progress since the last snapshot gathered it (a second or two of
    # this 5-second job); the rest counts (sync.md). Losing the whole replica cost 4.4%.
    check_case "$name" 1.03
  elif $paused_slice; then
    # The larger of 1% over the undisturbed run and the worse unsynchronized run's NE.
    check_case "$name" "$(awk -v s="$s_easgd_ne" -v n="$(worse_ne base-nosync base-nosync2)" \
      'BEGIN { r = n / s; printf "%.4f", (r > 1.01 ? r : 1.01) }')"
  else
    check_case "$name"
  fi
  # Without sync no central copy holds a trainer's training: a trainer killed outright counts in
  # the final model with its replica as the last snapshot gathered it.
  if [[ $variant == nosync && $service == trainer-* && $signal == KILL ]]; then
    grep -q "the final model counts $service's replica as last gathered" "$name.err" ||
      fail "$name: the final model left out the replica of the killed $service"
  fi
  # A trainer killed while training is replaced by its restart: the result's trainer_stats lists
  # the process that left (with what it reported) beside the one that finished the job.
  if [[ $service == trainer-* && $signal == KILL && $phase == training && -z $variant ]]; then
    grep -q "\"name\":\"$service\",[^{}]*\"left\":true" "$name.json" ||
      fail "$name: the result's trainer_stats has no entry for the killed $service that left the job"
  fi
  # Sync rounds go on after a sync server's restart where training does.
  if [[ $service == sync-* && $signal != STOP && $phase =~ ^(startup|training|snapshot|exportreq|resume)$ ]]; then
    check_syncing "$name"
  fi
  if [[ $service == shard-* && $signal == TERM && $phase != export ]]; then check_rows_kept "$name" "$service"; fi
  shard_index=${service#shard-}
  [[ $service == shard-* ]] || shard_index=""
  if [[ $phase == export ]]; then check_export "$name" "$signal" "$shard_index"; fi
  if [[ $phase == scoring && -n $shard_index && $signal != STOP ]]; then check_scoring_waited "$name" "$shard_index"; fi
  if [[ $phase == exportreq ]]; then check_export_request "$name" "$shard_index"; fi
  # A stopped shard may finish its checkpoint before it leaves; a killed one cannot.
  if [[ $phase == snapshot && -n $shard_index && $signal == KILL* ]]; then check_snapshot_abandoned "$name" "$shard_index"; fi
  if [[ $signal == CORRUPT ]]; then check_fallback "$name" "$service"; fi
  if [[ $variant == online ]]; then check_chain "$name"; fi
  if [[ $variant == reshard || $variant == tiered || $variant == leaving* ]]; then check_reshard "$name" "$service" 1 2; fi
  # A reshard that ended copied rows from the shard with a memory budget while the job trained.
  if [[ $variant == tiered || $variant == leaving* ]] && grep -q "resharded 1 -> 2 shards in" "$name.err" &&
    ! grep -q "rows (.*) copied in .* while the job trained" "$name.err"; then
    fail "$name: the shard with a memory budget, or whose rows leave for good, was not copied from while the job trained"
  fi
  # The rows the source gave up since the copy began came to the new shard as tombstones (a
  # trainer's kill leaves the reshard to end).
  if [[ $variant == leaving* && $service == trainer-* ]]; then
    grep -q "shard-1: took .* applied [1-9][0-9]* tombstones" "$name.err" ||
      fail "$name: shard 1 took no tombstone of a row given up for good since the copy began"
    echo "  $name: $(grep -o "shard-1: took .* applied [0-9]* tombstones" "$name.err" | tail -1 | cut -c1-200)"
  fi
  # A shrink's final model holds each row once (predict refuses a model file that lists an id
  # twice) and scores as the job did.
  if [[ $variant == shrink ]]; then check_reshard "$name" "$service" 2 1; check_export "$name" "$signal"; fi
done

if ((failures > 0)); then
  echo "fault matrix: $failures check(s) failed (logs in $work)"
  exit 1
fi
echo "fault matrix: every case passed"
[[ -n "${2:-}" ]] || rm -rf "$work"
