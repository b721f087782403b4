#!/usr/bin/env bash
# Makes the Debian 12 base image that docker/Dockerfile starts FROM, without any registry:
# debootstrap a minimal bookworm root file system from a Debian mirror, then `docker import` it.
#
#   docker/make-base-image.sh [--tag TAG] [--mirror URL] [--force]
#
#   --tag TAG      image to create (default shadowsync/debian:bookworm, the Dockerfile's BASE_IMAGE)
#   --mirror URL   Debian mirror (default: the first deb.debian.org-style URI in this machine's
#                  /etc/apt/sources.list*, else http://deb.debian.org/debian); the image's apt
#                  sources point at the same mirror, so `apt-get install` inside works offline
#                  from any registry
#   --force        rebuild even when TAG already exists
#
# Needs root (debootstrap), the debootstrap package and a running Docker engine (DOCKER, DOCKER_HOST
# as for the docker CLI). Takes 2-5 minutes; the result is about 100 MB.
set -euo pipefail

TAG="shadowsync/debian:bookworm"
MIRROR=""
FORCE=0
SUITE=bookworm
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG="$2"; shift 2 ;;
    --mirror) MIRROR="$2"; shift 2 ;;
    --force) FORCE=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "make-base-image: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [ -z "${DOCKER:-}" ]; then
  # /usr/bin/docker is Debian's docker.io CLI; another docker earlier in PATH may not talk to it.
  if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER=docker; fi
fi

if [ "$FORCE" = 0 ] && "$DOCKER" image inspect "$TAG" >/dev/null 2>&1; then
  echo "make-base-image: $TAG already exists (--force rebuilds it)"
  exit 0
fi

if [ -z "$MIRROR" ]; then
  MIRROR=$(grep -hoE '(URIs:|^deb)[[:space:]]+[^ ]*https?://[^ ]+/debian/?([[:space:]]|$)' \
             /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
           | grep -oE 'https?://[^ ]+' | grep -v -- '-security' | head -1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
MIRROR=${MIRROR%/}
SECURITY_MIRROR="${MIRROR%/debian}/debian-security"

if [ "$(id -u)" -ne 0 ]; then
  echo "make-base-image: debootstrap needs root" >&2; exit 1
fi
command -v debootstrap >/dev/null || { echo "make-base-image: install debootstrap (apt-get install debootstrap)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-rootfs.XXXXXX")
cleanup() { rm -rf --one-file-system "$WORK"; }
trap cleanup EXIT
ROOTFS="$WORK/rootfs"

echo "make-base-image: debootstrap $SUITE from $MIRROR"
debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$ROOTFS" "$MIRROR" \
  > "$WORK/debootstrap.log" 2>&1 || { tail -30 "$WORK/debootstrap.log" >&2; exit 1; }

cat > "$ROOTFS/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
EOF
# Container-friendly apt: no recommends, no caches left in layers.
cat > "$ROOTFS/etc/apt/apt.conf.d/90container" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Dpkg::Options { "--force-confdef"; "--force-confold"; };
EOF
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
       "$ROOTFS"/var/log/*.log "$ROOTFS"/tmp/* 2>/dev/null || true
: > "$ROOTFS/etc/hostname"
: > "$ROOTFS/etc/resolv.conf"

echo "make-base-image: importing as $TAG"
tar --numeric-owner -C "$ROOTFS" -c . | "$DOCKER" import \
  -c 'ENV LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive' \
  -c 'CMD ["/bin/bash"]' \
  -m "debootstrap --variant=minbase $SUITE $MIRROR" - "$TAG"
"$DOCKER" image ls "$TAG"
