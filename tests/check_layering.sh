#!/usr/bin/env bash
# The architecture rules, checked: arrows point one way.
#  1. core/ never includes the actor, transport, wire or storage libraries (or logging).
#  2. Inside core/, an area includes only areas of a lower rank (and the files at core's root):
#     the math library (data, optim, sync, metrics < embedding < model < train) never reaches
#     the job/io library (config, io < job < model_file < publish < serving), and nothing reaches
#     up or sideways.
#  3. Inside actors/src, a service's folder includes no other folder's private headers, and the
#     public headers (actors/include) include nothing private.
set -euo pipefail
root=${1:?usage: check_layering.sh SOURCE_DIR}
failed=0
complain() {
  echo "$1" >&2
  failed=1
}

bad=$(grep -rnE '#include\s*[<"](caf/|zmq|capnp/|kj/|rocksdb/|spdlog/)' "$root/core" || true)
[ -z "$bad" ] || complain "core/ must not include CAF, ZeroMQ, Cap'n Proto, RocksDB or spdlog:
$bad"

declare -A rank=([data]=1 [optim]=1 [sync]=1 [metrics]=1 [embedding]=2 [model]=3 [train]=4
                 [config]=5 [io]=5 [job]=6 [model_file]=7 [publish]=8 [serving]=9)
for dir in "$root"/core/include/ss/core/*/ "$root"/core/src/*/; do
  area=$(basename "$dir")
  own=${rank[$area]:-}
  if [ -z "$own" ]; then
    complain "core area '$area' has no rank in tests/check_layering.sh: give it one (what may it include?)"
    continue
  fi
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    target=$(sed -E 's#.*"ss/core/([a-z_]+)/.*#\1#' <<<"$hit")
    [ "$target" = "$area" ] && continue
    theirs=${rank[$target]:-99}
    if ((theirs >= own)); then
      complain "core/$area (rank $own) must not include core/$target (rank $theirs): $hit"
    fi
  done < <(grep -rnE '#include "ss/core/[a-z_]+/' "$dir" || true)
done

bad=$(grep -rnE '#include "\.\./' "$root/actors/src" || true)
[ -z "$bad" ] || complain "actors/src: a service's folder must not include another folder's private headers:
$bad"
bad=$(grep -rnE '#include "[^"]*(src/|\.\./)' "$root/actors/include" || true)
[ -z "$bad" ] || complain "actors/include must not include private headers:
$bad"

[ "$failed" = 0 ] || exit 1
echo "layering holds: core/ is free of CAF, ZeroMQ, Cap'n Proto, RocksDB and spdlog; its areas point down; actors/src's folders keep to themselves"
