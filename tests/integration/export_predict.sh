#!/usr/bin/env bash
# Model export from a cluster of real processes, and prediction with it:
#   - `local --processes --export F`: the coordinator writes the final model; `predict --model F`
#     reproduces the cluster's test metrics exactly (the same scoring code and batch size);
#   - `shadowsync export` against the running job writes a model that predict loads and scores;
#   - an export to a directory that does not exist fails with a clear message, and the job goes on.
# usage: export_predict.sh SHADOWSYNC_BINARY
set -euo pipefail
bin=$(readlink -f "$1")
work=$(mktemp -d /tmp/ss-export.XXXXXX)
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
"$bin" gen-data --rows 200000 --test-rows 20000 --out data >/dev/null 2>&1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { grep -o "\"$2\":[^,}]*" "$1" | head -1 | cut -d: -f2; }

"$bin" local --processes --trainers 2 --shards 2 --train data/train.tsv --test data/test.tsv \
  --run-dir run --export "$work/final.ssm" --log-level warn >cluster.out 2>cluster.err &
cluster=$!
deadline=$((SECONDS + 30))
until [[ -s run/coordinator.endpoint ]] || ((SECONDS > deadline)); do sleep 0.1; done
ep=$(cat run/coordinator.endpoint)
# Mid-job: wait until training runs, then export on request.
deadline=$((SECONDS + 60))
until "$bin" status --coordinator "$ep" --timeout 1 2>/dev/null | grep -q '"state":"running"' || ((SECONDS > deadline)); do
  sleep 0.2
done
if "$bin" export --coordinator "$ep" >noout.out 2>noout.err; then
  fail "an export without --out succeeded"
else
  rc=$?
  [[ $rc == 2 ]] && grep -q -- "--out is required" noout.err || fail "export without --out: exit $rc, $(cat noout.err)"
fi
if "$bin" export --coordinator "$ep" --out "$work/no/such/dir/m.ssm" >bad.out 2>bad.err; then
  fail "an export into a missing directory succeeded"
else
  grep -q "no/such/dir" bad.err || fail "the failed export does not name the path: $(cat bad.err)"
fi
"$bin" export --coordinator "$ep" --out "$work/mid.ssm" >mid.out 2>mid.err || fail "export on request failed: $(cat mid.err)"
wait $cluster || fail "the cluster failed: $(tail -3 cluster.err)"
tail -1 cluster.out >cluster.json

[[ -s final.ssm ]] || fail "no final model written"
[[ "$(field cluster.json export_rows)" -gt 0 ]] || fail "the job's JSON reports no exported rows"
"$bin" predict --model final.ssm --test data/test.tsv --threads 1 >predict.out 2>predict.err || fail "predict failed"
tail -1 predict.out >predict.json
for k in test_examples test_logloss test_ne test_auc test_calibration; do
  [[ "$(field cluster.json $k)" == "$(field predict.json $k)" ]] ||
    fail "$k: the cluster measured $(field cluster.json $k), predict with its exported model $(field predict.json $k)"
done
[[ "$(field predict.json model_rows)" == "$(field cluster.json export_rows)" ]] || fail "model rows differ"

if [[ -s mid.ssm ]]; then
  "$bin" predict --model mid.ssm --test data/test.tsv >mid_predict.out 2>&1 || fail "predict with the mid-job model failed"
  [[ "$(field mid.out rows)" -gt 0 ]] || fail "the mid-job export has no rows"
fi
echo "cluster:  $(grep -o '"test_ne":[^,]*' cluster.json), export_rows $(field cluster.json export_rows)"
echo "predict:  $(grep -o '"test_ne":[^,]*' predict.json), model_rows $(field predict.json model_rows)"
echo "mid-job:  $(tail -1 mid.out)"
if ((failures > 0)); then echo "export/predict: $failures check(s) failed"; exit 1; fi
echo "export/predict: every check passed"
