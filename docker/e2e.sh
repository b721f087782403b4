#!/usr/bin/env bash
# End-to-end test of the container deployment: builds the image, makes a CURVE key set
# (docker/curve-keys.sh), starts the compose cluster (docker/compose.yaml: CURVE on every link),
# checks that clients without an accepted key are refused while the admin key is answered, restarts
# shard-1 in the middle of training, and checks that the job finishes with every training example
# trained exactly once.
#
#   docker/e2e.sh [--prebuilt PATH | --image TAG] [--rows N] [--jobs N] [--keep]
#
#   --prebuilt PATH  package this shadowsync binary (built on Debian 12) instead of compiling in the
#                    image's build stage (a full build there takes a while on a 2-core machine)
#   --image TAG      test this image, already built from docker/Dockerfile (no build)
#   --rows N         training rows to generate (default 1000000; enough for the restart to land
#                    mid-training)
#   --jobs N         compile jobs in the build stage (default: nproc)
#   --keep           leave the cluster (and a dockerd this script started) running
#
# Needs a Docker engine. When none answers (DOCKER_HOST or the default socket), the script starts
# its own dockerd (root, package docker.io) with its state under $SS_E2E_DIR (default
# /tmp/shadowsync-e2e) and stops it at the end. No registry is needed: the Debian base image is made
# with debootstrap by docker/make-base-image.sh (package debootstrap; needs the Debian mirror).
# Compose: `docker compose` (v2 plugin) when present, else docker-compose (Debian's 1.29).
# Exit status 0: the job finished with the expected example counts after the restart.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREBUILT=""
USE_IMAGE=""
ROWS=1000000
JOBS=$(nproc)
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt) PREBUILT="$2"; shift 2 ;;
    --image) USE_IMAGE="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "e2e: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

E2E_DIR=${SS_E2E_DIR:-/tmp/shadowsync-e2e}
PROJECT=${SS_E2E_PROJECT:-shadowsync-e2e}
IMAGE=${USE_IMAGE:-${SHADOWSYNC_IMAGE:-shadowsync:e2e}}
TIMEOUT=${SS_E2E_TIMEOUT:-900}
mkdir -p "$E2E_DIR"
log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "FAILED: $*"; exit 1; }

if [ -z "${DOCKER:-}" ]; then
  if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER=docker; fi
fi
export DOCKER

# --- 1. a Docker engine ------------------------------------------------------------------------
STARTED_DOCKERD=0
ENGINE="$E2E_DIR/engine"
stop_dockerd() {
  [ "$STARTED_DOCKERD" = 1 ] || return 0
  local pid
  pid=$(cat "$ENGINE/docker.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    log "stopping the dockerd this script started (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  # dockerd leaves its bridge, iptables rules and chains and forwarding behind; remove them
  # (only rules that name docker0, a compose bridge br-* or a DOCKER chain) and put the forwarding
  # settings back as they were.
  if [ -f "$ENGINE/host-network.orig" ]; then
    local table rule chain
    for table in filter nat; do
      iptables -t "$table" -S 2>/dev/null | grep -E -- '^-A .*(docker0|br-[0-9a-f]{12}|DOCKER)' \
        | sed 's/^-A /-D /' | tac > "$ENGINE/rules.$table" || true
      while read -r rule; do
        eval "iptables -t $table $rule" 2>/dev/null || true
      done < "$ENGINE/rules.$table"
      for chain in $(iptables -t "$table" -S 2>/dev/null | awk '/^-N DOCKER/ {print $2}' || true); do
        iptables -t "$table" -F "$chain" 2>/dev/null || true
        iptables -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
    ip link delete docker0 2>/dev/null || true
    # shellcheck disable=SC1091
    . "$ENGINE/host-network.orig"
    sysctl -qw net.ipv4.ip_forward="$IP_FORWARD" 2>/dev/null || true
    iptables -P FORWARD "$FORWARD_POLICY" 2>/dev/null || true
  fi
}

if ! "$DOCKER" info >/dev/null 2>&1; then
  command -v dockerd >/dev/null || die "no Docker engine answers and dockerd is not installed (apt-get install docker.io)"
  [ "$(id -u)" -eq 0 ] || die "no Docker engine answers; starting dockerd needs root"
  mkdir -p "$ENGINE"
  printf 'IP_FORWARD=%s\nFORWARD_POLICY=%s\n' "$(cat /proc/sys/net/ipv4/ip_forward)" \
    "$(iptables -S FORWARD 2>/dev/null | awk '/^-P FORWARD/ {print $3}' | head -1)" > "$ENGINE/host-network.orig"
  sed -i 's/FORWARD_POLICY=$/FORWARD_POLICY=ACCEPT/' "$ENGINE/host-network.orig"
  log "no Docker engine answers: starting dockerd (state in $ENGINE)"
  dockerd --data-root "$ENGINE/data" --exec-root "$ENGINE/exec" -H "unix://$ENGINE/docker.sock" \
    --pidfile "$ENGINE/docker.pid" > "$ENGINE/dockerd.log" 2>&1 &
  STARTED_DOCKERD=1
  export DOCKER_HOST="unix://$ENGINE/docker.sock"
  for _ in $(seq 60); do "$DOCKER" info >/dev/null 2>&1 && break; sleep 1; done
  "$DOCKER" info >/dev/null 2>&1 || { tail -20 "$ENGINE/dockerd.log"; die "dockerd did not come up"; }
fi
log "engine: $("$DOCKER" version --format 'Docker {{.Server.Version}}' 2>/dev/null) at ${DOCKER_HOST:-default socket}"

if "$DOCKER" compose version >/dev/null 2>&1; then
  COMPOSE=("$DOCKER" compose)
elif command -v docker-compose >/dev/null; then
  COMPOSE=(docker-compose)
else
  die "neither 'docker compose' nor docker-compose is installed (apt-get install docker-compose)"
fi
# The CURVE keys of this run (compose secrets), made once the image exists; never the repository's.
export SS_CURVE_DIR="$E2E_DIR/curve-keys"
export SHADOWSYNC_IMAGE="$IMAGE" SS_ROWS="$ROWS" SS_TEST_ROWS=${SS_TEST_ROWS:-20000}
dc() { "${COMPOSE[@]}" -f "$ROOT/docker/compose.yaml" -p "$PROJECT" "$@"; }

cleanup() {
  local rc=$?
  if [ "$KEEP" = 0 ]; then
    dc down -v --remove-orphans >/dev/null 2>&1 || true
    rm -rf "$SS_CURVE_DIR"
    stop_dockerd
  else
    log "--keep: cluster '$PROJECT' left running (${COMPOSE[*]} -f docker/compose.yaml -p $PROJECT down -v)"
  fi
  rm -rf "$E2E_DIR/context"
  exit $rc
}
trap cleanup EXIT

# --- 2. the image --------------------------------------------------------------------------------
t0=$(date +%s)
if [ -n "$USE_IMAGE" ]; then
  "$DOCKER" image inspect "$IMAGE" >/dev/null 2>&1 || die "--image $IMAGE: no such image"
  log "using the image $IMAGE (no build)"
elif [ -n "$PREBUILT" ]; then
  "$ROOT/docker/make-base-image.sh"
  [ -x "$PREBUILT" ] || die "--prebuilt $PREBUILT is not an executable"
  rm -rf "$E2E_DIR/context"; mkdir -p "$E2E_DIR/context/prebuilt"
  cp "$PREBUILT" "$E2E_DIR/context/prebuilt/shadowsync"
  log "building $IMAGE from the prebuilt binary $PREBUILT"
  "$DOCKER" build -q -f "$ROOT/docker/Dockerfile" --build-arg PREBUILT=prebuilt/shadowsync \
    -t "$IMAGE" "$E2E_DIR/context" > "$E2E_DIR/build.log" 2>&1 || { tail -30 "$E2E_DIR/build.log"; die "docker build"; }
else
  "$ROOT/docker/make-base-image.sh"
  log "building $IMAGE (compiling in the build stage, $JOBS jobs; log in $E2E_DIR/build.log)"
  "$DOCKER" build -f "$ROOT/docker/Dockerfile" --build-arg BUILD_JOBS="$JOBS" -t "$IMAGE" "$ROOT" \
    > "$E2E_DIR/build.log" 2>&1 || { tail -30 "$E2E_DIR/build.log"; die "docker build"; }
fi
[ -n "$USE_IMAGE" ] || log "image $IMAGE built in $(( $(date +%s) - t0 ))s ($("$DOCKER" image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
[ "$("$DOCKER" image inspect -f '{{.Config.User}}' "$IMAGE")" = "10001:10001" ] || die "image does not run as the non-root user"

# --- 3. the cluster, CURVE on every link -----------------------------------------------------------
dc down -v --remove-orphans >/dev/null 2>&1 || true
rm -rf "$SS_CURVE_DIR"
"$ROOT/docker/curve-keys.sh" --out "$SS_CURVE_DIR" --image "$IMAGE" > "$E2E_DIR/curve-keys.log" 2>&1 \
  || { cat "$E2E_DIR/curve-keys.log"; die "docker/curve-keys.sh"; }
log "CURVE key set in $SS_CURVE_DIR ($(grep -c . "$SS_CURVE_DIR/authorized_keys") lines in authorized_keys)"
log "starting the cluster: $ROWS training rows, 2 shards, 1 reader, 2 trainers"
t0=$(date +%s)
dc up -d >/dev/null 2>&1 || { dc logs --no-color | tail -40; die "compose up"; }
[ "$(dc ps -q gen-data | xargs "$DOCKER" inspect -f '{{.State.ExitCode}}')" = 0 ] || die "gen-data failed"

# In the coordinator's container the SHADOWSYNC_CURVE_* variables give `status` its keys.
status() { dc exec -T coordinator shadowsync status --coordinator tcp://127.0.0.1:5555 --timeout 3 2>/dev/null; }
# The first (top-level) occurrence of a numeric JSON field.
field() { { grep -o "\"$1\":[0-9]*" || true; } | head -1 | cut -d: -f2; }

# --- 4. CURVE: outsiders on the cluster network are refused, the admin key is answered ----------
outsider() { "$DOCKER" run --rm --network "${PROJECT}_cluster" -v "$SS_CURVE_DIR:/keys:ro" "$@"; }
admin_status() {
  outsider "$IMAGE" status --coordinator tcp://coordinator:5555 --timeout 3 \
    --curve-server-key /keys/server.pub --curve-client-key /keys/admin.key 2>"$E2E_DIR/admin.err"
}
deadline=$(( $(date +%s) + 120 ))
until admin_status > "$E2E_DIR/admin.out" || [ "$(date +%s)" -ge "$deadline" ]; do sleep 1; done
grep -q '"state"' "$E2E_DIR/admin.out" || { dc logs --no-color --tail 30; die "status with admin.key got no answer: $(cat "$E2E_DIR/admin.err")"; }
log "CURVE: status from outside the cluster with server.pub and admin.key answers"
if outsider "$IMAGE" status --coordinator tcp://coordinator:5555 --timeout 3 > "$E2E_DIR/plain.out" 2>&1; then
  die "a plain client (no CURVE keys) got an answer from the coordinator: $(head -c 200 "$E2E_DIR/plain.out")"
fi
log "CURVE: status without keys is refused: $(tail -1 "$E2E_DIR/plain.out")"
if outsider --entrypoint /bin/sh "$IMAGE" -c 'shadowsync keygen --out /tmp/eve --name eve >/dev/null &&
     exec shadowsync status --coordinator tcp://coordinator:5555 --timeout 3 \
       --curve-server-key /keys/server.pub --curve-client-key /tmp/eve/eve.key' > "$E2E_DIR/eve.out" 2>&1; then
  die "a client with a key not in authorized_keys got an answer: $(head -c 200 "$E2E_DIR/eve.out")"
fi
log "CURVE: status with an unknown key is refused: $(tail -1 "$E2E_DIR/eve.out")"
refusal=""
for _ in $(seq 10); do
  refusal=$(dc logs --no-color coordinator 2>/dev/null | grep -m1 'refused a CURVE client with unknown key' || true)
  [ -n "$refusal" ] && break
  sleep 1
done
[ -n "$refusal" ] || { dc logs --no-color --tail 20 coordinator; die "the coordinator did not log the refused unknown key"; }
log "CURVE: the coordinator logged: ${refusal#*| }"
plain_refusal=$(dc logs --no-color coordinator 2>/dev/null | grep -Em1 'does not speak CURVE|hung up during the handshake' || true)
[ -z "$plain_refusal" ] || log "CURVE: the coordinator logged: ${plain_refusal#*| }"
# (No second admin call: these checks must not eat the training time the restart below needs.)

# --- 5. restart a shard mid-training ---------------------------------------------------------------
target=$(( ROWS / 4 ))
restarted=0
deadline=$(( $(date +%s) + TIMEOUT ))
while [ "$(date +%s)" -lt "$deadline" ]; do
  s=$(status || true)
  ex=$(printf '%s' "$s" | field examples)
  state=$(printf '%s' "$s" | sed -n 's/.*"state":"\([a-z]*\)".*/\1/p' | head -1)
  if [ -n "$ex" ] && [ "$ex" -ge "$target" ]; then
    log "coordinator: state $state, $ex examples trained: restarting shard-1"
    r0=$(date +%s)
    dc restart shard-1 >/dev/null 2>&1 || die "compose restart shard-1"
    restart_secs=$(( $(date +%s) - r0 ))
    restarted=1
    break
  fi
  running=$(dc ps -q coordinator | xargs "$DOCKER" inspect -f '{{.State.Running}}' || true)
  if [ "$running" != true ]; then
    break
  fi
  sleep 1
done
[ "$restarted" = 1 ] || { dc logs --no-color --tail 30; die "training never reached $target examples (state: ${state:-?})"; }
ex_after=$(status | field examples || true)
log "shard-1 restarted in ${restart_secs}s; coordinator reports ${ex_after:-?} examples"
if [ "$restart_secs" -ge 60 ]; then
  log "WARNING: shard-1 did not exit within its 60 s stop_grace_period after SIGTERM: Docker killed it"
fi

# --- 6. the job finishes -------------------------------------------------------------------------
coord=$(dc ps -q coordinator)
left=$(( deadline - $(date +%s) ))
rc=$(timeout "$left" "$DOCKER" wait "$coord" || echo timeout)
[ "$rc" = timeout ] && { dc logs --no-color --tail 40; die "the job did not finish within ${TIMEOUT}s"; }
secs=$(( $(date +%s) - t0 ))
"$DOCKER" logs "$coord" > "$E2E_DIR/coordinator.log" 2>&1
dc logs --no-color > "$E2E_DIR/cluster.log" 2>&1 || true
result=$(grep -h '^{"command":"cluster"\|^{"command":"coordinator"\|^{.*"examples_read"' "$E2E_DIR/coordinator.log" | tail -1)
[ "$rc" = 0 ] || { tail -30 "$E2E_DIR/coordinator.log"; die "coordinator exited $rc"; }
[ -n "$result" ] || { tail -30 "$E2E_DIR/coordinator.log"; die "no result line in the coordinator's log"; }
examples=$(printf '%s' "$result" | field examples)
examples_read=$(printf '%s' "$result" | field examples_read)
ok=$(printf '%s' "$result" | sed -n 's/.*"ok":\(true\|false\).*/\1/p')
grep -h 'shadowsync cluster:\|  test ' "$E2E_DIR/coordinator.log" | sed 's/^/    /' || true
log "result: ok=$ok examples=$examples examples_read=$examples_read (expected $ROWS), ${secs}s from compose up"

# Every member exited 0 on its own once the job was done.
bad=""
for svc in shard-0 shard-1 reader-0 trainer-0 trainer-1; do
  id=$(dc ps -q "$svc")
  for _ in $(seq 30); do [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$id")" = false ] && break; sleep 1; done
  code=$("$DOCKER" inspect -f '{{.State.Running}} {{.State.ExitCode}} {{.RestartCount}}' "$id")
  log "  $svc: running/exit/restarts = $code"
  [ "$code" = "false 0 0" ] || bad="$bad $svc"
done
log "logs: $E2E_DIR/cluster.log, $E2E_DIR/coordinator.log"

[ "$ok" = true ] || die "the job's result is not ok"
[ "$examples" = "$ROWS" ] || die "examples $examples != $ROWS"
[ "$examples_read" = "$ROWS" ] || die "examples_read $examples_read != $ROWS"
[ -z "$bad" ] || die "members that did not exit 0 by themselves:$bad"
log "PASSED: shard-1 restarted mid-training, the job finished with $examples examples"
