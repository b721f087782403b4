#!/usr/bin/env bash
# CURVE end to end with real processes:
#   - `keygen --cluster` writes a key set (secret files 0600, authorized_keys with every member),
#     refuses to overwrite it; `keygen --out --name` writes one pair;
#   - a service refuses to start with a partial --curve-* set or a world-readable secret key;
#   - `local --processes --curve-dir` makes a key set, trains to the end over CURVE links;
#   - meanwhile `status` without keys, and with a key not in authorized_keys, gets no answer
#     (and the coordinator logs both refusals), while `status` with admin.key works.
# usage: curve_cluster.sh SHADOWSYNC_BINARY
set -euo pipefail
bin=$(readlink -f "$1")
work=$(mktemp -d /tmp/ss-curve.XXXXXX)
cluster=""
cleanup() {
  if [[ -n "$cluster" ]]; then kill "$cluster" 2>/dev/null || true; wait "$cluster" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# ---- keygen
"$bin" keygen --cluster --out keys --members coordinator,shard-0,admin >keygen.out 2>keygen.err ||
  fail "keygen --cluster failed: $(cat keygen.err)"
for f in server.key server.pub coordinator.key coordinator.pub shard-0.key admin.key authorized_keys; do
  [[ -s keys/$f ]] || fail "keygen --cluster did not write $f"
done
[[ "$(stat -c %a keys/shard-0.key)" == 600 ]] || fail "shard-0.key has mode $(stat -c %a keys/shard-0.key), not 600"
[[ "$(grep -vc '^#' keys/authorized_keys)" == 3 ]] || fail "authorized_keys does not list 3 keys: $(cat keys/authorized_keys)"
grep -qF -- "$(grep "^public-key" keys/shard-0.pub | cut -d" " -f3)" keys/authorized_keys || fail "shard-0's key is not authorized"
grep -q secret-key keys/server.pub && fail "server.pub holds a secret key"
if "$bin" keygen --cluster --out keys --members coordinator >again.out 2>again.err; then
  fail "keygen --cluster overwrote an existing set"
else
  grep -q "never overwritten" again.err || fail "no clear message for an existing set: $(cat again.err)"
fi
"$bin" keygen --out single --name alice >single.out 2>&1 || fail "keygen --name failed: $(cat single.out)"
[[ -s single/alice.key && -s single/alice.pub ]] || fail "keygen --name alice wrote no alice.key/.pub"

# ---- refusals at start
if "$bin" shard --index 0 --listen tcp://127.0.0.1:0 --curve-server-key keys/server.key >partial.out 2>&1; then
  fail "a shard started with a partial --curve-* set"
else
  grep -q "give all three of --curve-server-key" partial.out || fail "partial set: $(cat partial.out)"
fi
cp keys/shard-0.key open.key && chmod 644 open.key
if "$bin" shard --index 0 --listen tcp://127.0.0.1:0 --curve-server-key keys/server.key --curve-client-key open.key \
  --curve-authorized-keys keys/authorized_keys >open.out 2>&1; then
  fail "a shard started with a world-readable secret key"
else
  grep -q "must not be accessible by group or others (mode 0644)" open.out || fail "open key: $(cat open.out)"
fi

# ---- a CURVE cluster
"$bin" keygen --out stranger --name eve >/dev/null 2>&1
"$bin" local --processes --trainers 1 --shards 2 --readers 1 --rows 40000 --test-rows 4000 --data-dir data \
  --curve-dir ck --run-dir run --log-level warn >cluster.out 2>cluster.err &
cluster=$!
deadline=$((SECONDS + 60))
until [[ -s run/coordinator.endpoint ]] || ((SECONDS > deadline)); do sleep 0.1; done
ep=$(cat run/coordinator.endpoint)
keyed=(--curve-server-key ck/server.pub --curve-client-key ck/admin.key)
deadline=$((SECONDS + 60))
until "$bin" status --coordinator "$ep" --timeout 1 "${keyed[@]}" >status.out 2>status.err || ((SECONDS > deadline)); do
  sleep 0.2
done
grep -q '"state"' status.out || fail "status with admin.key got no answer: $(cat status.err)"
if "$bin" status --coordinator "$ep" --timeout 2 >plain.out 2>plain.err; then
  fail "a plain status client got an answer from a CURVE coordinator: $(cat plain.out)"
else
  grep -q "give --curve-server-key" plain.err || fail "the plain client's error has no hint: $(cat plain.err)"
fi
if "$bin" status --coordinator "$ep" --timeout 2 --curve-server-key ck/server.pub \
  --curve-client-key stranger/eve.key >eve.out 2>eve.err; then
  fail "a client with an unknown key got an answer: $(cat eve.out)"
fi
# Authority: a member's key (a reader's) may train but not control the job; the admin key may.
member=(--curve-server-key ck/server.pub --curve-client-key ck/reader-0.key)
if "$bin" export --coordinator "$ep" --timeout 5 "${member[@]}" --out m.ssm >member.out 2>member.err; then
  fail "a reader's key exported the model"
else
  grep -q "export_request from member key 'reader-0' at 127.0.0.1 refused" member.err ||
    fail "the member's export was not refused by role: $(cat member.err)"
fi
"$bin" status --coordinator "$ep" --timeout 5 "${member[@]}" >member-status.out 2>&1 ||
  fail "a member's key could not read the status: $(cat member-status.out)"
if "$bin" export --coordinator "$ep" --timeout 5 "${keyed[@]}" --out /etc/shadowsync-test.ssm >out.out 2>out.err; then
  fail "an export outside the coordinator's --export-dir succeeded"
else
  grep -q "only under the coordinator's --export-dir" out.err || fail "export outside: $(cat out.err)"
fi
"$bin" snapshot --coordinator "$ep" --timeout 60 "${keyed[@]}" >snap.out 2>snap.err ||
  fail "the admin key could not take a snapshot: $(cat snap.err)"
grep -q "^role=\|role=admin" ck/authorized_keys || fail "authorized_keys has no roles: $(cat ck/authorized_keys)"
wait $cluster || fail "the CURVE cluster failed: $(tail -5 cluster.err)"
cluster=""
tail -1 cluster.out >cluster.json
grep -q '"examples_committed":40000' cluster.json || fail "not every row was committed: $(cat cluster.json)"
eve=$(grep '^public-key' stranger/eve.pub | cut -d' ' -f3)
grep -qF "refused a CURVE client with unknown key $eve from 127.0.0.1" cluster.err ||
  fail "the coordinator did not log the unknown key"
grep -Eq "refused a connection on .*(does not speak CURVE|hung up during the handshake)" cluster.err ||
  fail "the coordinator did not log the plain client"
grep -q "plain (unauthenticated" cluster.err && fail "a CURVE cluster warned about plain mode"
grep -q "export_request from member key 'reader-0' at 127.0.0.1 refused" cluster.err ||
  fail "the coordinator did not log the refused control request with its sender"
[[ "$(stat -c %a ck/trainer-0.key)" == 600 ]] || fail "local --curve-dir wrote trainer-0.key with mode $(stat -c %a ck/trainer-0.key)"
echo "cluster:  $(grep -o '"examples_committed":[^,]*' cluster.json), $(grep -o '"test_ne":[^,]*' cluster.json)"
echo "refusals: $(grep -c 'refused' cluster.err) line(s) in the cluster's log, e.g."
grep "refused" cluster.err | head -5 | sed 's/^/  /'
if ((failures > 0)); then echo "curve: $failures check(s) failed"; exit 1; fi
echo "curve: every check passed"
