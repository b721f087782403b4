#!/usr/bin/env bash
# Resource bounds of real service processes: a coordinator with --max-connections 2 refuses a
# third connection at its handshake (the client is told, the refusal is counted in status and
# /metrics) and admits it once one closes; the bounds are reported in status; a full embedding
# table evicts rows for good and the job ends (with and without a memory budget); bad bound
# flags exit 2.
# usage: resource_limits.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" limits
trap 'exec 3>&- 2>/dev/null || true; leave_work_dir' EXIT  # the client connection held on fd 3 first
wait_for() {  # wait_for SECONDS COMMAND...: until the command succeeds
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}
"$bin" gen-data --rows 5000 --test-rows 500 --out data >/dev/null 2>&1

# Bad bounds are refused before anything starts.
for flag in "--max-frame-mb 0" "--max-connections -1" "--max-inflight-requests x" "--max-queued-frames 0" "--storage-memory-mb 2" "--release-memory-interval -1"; do
  # shellcheck disable=SC2086
  if "$bin" shard --index 0 $flag >/dev/null 2>bad.err; then
    fail "shard $flag was accepted"
  else
    [[ $? == 2 ]] || fail "shard $flag: exit code is not 2"
    grep -q -- "${flag%% *}" bad.err || fail "shard $flag: the error does not name the flag: $(cat bad.err)"
  fi
done

# A coordinator that keeps at most 2 connections open, and one shard that joins it (1 open).
"$bin" coordinator --listen tcp://127.0.0.1:0 --ops-listen 127.0.0.1:0 --shards 1 --readers 1 \
  --max-connections 2 --max-inflight-requests 64 --max-frame-mb 16 \
  --train data/train.tsv 2>coord.err >coord.out &
ep_of() { grep -o 'coordinator: up at tcp://[0-9.]*:[0-9]*' coord.err | grep -o 'tcp://.*'; }
wait_for 20 ep_of >/dev/null || fail "the coordinator did not come up: $(cat coord.err)"
ep=$(ep_of)
port=${ep##*:}
ops=$(grep -o 'metrics at http://[^:]*:[0-9]*' coord.err | grep -o '[0-9]*$')
"$bin" shard --index 0 --coordinator "$ep" --listen tcp://127.0.0.1:0 --data-dir shard-data --storage-memory-mb 16 \
  2>shard.err &
wait_for 20 grep -q "shard-0 joined" coord.err || fail "the shard did not join: $(cat shard.err)"

status_json() { "$bin" status --coordinator "$ep" --timeout "${1:-5}" 2>status.err; }
status_json >status.json || fail "status with 1 of 2 connections open failed: $(cat status.err)"
for f in '"max_connections":2' '"max_requests_in_flight":64' '"max_frame_bytes":16777216' '"connections_refused":0'; do
  grep -q "$f" status.json || fail "status lacks $f: $(cat status.json)"
done
# The shard's RocksDB memory stays within --storage-memory-mb, and says so.
shard_ep=$(grep -o '"name":"shard-0","role":"shard","index":0,"endpoint":"[^"]*"' status.json | grep -o 'tcp://[^"]*')
# (A shard answers status once it has opened its storage; a slow build gets there later.)
shard_status() { "$bin" status --coordinator "$shard_ep" --timeout 5 >shard-status.json 2>&1; }
wait_for 30 shard_status || fail "shard status failed: $(cat shard-status.json)"
grep -q '"storage_memory_bound_bytes":16777216' shard-status.json || fail "the shard does not report its storage bound: $(cat shard-status.json)"

# A raw tcp connection that never speaks ZMTP holds the second slot (libzmq drops it after its
# 30 s handshake interval); the next client is refused at its handshake.
exec 3<>"/dev/tcp/127.0.0.1/$port"
if status_json 3 >refused.json; then
  fail "status got through with the bound reached: $(cat refused.json)"
fi
grep -q "refused this client.s connection at its handshake" status.err || fail "the refused client was not told why: $(cat status.err)"
grep -q "connections are open (the bound, --max-connections)" coord.err ||
  fail "the coordinator did not log the refusal: $(tail -5 coord.err)"
curl -s "http://127.0.0.1:$ops/metrics" >coord.metrics
grep -Eq '^shadowsync_transport_connections_refused\{service="coordinator"\} [1-9]' coord.metrics ||
  fail "/metrics does not count the refusal: $(grep connections coord.metrics)"

# Once the raw connection closes, the next client is admitted.
exec 3>&-
wait_for 10 status_json 2 >after.json || fail "status was still refused after a connection closed: $(cat status.err)"
grep -Eq '"connections_refused":[1-9]' after.json || fail "status does not report the refusals: $(cat after.json)"
kill -TERM %1 %2 2>/dev/null || true
wait || true

# A table that reaches --max-rows-per-table evicts rows for good instead of failing the job: the
# job ends with a model, and each shard says how many rows its full tables gave up.
if ! "$bin" local --rows 5000 --test-rows 500 --data-dir data-local --max-rows-per-table 50 >full.out 2>full.err; then
  fail "a job with 50-row tables failed: $(tail -3 full.err)"
fi
grep -Eq "full tables \(--max-rows-per-table 50\) evicted [1-9][0-9]* rows for good" full.out full.err ||
  fail "the shards do not report their full tables' evictions: $(grep -h 'max-rows-per-table' full.out full.err | head -3)"
line=$(grep -hoE "evicted [0-9]+ rows for good; [0-9]+ rows held in [0-9]+ tables" full.out full.err | head -1)
read -r _ held tables <<<"$(echo "$line" | grep -oE "[0-9]+" | tr '\n' ' ')"
[[ -n "$held" && -n "$tables" ]] || fail "no rows held reported: $line"
((held <= tables * 50)) || fail "the shard holds $held rows in $tables tables of at most 50"

# The same under a memory budget, where a full table gives up cold rows at each flush.
if ! "$bin" local --rows 5000 --test-rows 500 --data-dir data-local --max-rows-per-table 50 --state-dir tiered-state \
  --memory-budget-mb 1 >tiered.out 2>tiered.err; then
  fail "a tiered job with 50-row tables failed: $(tail -3 tiered.err)"
fi
line=$(grep -hoE "evicted [0-9]+ rows for good; [0-9]+ rows held in [0-9]+ tables" tiered.out tiered.err | head -1)
read -r evicted held tables <<<"$(echo "$line" | grep -oE "[0-9]+" | tr '\n' ' ')"
[[ -n "$tables" ]] || fail "the tiered shard does not report its full tables: $(tail -3 tiered.err)"
((evicted > 0 && held <= tables * 50)) || fail "tiered: $line"

if ((failures > 0)); then
  echo "resource_limits: $failures failure(s)"
  exit 1
fi
echo "resource_limits: all checks passed"
