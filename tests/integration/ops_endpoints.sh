#!/usr/bin/env bash
# The ops endpoint of real service processes, scraped with curl: /healthz, /readyz (not ready
# while a shard waits to join, ready once it has), /metrics in Prometheus text format with the
# service's status numbers; a bad --ops-listen is refused with exit 2.
# usage: ops_endpoints.sh SHADOWSYNC_BINARY
set -euo pipefail
source "$(dirname "$0")/lib.sh"
in_work_dir "$1" ops
"$bin" gen-data --rows 20000 --test-rows 1000 --out data >/dev/null 2>&1

ops_port() {  # ops_port LOG: the port the service's ops endpoint bound (it logs it)
  local deadline=$((SECONDS + 20)) p=""
  while [[ -z "$p" ]] && ((SECONDS < deadline)); do
    p=$(grep -o 'health and metrics at http://[^:]*:[0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$' || true)
    sleep 0.1
  done
  echo "$p"
}
http_code() { curl -s -o /dev/null -w '%{http_code}' "$1"; }

# A shard first, with no coordinator yet: live, not ready.
"$bin" shard --index 0 --coordinator tcp://127.0.0.1:1 --listen tcp://127.0.0.1:0 --ops-listen 127.0.0.1:0 \
  --log-level info 2>shard-wait.err &
shard_wait=$!
port=$(ops_port shard-wait.err)
[[ -n "$port" ]] || fail "the waiting shard did not report its ops port"
if [[ -n "$port" ]]; then
  [[ "$(http_code "http://127.0.0.1:$port/healthz")" == 200 ]] || fail "a waiting shard is not live"
  [[ "$(http_code "http://127.0.0.1:$port/readyz")" == 503 ]] || fail "a shard that has not joined says ready"
  curl -s "http://127.0.0.1:$port/readyz" | grep -q "not ready: starting" || fail "readyz gives no reason"
  [[ "$(http_code "http://127.0.0.1:$port/nope")" == 404 ]] || fail "an unknown path is not 404"
fi
kill -TERM $shard_wait
wait $shard_wait || true

# A coordinator and a shard that joins it.
"$bin" coordinator --listen tcp://127.0.0.1:0 --ops-listen 127.0.0.1:0 --shards 1 --readers 1 \
  --train data/train.tsv --test data/test.tsv 2>coord.err >coord.out &
coord=$!
cport=$(ops_port coord.err)
deadline=$((SECONDS + 20))
ep=""
while [[ -z "$ep" ]] && ((SECONDS < deadline)); do
  ep=$(grep -o 'coordinator: up at tcp://[0-9.]*:[0-9]*' coord.err | grep -o 'tcp://.*' || true)
  sleep 0.1
done
"$bin" shard --index 0 --coordinator "$ep" --listen tcp://127.0.0.1:0 --ops-listen 127.0.0.1:0 2>shard.err &
shard=$!
sport=$(ops_port shard.err)
deadline=$((SECONDS + 20))
until [[ "$(http_code "http://127.0.0.1:$sport/readyz")" == 200 ]] || ((SECONDS > deadline)); do sleep 0.2; done
[[ "$(http_code "http://127.0.0.1:$sport/readyz")" == 200 ]] || fail "a joined shard is not ready"
[[ "$(http_code "http://127.0.0.1:$cport/readyz")" == 200 ]] || fail "a running coordinator is not ready"
curl -s -D headers.txt "http://127.0.0.1:$cport/metrics" >coord.metrics
grep -qi '^content-type: text/plain; version=0.0.4' headers.txt || fail "metrics content type: $(grep -i content-type headers.txt)"
for m in 'shadowsync_up{service="coordinator"} 1' 'shadowsync_service_examples_committed{service="coordinator"}' \
  'shadowsync_service_seconds_since_snapshot{service="coordinator"}' 'shadowsync_transport_queue_depth{service="coordinator"}' \
  '# TYPE shadowsync_up gauge'; do
  grep -qF "$m" coord.metrics || fail "coordinator metrics lack $m"
done
curl -s "http://127.0.0.1:$sport/metrics" >shard.metrics
for m in 'shadowsync_up{service="shard-0"} 1' 'shadowsync_service_rows{service="shard-0"}' \
  'shadowsync_service_lookups{service="shard-0"}'; do
  grep -qF "$m" shard.metrics || fail "shard metrics lack $m"
done
# Names, types and help come from the status tables (ss/actors/status_metrics.hpp), not from
# whatever keys the status holds: the coordinator's per-member array is not exported.
grep -qF '# TYPE shadowsync_service_lookups counter' shard.metrics || fail "lookups is not a counter"
grep -qF '# HELP shadowsync_service_rows Embedding rows held.' shard.metrics || fail "rows has no help: $(grep rows shard.metrics)"
grep -q 'shadowsync_service_members_' coord.metrics && fail "the coordinator exports per-member fields by index"
# Every sample line is NAME{labels} VALUE with a number (what a Prometheus scrape parses).
bad=$(grep -v '^#' coord.metrics shard.metrics | grep -cvE '^[^:]+:[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfNa]+$' || true)
[[ "$bad" == 0 ]] || fail "$bad metric lines are not in the text format"
# The coordinator's dashboard: the page, and its API answering what status shows; read-only; no
# dashboard on a member's endpoint.
grep -q "coordinator: dashboard at http://127.0.0.1:$cport/" coord.err || fail "the coordinator does not say where its dashboard is"
grep -q "reaches beyond this host" coord.err && fail "a loopback endpoint was warned about"
[[ "$(http_code "http://127.0.0.1:$cport/")" == 200 ]] || fail "no dashboard page at /"
curl -s "http://127.0.0.1:$cport/api/status" | grep -q '"service":{"role":"coordinator"' || fail "/api/status is not the status"
curl -s "http://127.0.0.1:$cport/api/history" | grep -q '"series":{' || fail "/api/history has no series"
[[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$cport/api/status")" == 405 ]] || fail "POST to the API is not refused"
[[ "$(http_code "http://127.0.0.1:$sport/")" == 404 ]] || fail "a shard serves a dashboard"
kill -TERM $shard $coord
wait $coord || fail "the coordinator did not exit 0 on SIGTERM"
wait $shard || fail "the shard did not exit 0 on SIGTERM"

# An endpoint beyond loopback says so at start.
"$bin" shard --index 0 --coordinator tcp://127.0.0.1:1 --listen tcp://127.0.0.1:0 --ops-listen 0.0.0.0:0 \
  --log-level info 2>shard-open.err &
shard_open=$!
[[ -n "$(ops_port shard-open.err)" ]] || fail "the shard on 0.0.0.0 did not report its ops port"
grep -q "reaches beyond this host.*read-only" shard-open.err || fail "no warning for --ops-listen 0.0.0.0: $(cat shard-open.err)"
kill -TERM $shard_open
wait $shard_open || true

# A bad address is a usage error.
if "$bin" shard --index 0 --ops-listen nonsense 2>bad.err; then fail "--ops-listen nonsense was accepted"; else
  rc=$?
  [[ $rc == 2 ]] || fail "--ops-listen nonsense exited $rc, expected 2"
  grep -q "expected HOST:PORT" bad.err || fail "no clear message for a bad --ops-listen: $(cat bad.err)"
fi
if ((failures > 0)); then echo "ops endpoints: $failures check(s) failed"; exit 1; fi
echo "ops endpoints: every check passed ($(grep -vc '^#' coord.metrics) coordinator and $(grep -vc '^#' shard.metrics) shard samples)"
