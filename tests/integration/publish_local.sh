#!/usr/bin/env bash
# Delta publishing from a cluster of real processes (docs/online.md):
#   - `local --processes --publish-dir P` writes a chain: a base first, deltas every interval, a
#     base again after a shard was killed (its restarted process cannot say what changed), the
#     numbers unbroken across a killed and restarted coordinator;
#   - the chain's newest publication is the final model: `predict --publish-dir P` scores the test
#     file exactly as the job and as `predict --model` on its export;
#   - int8 rows score within 0.5% of the final model's NE; a bf16 job's deltas hold its rows at
#     16 bits, exactly: the chain scores as the job;
#   - a shard whose rows leave RAM (a memory budget, a row limit, a TTL) publishes rows read back
#     from storage and tombstones, and the chain still ends at the job's final model;
#   - a directory of another job is refused.
# usage: publish_local.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" publish
rows=${SS_PUBLISH_ROWS:-300000}  # the sanitizer run uses fewer (scripts/sanitize.sh)
"$bin" gen-data --rows $rows --test-rows 20000 --out data >/dev/null 2>&1
flags=(--processes --trainers 2 --shards 2 --train data/train.tsv --test data/test.tsv --sync s-easgd
  --member-timeout 3 --heartbeat-interval 0.5 --request-timeout 2 --restart-delay 0.5 --snapshot-interval 2
  --log-level warn)

committed_now() {
  local ep
  ep=$(cat "$1/coordinator.endpoint" 2>/dev/null) || return 0
  "$bin" status --coordinator "$ep" --timeout 1 2>/dev/null | grep -o '"examples_committed":[0-9]*' | head -1 |
    cut -d: -f2 || true
}
wait_committed() {  # wait_committed RUN_DIR EXAMPLES
  local deadline=$((SECONDS + 180)) c
  while ((SECONDS < deadline)); do
    c=$(committed_now "$1")
    if [[ -n "$c" ]] && ((c >= $2)); then return 0; fi
    sleep 0.2
  done
  fail "timed out waiting for $2 examples committed in $1"
}
manifest_field() { grep "^$2 " "$1" | head -1 | awk '{print $3}'; }

echo "1. a job publishing every 0.3 s, a shard and the coordinator killed on the way"
"$bin" local "${flags[@]}" --run-dir a --state-dir a/state --keep-state --export "$work/final.ssm" \
  --publish-dir pub --publish-interval 0.3 --publish-base-every 20 --publish-retain 100000 >a.out 2>a.err &
job=$!
deadline=$((SECONDS + 30))
until [[ -s a/coordinator.endpoint ]] || ((SECONDS > deadline)); do sleep 0.1; done
wait_committed a $((rows / 4))
kill -9 "$(cat a/shard-1.pid)"
wait_committed a $((rows / 2))
kill -9 "$(cat a/coordinator.pid)"
wait $job || fail "the job failed: $(tail -3 a.err)"
tail -1 a.out >a.json
[[ "$(field a.json ok)" == "true" ]] || fail "the job did not end ok: $(text_field a.json error)"
[[ "$(field a.json examples_committed)" == "$rows" ]] || fail "committed $(field a.json examples_committed) of $rows"

bases=$(ls pub | grep -c 'base.manifest$' || true)
deltas=$(ls pub | grep -c 'delta.manifest$' || true)
echo "  $bases bases and $deltas deltas: $(ls pub | grep manifest | tail -1)"
((bases >= 2)) || fail "expected a base at the start and one after the shard restarted, found $bases"
((deltas >= 5)) || fail "expected deltas every 0.3 s, found $deltas"
[[ -z "$(ls pub | grep -v '\.manifest$\|\.ssm$\|\.ssd$' || true)" ]] || fail "debris left: $(ls pub)"
# Every number from 1 on, each delta following the one before.
check_publications pub ""
newest=$(ls pub | grep 'manifest$' | sort | tail -1)
[[ "$(manifest_field "pub/$newest" examples_trained)" == "$rows" ]] ||
  fail "the newest publication counts $(manifest_field "pub/$newest" examples_trained) examples, not $rows"

echo "2. the chain is the final model"
predict_reproduces a.json final.ssm
"$bin" predict --publish-dir pub --test data/test.tsv --threads 1 >chain.out 2>chain.err || fail "predict --publish-dir failed: $(tail -2 chain.err)"
tail -1 chain.out >chain.json
same_fields a.json "the job" chain.json "predict --publish-dir" test_logloss test_ne test_auc
[[ "$(field chain.json publication)" == "$((10#${newest%%.*}))" ]] || fail "predict scored publication $(field chain.json publication), not the newest"

echo "3. int8 rows"
"$bin" local "${flags[@]}" --run-dir b --publish-dir pub8 --publish-interval 0.5 --publish-rows int8 >b.out 2>b.err ||
  fail "the int8 job failed: $(tail -3 b.err)"
tail -1 b.out >b.json
"$bin" predict --publish-dir pub8 --test data/test.tsv --threads 1 >chain8.out 2>chain8.err || fail "predict int8 failed"
tail -1 chain8.out >chain8.json
awk -v a="$(field chain8.json test_ne)" -v b="$(field b.json test_ne)" 'BEGIN { exit !(a > 0 && a <= b * 1.005 && a >= b * 0.995) }' ||
  fail "int8 chain NE $(field chain8.json test_ne) vs the job's $(field b.json test_ne): more than 0.5% apart"

echo "4. rows that leave RAM: a memory budget, a row limit, a row TTL"
# One shard keeps 1 MB of rows in RAM (the rest in storage), at most 1,500 rows a table (those
# beyond go for good), and forgets rows untouched for 20,000 examples: deltas carry rows read back
# from storage and tombstones, and the chain still ends at the job's final model.
gone_rows=$((rows / 5))
"$bin" gen-data --rows $gone_rows --test-rows 10000 --out gone >/dev/null 2>&1
"$bin" local --trainers 1 --threads 1 --shards 1 --readers 1 --sync none --train gone/train.tsv --test gone/test.tsv \
  --state-dir c --memory-budget-mb 1 --max-rows-per-table 1500 --row-ttl 20000ex --flush-interval 0.05 \
  --publish-dir pubgone --publish-interval 0.2 --publish-retain 100000 --progress-interval 0 >c.out 2>c.err ||
  fail "the job whose rows leave RAM failed: $(tail -3 c.err)"
tail -1 c.out >c.json
tombstones=$(cat pubgone/*delta.manifest 2>/dev/null | awk '$1 == "tombstones" {n += $3} END {print n + 0}')
echo "  $(ls pubgone | grep -c 'delta.manifest$') deltas, $tombstones tombstones"
((tombstones > 0)) || fail "no delta has a tombstone: the job dropped no row, or its drops were not published"
"$bin" predict --publish-dir pubgone --test gone/test.tsv --threads 1 >chaingone.out 2>chaingone.err ||
  fail "predict --publish-dir pubgone failed: $(tail -2 chaingone.err)"
tail -1 chaingone.out >chaingone.json
same_fields c.json "the job" chaingone.json "predict --publish-dir" test_logloss test_ne test_auc

echo "5. bf16 rows publish at 16 bits, exactly"
"$bin" local --trainers 2 --shards 2 --sync s-easgd --train gone/train.tsv --test gone/test.tsv --row-precision bf16 \
  --publish-dir pub16 --publish-interval 0.2 --publish-retain 100000 --progress-interval 0 --log-level warn \
  >h.out 2>h.err || fail "the bf16 job failed: $(tail -3 h.err)"
tail -1 h.out >h.json
encodings=$(cat pub16/*delta.manifest 2>/dev/null | awk '$1 == "row_encoding" {print $3}' | sort -u | tr '\n' ' ')
[[ "$encodings" == "bf16 " ]] || fail "the bf16 job's deltas store rows as '$encodings', not bf16"
"$bin" predict --publish-dir pub16 --test gone/test.tsv --threads 1 >chain16.out 2>chain16.err ||
  fail "predict --publish-dir pub16 failed: $(tail -2 chain16.err)"
tail -1 chain16.out >chain16.json
same_fields h.json "the bf16 job" chain16.json "predict --publish-dir" test_logloss test_ne test_auc
echo "  $(ls pub16 | grep -c 'delta.manifest$') deltas of bf16 rows, test NE $(field chain16.json test_ne)"

echo "6. bad settings"
# pub holds job a's chain: another job may not continue it.
if "$bin" local --train data/train.tsv --publish-dir pub --log-level warn >other.out 2>other.err; then
  fail "a second job published into the first job's directory"
else
  grep -q "another job\|other job\|belongs to" other.err other.out || fail "no reason given: $(tail -2 other.err)"
fi

if ((failures > 0)); then echo "publish: $failures check(s) failed"; exit 1; fi
echo "publish: every check passed"
