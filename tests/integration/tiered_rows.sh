#!/usr/bin/env bash
# Embedding rows beyond a shard's memory budget (--memory-budget-mb; docs/embeddings.md), with
# real RocksDB:
#   - a job whose rows are many times its shard's budget trains to the end and gives the same
#     model as with every row in RAM: one trainer, one worker, no lookahead (deterministic), the
#     test metrics equal to the last printed digit;
#   - the shard evicted rows and read them back (its last log line), and the export, read from storage,
#     has every row: predict with it reproduces the job's metrics exactly;
#   - a budget smaller than one batch's rows is refused at start, naming the minimum; a budget
#     without storage is refused.
# usage: tiered_rows.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" tiered
"$bin" gen-data --rows 60000 --test-rows 10000 --out data >/dev/null 2>&1
common=(--trainers 1 --threads 1 --lookahead 0 --shards 1 --shard-threads 1 --readers 1 --sync none
        --train data/train.tsv --test data/test.tsv --progress-interval 0 --flush-interval 0.05)

"$bin" local "${common[@]}" --state-dir ram --export ram.ssm >ram.out 2>ram.err || fail "the job in RAM failed: $(tail -3 ram.err)"
"$bin" local "${common[@]}" --state-dir tiered --memory-budget-mb 1 --export tiered.ssm --log-level info \
  >tiered.out 2>tiered.err || fail "the job with a 1 MB budget failed: $(tail -3 tiered.err)"
grep -h "could not write changed rows" ram.err tiered.err && fail "a shard says it could not write its rows"
tail -1 ram.out >ram.json
tail -1 tiered.out >tiered.json
rows=$(field ram.json export_rows)
budget=$(grep -o "memory budget 1 MB: [0-9]* rows in RAM" tiered.err | grep -o "[0-9]* rows" | cut -d' ' -f1 || true)
[[ -n "$budget" ]] || fail "the shard does not log its budget"
if [[ -n "$budget" && -n "$rows" ]]; then
  ((rows > 5 * budget)) || fail "the job's $rows rows are not many times the budget's $budget: the test tests nothing"
fi
# The shard's last line: what the budget did (hit rate, evictions, rows read back from RocksDB).
line=$(grep -o "all rows written to storage before stopping: .*" tiered.err | tail -1 || true)
[[ -n "$line" ]] || fail "the shard does not report its tiers when it stops"
evictions=$(echo "$line" | grep -o "[0-9]* evictions" | cut -d' ' -f1)
read_back=$(echo "$line" | grep -o "[0-9]* rows read back" | cut -d' ' -f1)
[[ "${evictions:-0}" -gt 0 && "${read_back:-0}" -gt 0 ]] || fail "no row was evicted and read back: $line"
# ... and what storage did for it: batched reads with their latency, bytes read and written.
reads=$(echo "$line" | grep -o "[0-9]* storage reads" | cut -d' ' -f1)
[[ "${reads:-0}" -gt 0 ]] || fail "no storage reads counted: $line"
echo "$line" | grep -qE "p50 [0-9.]+ ms, p99 [0-9.]+ ms\), [0-9.]+ MB read, [0-9.]+ MB written" ||
  fail "the shard does not report read latency and bytes: $line"
echo "$line" | grep -qE "p99 0\.000 ms|, 0\.0 MB read|, 0\.0 MB written" && fail "storage I/O reported as zero: $line"
metrics=(test_examples test_logloss test_ne test_auc test_calibration export_rows)
same_fields ram.json "with every row in RAM" tiered.json "with a 1 MB budget" "${metrics[@]}"
predict_reproduces tiered.json tiered.ssm

# Prefetch hints (--prefetch): rows read ahead of their lookups, the same model to the last digit.
"$bin" local "${common[@]}" --state-dir prefetch --memory-budget-mb 1 --prefetch --export prefetch.ssm --log-level info \
  >prefetch.out 2>prefetch.err || fail "the job with prefetch failed: $(tail -3 prefetch.err)"
tail -1 prefetch.out >prefetch.json
same_fields ram.json "with every row in RAM" prefetch.json "with a 1 MB budget and prefetch" "${metrics[@]}"
prefetch_line=$(grep -o "all rows written to storage before stopping: .*" prefetch.err | tail -1 || true)
warmed=$(echo "$prefetch_line" | grep -o "[0-9]* read ahead by hints" | cut -d' ' -f1)
[[ "${warmed:-0}" -gt 0 ]] || fail "no row was read ahead by a hint: $prefetch_line"
# RAM held near the budget: the peak within the budget plus what write-backs let in meanwhile
# (1.6-1.8 x here, 2026-12-01; past 2 x a batch waits for the next flush, and 2.5 x leaves room
# for the rows the batches in flight bring meanwhile on a loaded machine).
peak=$(echo "$line" | grep -o "peak [0-9]*" | cut -d' ' -f2)
[[ -n "$peak" && -n "$budget" ]] && ((2 * peak <= 5 * budget)) || fail "RAM peaked at ${peak:-?} rows for a budget of $budget"

# A budget below one batch's rows (128 x 26 tables), and one without storage.
# Not piped into grep -q: grep leaving early would end the help with SIGPIPE (pipefail).
help=$("$bin" shard --help 2>&1)
grep -q -- "--memory-budget-mb" <<<"$help" || fail "shard --help does not list --memory-budget-mb"
if "$bin" local --trainers 1 --rows 2000 --state-dir small --memory-budget-mb 1 --batch-size 4096 \
  --progress-interval 0 >small.out 2>small.err; then
  fail "a budget smaller than a batch's rows was accepted"
else
  grep -q "give it at least [0-9]* MB" small.out small.err || fail "the refusal does not name the minimum: $(tail -2 small.err)"
fi
if "$bin" local --trainers 1 --rows 2000 --memory-budget-mb 8 >nostate.out 2>nostate.err; then
  fail "a budget without storage was accepted"
else
  grep -q "give --state-dir, or use --processes" nostate.out nostate.err || fail "the refusal does not say why: $(cat nostate.err)"
fi
echo "in RAM:     $(grep -o '"test_ne":[^,]*' ram.json), export_rows $(field ram.json export_rows)"
echo "1 MB (${budget:-?} rows): $(grep -o '"test_ne":[^,]*' tiered.json), export_rows $(field tiered.json export_rows)"
echo "shard:      ${line:-?}"
echo "prefetch:   ${prefetch_line:-?}"
exit $((failures > 0))
