#!/usr/bin/env bash
# A shard with a memory budget whose storage fills up while it writes rows back stops serving the
# job with the reason (docs/embeddings.md): its data directory is a 16 MB tmpfs, mounted in a user
# and mount namespace the test makes for itself, and storage keeps a 12 MB reserve (RocksDB with
# --storage-memory-mb 8: two 2 MB memtables + 8 MB); the job fails naming the shard and the full
# disk; no process crashes (RocksDB itself aborts when written after a failed write) or hangs.
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
exit $((failures > 0))
