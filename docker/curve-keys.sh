#!/usr/bin/env bash
# Makes the CURVE key set of docker/compose.yaml: `shadowsync keygen --cluster` run in the image,
# into a host directory (default docker/curve-keys, git-ignored), with the secret key files owned
# by the image's user (uid/gid 10001, mode 0600) so that the services can read them through compose
# file secrets (bind mounts keep the host file's owner and mode) and the key loader accepts them.
#
#   docker/curve-keys.sh [--out DIR] [--image TAG] [--members LIST]
#
#   --out DIR       where to write the keys (default: docker/curve-keys; SS_CURVE_DIR in compose)
#   --image TAG     the shadowsync image (default: $SHADOWSYNC_IMAGE or shadowsync:latest)
#   --members LIST  client key pairs to make (default: the services of docker/compose.yaml and
#                   `admin`, for `shadowsync status` from outside the cluster)
#
# Writes server.key/.pub, one NAME.key/.pub per member and authorized_keys; never overwrites a key
# (an existing key set is an error: delete the directory to make a new one, then restart every
# service). The .key files are secrets: owned by uid 10001 on the host too, readable by root and
# `docker run --user 10001` only. Needs a Docker engine (DOCKER, default docker) and the image.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="$ROOT/docker/curve-keys"
IMAGE=${SHADOWSYNC_IMAGE:-shadowsync:latest}
MEMBERS=coordinator,shard-0,shard-1,reader-0,trainer-0,trainer-1,admin
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --image) IMAGE="$2"; shift 2 ;;
    --members) MEMBERS="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "curve-keys: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
DOCKER=${DOCKER:-docker}
case "$MEMBERS" in *[!a-z0-9,_-]*) echo "curve-keys: --members: letters, digits, '-', '_' and ',' only" >&2; exit 2 ;; esac

if [ -e "$OUT/server.key" ]; then
  echo "curve-keys: $OUT/server.key exists: keys are never overwritten (delete $OUT for a new set)" >&2
  exit 1
fi
# Made here, so that the directory belongs to the caller (who can delete it) and not to the engine.
mkdir -p "$OUT"
chmod 0755 "$OUT"
OUT=$(cd "$OUT" && pwd)

# As root inside the container (a bind mount may not be writable by uid 10001), then the secret
# files are handed to uid/gid 10001; no network.
"$DOCKER" run --rm --network none --user 0:0 --entrypoint /bin/sh -v "$OUT:/keys" "$IMAGE" -c "
  set -e
  shadowsync keygen --cluster --out /keys --members '$MEMBERS'
  chown 10001:10001 /keys/*.key
  chmod 0600 /keys/*.key
  chmod 0644 /keys/*.pub /keys/authorized_keys
"
echo "curve-keys: key set in $OUT (members: $MEMBERS)"
ls -ln "$OUT"
