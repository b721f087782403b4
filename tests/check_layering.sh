#!/usr/bin/env bash
# The architecture rule, checked: the pure core never includes the actor, transport, wire or
# storage libraries (or logging); arrows point one way.
set -euo pipefail
root=${1:?usage: check_layering.sh SOURCE_DIR}
bad=$(grep -rnE '#include\s*[<"](caf/|zmq|capnp/|kj/|rocksdb/|spdlog/)' "$root/core" || true)
if [ -n "$bad" ]; then
  echo "core/ must not include CAF, ZeroMQ, Cap'n Proto, RocksDB or spdlog:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "core/ is free of CAF, ZeroMQ, Cap'n Proto, RocksDB and spdlog"
