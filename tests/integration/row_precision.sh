#!/usr/bin/env bash
# 16-bit embedding rows (--row-precision) in a cluster of real processes:
#   - bf16 and fp16 jobs train to the end; their exported models are smaller (rows at 2 bytes a
#     value) and `predict` reproduces each job's test metrics exactly from them;
#   - in one deterministic job shape (1 trainer, 1 thread, 1 shard, no sync) a 16-bit job's test
#     NE is within a bound of the FP32 job's (docs/embeddings.md has the measured spread);
#   - a job killed -9 resumes at its precision, every row once; a resume at another precision is
#     refused naming it, its snapshot untouched;
#   - `train` refuses 16-bit rows and an unknown precision is refused, each with the reason.
# usage: row_precision.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" precision
rows=${SS_PRECISION_ROWS:-100000}
"$bin" gen-data --rows "$rows" --test-rows 10000 --out data >/dev/null 2>&1
data=(--train data/train.tsv --test data/test.tsv)
one=(--trainers 1 --threads 1 --lookahead 0 --shards 1 --sync none)
ne_bound=${SS_PRECISION_NE_BOUND:-1.01}

run_job() {
  local name=$1
  shift
  "$bin" local "${data[@]}" --progress-interval 0 --log-level warn "$@" >"$name.out" 2>"$name.err" ||
    fail "$name: the job failed: $(tail -3 "$name.err")"
  tail -1 "$name.out" >"$name.json"
}

echo "1. jobs at each precision, as processes: every row once, predict reproduces them"
for p in fp32 bf16 fp16; do
  run_job "$p" --processes --trainers 2 --shards 2 --row-precision "$p" --export "$work/$p.ssm"
  [[ "$(field "$p.json" examples_committed)" == "$rows" ]] ||
    fail "$p: $(field "$p.json" examples_committed) examples committed, expected $rows"
  predict_reproduces "$p.json" "$p.ssm"
  echo "  $p: test NE $(field "$p.json" test_ne), model $(stat -c %s "$p.ssm") bytes"
done
for p in bf16 fp16; do
  # Rows of 16 values: 8 + 32 bytes against 8 + 64; the dense part is the same.
  awk -v a="$(stat -c %s "$p.ssm")" -v b="$(stat -c %s fp32.ssm)" 'BEGIN { exit !(a < 0.7 * b) }' ||
    fail "$p: the model file is $(stat -c %s "$p.ssm") bytes, fp32's $(stat -c %s fp32.ssm): not smaller by its rows' half"
done

echo "2. one deterministic shape: the 16-bit jobs' test NE against fp32's (bound x$ne_bound)"
for p in fp32 bf16 fp16; do run_job "one-$p" "${one[@]}" --row-precision "$p"; done
for p in bf16 fp16; do
  ne=$(field "one-$p.json" test_ne)
  base=$(field one-fp32.json test_ne)
  awk -v a="$ne" -v b="$base" -v k="$ne_bound" 'BEGIN { exit !(a <= b * k && a >= b / k) }' ||
    fail "$p: test NE $ne, fp32's $base (bound x$ne_bound)"
  echo "  $p: test NE $ne, fp32 $base"
done

echo "3. a bf16 job killed -9 resumes at bf16, every row once; at fp32 it is refused"
kill_at_snapshot killed 1 "$bin" local "${data[@]}" "${one[@]}" --row-precision bf16 --state-dir killed.state \
  --snapshot-interval 1 --progress-interval 0 --log-level warn
before=$(ls -R killed.state/snapshots | md5sum)
if "$bin" local "${data[@]}" "${one[@]}" --row-precision fp32 --state-dir killed.state --progress-interval 0 \
  --log-level warn >wrong.out 2>wrong.err; then
  fail "a resume at fp32 of a bf16 job's snapshot succeeded"
fi
grep -q -- "--row-precision: the snapshot has bf16, this run fp32" wrong.err ||
  fail "the refused resume does not name the precision: $(tail -2 wrong.err)"
[[ "$(ls -R killed.state/snapshots | md5sum)" == "$before" ]] || fail "the refused resume changed the snapshots"
run_job resumed "${one[@]}" --row-precision bf16 --state-dir killed.state
[[ "$(field resumed.json examples_committed)" == "$rows" ]] ||
  fail "resumed: $(field resumed.json examples_committed) examples committed, expected $rows"
echo "  resumed: test NE $(field resumed.json test_ne), refused at fp32: $(grep -o -- '--row-precision: [^;]*' wrong.err | head -1)"

echo "4. bad settings are refused with the reason"
if "$bin" train "${data[@]}" --row-precision bf16 >train.out 2>train.err; then fail "train took bf16 rows"; fi
grep -q "the single-process trainer's workers read its rows in place" train.err ||
  fail "train's refusal does not say why: $(tail -1 train.err)"
if "$bin" local "${data[@]}" --row-precision fp8 >bad.out 2>bad.err; then fail "--row-precision fp8 was taken"; fi
grep -q "fp8" bad.err || fail "the unknown precision is not named: $(tail -1 bad.err)"

if ((failures > 0)); then echo "row precision: $failures check(s) failed"; exit 1; fi
echo "row precision: every check passed"
