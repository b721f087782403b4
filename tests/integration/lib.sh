# What the integration scripts share; sourced by them after `set -euo pipefail`.
#   in_work_dir BINARY NAME  $bin = the binary's absolute path; $work = a fresh directory
#                            /tmp/ss-NAME.XXXXXX, made current; on exit (leave_work_dir) every
#                            child process still running is stopped and waited for, and $work
#                            removed unless SS_KEEP is set (to read a failed run's logs)
#   fail MESSAGE             one failed check, printed and counted in $failures
#   field FILE KEY           the last value of a number or boolean JSON field in FILE
#   text_field FILE KEY      the last value of a string JSON field in FILE, quotes included
#   same_fields A WHAT_A B WHAT_B KEY...
#                            each KEY of result file A equal in result file B, else a failure
#                            "KEY: <in A> WHAT_A, <in B> WHAT_B"
#   check_publications DIR PREFIX
#                            the publications in DIR are numbered 1, 2, ... without a gap, each
#                            delta following the one before (failures begin with PREFIX); sets
#                            $publications to their count
#   predict_reproduces JOB MODEL
#                            predict with MODEL on data/test.tsv (one thread, its result line in
#                            predict.json) scores the test log loss, NE and AUC of result file JOB
#   newest_snapshot STATE    the id of the newest complete snapshot in STATE (0: none)
#   kill_at_snapshot NAME ID COMMAND...
#                            runs COMMAND, a job keeping its state in NAME.state (output in NAME.out
#                            and NAME.err), in the background and kills it -9 once its snapshot ID
#                            is written (2 minutes at most); a failure when the job ended first or
#                            wrote no snapshot
failures=0
publications=0

in_work_dir() {
  bin=$(readlink -f "$1")
  work=$(mktemp -d "/tmp/ss-$2.XXXXXX")
  trap leave_work_dir EXIT
  cd "$work"
}

leave_work_dir() {
  pkill -P $$ 2>/dev/null || true
  wait 2>/dev/null || true
  [[ -n "${SS_KEEP:-}" ]] || rm -rf "$work"
}

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { grep -o "\"$2\":[^,}]*" "$1" | tail -1 | cut -d: -f2; }
text_field() { grep -o "\"$2\":\"[^\"]*\"" "$1" | tail -1 | cut -d: -f2- || true; }

same_fields() {
  local a=$1 what_a=$2 b=$3 what_b=$4 key
  shift 4
  for key in "$@"; do
    [[ "$(field "$a" "$key")" == "$(field "$b" "$key")" ]] ||
      fail "$key: $(field "$a" "$key") $what_a, $(field "$b" "$key") $what_b"
  done
}

predict_reproduces() {
  local job=$1 key
  "$bin" predict --model "$2" --test data/test.tsv --threads 1 >predict.out 2>predict.err || fail "predict failed"
  tail -1 predict.out >predict.json
  for key in test_logloss test_ne test_auc; do
    [[ "$(field "$job" "$key")" == "$(field predict.json "$key")" ]] ||
      fail "$key: the job measured $(field "$job" "$key"), predict with its export $(field predict.json "$key")"
  done
}

check_publications() {
  local dir=$1 prefix=$2 expected=1 m seq prev
  for m in $(ls "$dir" | grep 'manifest$' | sort); do
    seq=$((10#${m%%.*}))
    ((seq == expected)) || fail "${prefix}publication $seq where $expected was due"
    expected=$((seq + 1))
    if [[ $m == *delta* ]]; then
      prev=$(grep "^previous " "$dir/$m" | head -1 | awk '{print $3}')
      ((prev == seq - 1)) || fail "${prefix}delta $seq follows $prev, not $((seq - 1))"
    fi
  done
  publications=$((expected - 1))
}

newest_snapshot() {
  local m
  m=$(ls "$1"/snapshots/snapshot-*/MANIFEST 2>/dev/null | sort | tail -1)
  [[ -n "$m" ]] && echo $((10#$(basename "$(dirname "$m")" | cut -d- -f2))) || echo 0
}

kill_at_snapshot() {
  local name=$1 id=$2 pid i
  shift 2
  "$@" >"$name.out" 2>"$name.err" &
  pid=$!
  for ((i = 0; i < 2400; i++)); do
    (($(newest_snapshot "$name.state") >= id)) && break
    sleep 0.05
  done
  kill -9 $pid
  wait $pid 2>/dev/null || true
  [[ -e $name.state/snapshots/RESULT.json ]] && fail "$name: the job ended before it was killed: nothing to resume"
  (($(newest_snapshot "$name.state") > 0)) || fail "$name: no snapshot was written"
}
