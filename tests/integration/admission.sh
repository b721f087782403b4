#!/usr/bin/env bash
# Id admission (--admit-after K; docs/embeddings.md), in real local jobs with RocksDB:
#   - with K = 3 the shard stores far fewer rows than with every id admitted, and says what it
#     refused and dropped when it stops; the rows it admitted are the rows its export holds;
#   - the ids it never admitted are served their initial values, as predict serves ids absent
#     from a model: predict with the export reproduces the job's test metrics exactly;
#   - admission over a memory budget (1 MB, rows read back from RocksDB) gives the same model as
#     admission with every row in RAM (one trainer, one worker, no lookahead: deterministic);
#   - K outside 1..255 is refused.
# usage: admission.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" admission
"$bin" gen-data --rows 60000 --test-rows 10000 --out data >/dev/null 2>&1
common=(--trainers 1 --threads 1 --lookahead 0 --shards 1 --shard-threads 1 --readers 1 --sync none
        --train data/train.tsv --test data/test.tsv --progress-interval 0 --flush-interval 0.05 --log-level info)

run() {  # NAME FLAGS...: a job, its result line in NAME.json
  local name=$1
  shift
  "$bin" local "${common[@]}" --state-dir "$name" --export "$name.ssm" "$@" >"$name.out" 2>"$name.err" ||
    fail "the job $name failed: $(tail -3 "$name.err")"
  tail -1 "$name.out" >"$name.json"
}
run all
run k3 --admit-after 3
run k3-tiered --admit-after 3 --memory-budget-mb 1

grep -h "could not write changed rows" all.err k3.err k3-tiered.err && fail "a shard says it could not write its rows"
all_rows=$(field all.json export_rows)
k3_rows=$(field k3.json export_rows)
((k3_rows * 10 < all_rows * 7)) || fail "K = 3 stored $k3_rows rows, every id $all_rows: not 30% fewer"
line=$(grep -o "shard-0: admission after 3 sightings: .*" k3.err | tail -1 || true)
[[ -n "$line" ]] || fail "the shard does not report its admissions when it stops"
admitted=$(echo "$line" | grep -o "[0-9]* rows admitted" | cut -d' ' -f1)
refused=$(echo "$line" | grep -o "[0-9]* lookups served without a row" | cut -d' ' -f1)
dropped=$(echo "$line" | grep -o "[0-9]* gradients dropped" | cut -d' ' -f1)
[[ "${admitted:-x}" == "$k3_rows" ]] || fail "the shard admitted ${admitted:-?} rows, the export holds $k3_rows"
[[ "${refused:-0}" -gt 0 && "${dropped:-0}" -gt 0 ]] || fail "nothing was refused or dropped: $line"
ne_all=$(field all.json test_ne)
ne_k3=$(field k3.json test_ne)
awk -v a="$ne_k3" -v b="$ne_all" 'BEGIN { exit !(a > 0 && a < b * 1.05) }' ||
  fail "test NE $ne_k3 with K = 3, $ne_all with every id: the model did not train"

predict_reproduces k3.json k3.ssm
same_fields k3.json "with every row in RAM" k3-tiered.json "with a 1 MB budget" test_logloss test_ne test_auc export_rows
grep -q "evictions, [0-9]* rows read back" k3-tiered.err || fail "the tiered job reports no tiers"

# Not piped into grep -q: grep leaving early would end the help with SIGPIPE (pipefail).
help=$("$bin" local --help 2>&1)
grep -q -- "--admit-after" <<<"$help" || fail "local --help does not list --admit-after"
for bad in 0 256; do
  if "$bin" local --trainers 1 --rows 2000 --admit-after "$bad" >bad.out 2>bad.err; then
    fail "--admit-after $bad was accepted"
  else
    grep -q -- "--admit-after" bad.out bad.err || fail "the refusal of --admit-after $bad does not name it: $(cat bad.err)"
  fi
done
echo "every id: $all_rows rows, test NE $ne_all"
echo "K = 3:    $k3_rows rows, test NE $ne_k3 (with a 1 MB budget: $(field k3-tiered.json test_ne))"
echo "shard:    ${line:-?}"
exit $((failures > 0))
