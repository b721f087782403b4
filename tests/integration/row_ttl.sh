#!/usr/bin/env bash
# Row TTL (--row-ttl; docs/embeddings.md) in real shard processes:
#   - in examples, without storage (the sweeper) and with a memory budget over RocksDB (the
#     persister sweeps before each flush): rows expire, the shard's clock counted exactly the
#     job's examples, the model has fewer rows than without a TTL, and predict scores with it;
#   - in seconds: rows untouched for a second expire during a job that lasts longer;
#   - a bad --row-ttl is refused before anything starts, saying what is wrong (exit 2).
# usage: row_ttl.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" row-ttl
"$bin" gen-data --rows 60000 --test-rows 5000 --out data >/dev/null 2>&1
common=(--trainers 1 --threads 1 --lookahead 0 --shards 1 --shard-threads 1 --readers 1 --sync none
        --train data/train.tsv --test data/test.tsv --progress-interval 0 --flush-interval 0.05)

# The line a shard logs when it stops: "row TTL <ttl>: <n> rows expired; clock at <clock>".
ttl_line() { grep -ho "row TTL .*: [0-9]* rows expired; clock at [0-9]*" "$@" | tail -1 || true; }

"$bin" local "${common[@]}" --export none.ssm >none.out 2>none.err || fail "the job without a TTL failed: $(tail -3 none.err)"
rows_none=$(field none.out export_rows)

for mode in memory tiered; do
  extra=()
  [[ $mode == tiered ]] && extra=(--state-dir state --memory-budget-mb 1)
  "$bin" local "${common[@]}" "${extra[@]}" --row-ttl 5000ex --export "$mode.ssm" --log-level info \
    >"$mode.out" 2>"$mode.err" || fail "$mode: the job with --row-ttl 5000ex failed: $(tail -3 "$mode.err")"
  line=$(ttl_line "$mode.err")
  [[ -n "$line" ]] || { fail "$mode: the shard does not report its row TTL"; continue; }
  expired=$(echo "$line" | grep -o "[0-9]* rows expired" | cut -d' ' -f1)
  clock=$(echo "$line" | grep -o "clock at [0-9]*" | cut -d' ' -f3)
  ((expired > 0)) || fail "$mode: no row expired: $line"
  ((clock == 60000)) || fail "$mode: the examples clock is at $clock after a job of 60000 examples"
  rows=$(field "$mode.out" export_rows)
  ((rows < rows_none)) || fail "$mode: the model has $rows rows with a TTL, not fewer than the $rows_none without"
  ne=$(field "$mode.out" test_ne)
  "$bin" predict --model "$mode.ssm" --test data/test.tsv >"$mode.predict" 2>&1 ||
    fail "$mode: predict with the TTL model failed: $(tail -3 "$mode.predict")"
  [[ "$(field "$mode.predict" test_ne)" == "$ne" ]] ||
    fail "$mode: predict scores NE $(field "$mode.predict" test_ne), the job $ne"
done

# Seconds: the job (three epochs) outlasts a 1 s TTL, so rows expire.
"$bin" local "${common[@]}" --row-ttl 1s --epochs 3 --log-level info >seconds.out 2>seconds.err ||
  fail "the job with --row-ttl 1s failed: $(tail -3 seconds.err)"
line=$(ttl_line seconds.err)
echo "$line" | grep -q "row TTL 1 s: " || fail "the shard does not report a TTL of 1 s: $line"
expired=$(echo "$line" | grep -o "[0-9]* rows expired" | cut -d' ' -f1)
((${expired:-0} > 0)) || fail "no row expired after a second: $line ($(field seconds.out seconds) s job)"

# A bad TTL is refused with the reason.
for bad in "100" "5y" "3000000000ex"; do
  if "$bin" local "${common[@]}" --row-ttl "$bad" >bad.out 2>bad.err; then
    fail "--row-ttl $bad was accepted"
  else
    [[ $? == 2 ]] || fail "--row-ttl $bad: exit code is not 2"
    grep -q -- "--row-ttl \"$bad\"" bad.out bad.err || fail "--row-ttl $bad: the error does not name it: $(tail -2 bad.err)"
  fi
done

if ((failures > 0)); then
  echo "row_ttl: $failures failure(s)"
  exit 1
fi
echo "row_ttl: all checks passed"
