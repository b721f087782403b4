#!/usr/bin/env bash
# A full disk (docs/embeddings.md, docs/online.md). A shard with a memory budget whose storage
# fills up while it writes rows back stops serving the job with the reason: its data directory is a 16 MB tmpfs, mounted in a user
# and mount namespace the test makes for itself, and storage keeps a 12 MB reserve (RocksDB with
# --storage-memory-mb 8: two 2 MB memtables + 8 MB); the job fails naming the shard and the full
# disk; no process crashes (RocksDB itself aborts when written after a failed write) or hangs.
# A publish directory that fills up fails publications (counted, retried, no debris), and the job
# finishes with exit status 3; a --publish-dir that cannot be made is refused at start.
# Needs user namespaces (unprivileged, or root): where the kernel refuses them the test says so
# and exits 77, which ctest shows as skipped, not passed.
# usage: full_disk.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" fulldisk
if ! unshare -rm sh -c 'mkdir -p probe && mount -t tmpfs -o size=1m tmpfs probe' 2>/dev/null; then
  echo "SKIP: this kernel refuses a user and mount namespace (unshare -rm), so no small disk can be made"
  exit 77
fi
"$bin" gen-data --rows 60000 --test-rows 5000 --out data >/dev/null 2>&1
mkdir -p state/shard-0
rc=0
# shellcheck disable=SC2016  # expanded by the inner shell
timeout 300 unshare -rm sh -c 'mount -t tmpfs -o size=16m tmpfs state/shard-0 && exec "$@"' sh \
  "$bin" local --trainers 1 --threads 1 --shards 1 --readers 1 --sync none --state-dir state \
  --memory-budget-mb 1 --storage-memory-mb 8 --flush-interval 0.05 --train data/train.tsv --test data/test.tsv \
  --progress-interval 0 --log-level info >job.out 2>job.err || rc=$?
tail -1 job.out >job.json
[[ $rc == 124 ]] && fail "the job hung (killed after 300 s)"
[[ $rc == 1 ]] || fail "exit $rc, expected 1 (the job failed)"
error=$(text_field job.json error)
echo "$error" | grep -q "shard-0: writing rows back to storage failed (.*no space left on the device of .*MB free, under the 12.6 MB reserve" ||
  fail "the result does not say that shard-0's disk is full: $error"
grep -q "shard-0: writing changed rows to storage failed" job.err || fail "the shard logged no write failure"
grep -q "shard-0: loaded its stored rows" job.err || fail "the shard did not start (the test tests nothing)"
grep -qiE "terminate called|segmentation fault|AddressSanitizer|core dumped" job.err && fail "a process crashed"
echo "exit $rc: ${error:-?}"

# A publish directory that fills up (a 12 MB tmpfs: a base and a delta or two fit, docs/online.md):
# the job trains to the end, each failed publication is counted and tried again, no temporary file
# is left, the final publication's failure is in the result with exit status 3, and what was
# written stays a usable chain.
mkdir -p pub
rc=0
# Inside the namespace, after the job: what the directory holds, and predict on it (the mount goes
# with the namespace).
# shellcheck disable=SC2016  # expanded by the inner shell
timeout 300 unshare -rm sh -c 'mount -t tmpfs -o size=12m tmpfs pub || exit 9
  rc=0; "$@" >pub.out 2>pub.err || rc=$?
  ls -a pub >pub.ls
  "$0" predict --publish-dir pub --test data/test.tsv --threads 1 >chain.out 2>chain.err || echo "predict failed" >>chain.err
  exit $rc' "$bin" \
  "$bin" local --trainers 1 --threads 1 --shards 1 --readers 1 --sync none --train data/train.tsv --test data/test.tsv \
  --publish-dir pub --publish-interval 0.2 --progress-interval 0 --log-level info || rc=$?
tail -1 pub.out >pub.json
[[ $rc == 3 ]] || fail "publishing to a full disk: exit $rc, expected 3 (finished, the final publication failed)"
[[ "$(field pub.json ok)" == true ]] || fail "the job did not end ok: $(text_field pub.json error)"
[[ "$(field pub.json examples_committed)" == 60000 ]] || fail "committed $(field pub.json examples_committed) of 60000"
(($(field pub.json publications) >= 1)) || fail "nothing was published before the disk filled"
(($(field pub.json publications_failed) >= 1)) || fail "no publication failed: the disk never filled (the test tests nothing)"
text_field pub.json publish_error | grep -qi "no space" ||
  fail "publish_error does not say the disk is full: $(text_field pub.json publish_error)"
grep -q "the final publication FAILED" pub.out || fail "the summary does not say the final publication failed"
grep -q "tmp" pub.ls && fail "temporary files left in the publish directory: $(tr '\n' ' ' <pub.ls)"
grep -q "predict failed" chain.err && fail "the chain written before the disk filled is unusable: $(head -2 chain.err)"
[[ "$(tail -1 chain.out | grep -o '"publication":[0-9]*' | cut -d: -f2)" == "$(field pub.json last_publication)" ]] ||
  fail "predict scored publication $(tail -1 chain.out | grep -o '"publication":[0-9]*'), the job's newest is $(field pub.json last_publication)"
echo "publish to a full disk: exit $rc, $(field pub.json publications) written, $(field pub.json publications_failed) failed: $(text_field pub.json publish_error)"

# A --publish-dir that cannot be made: refused at start, naming the flag.
: >not-a-dir
rc=0
"$bin" local --train data/train.tsv --publish-dir not-a-dir/pub >bad.out 2>bad.err || rc=$?
[[ $rc == 2 ]] || fail "--publish-dir under a file: exit $rc, expected 2"
grep -q -- "--publish-dir" bad.err || fail "the refusal does not name --publish-dir: $(cat bad.err)"
exit $((failures > 0))
