#!/usr/bin/env bash
# Two builds of shadowsync against each other on the same data, runs interleaved (this machine is
# shared and noisy): `train` on one thread, the demo's cluster in one process, and the same cluster
# as processes. Prints each run, then medians of examples/s and test NE per build and the ratio
# new/base. For a refactor that must not change speed or quality: build the commit before it
# beside this one (git worktree add ../base REV; build there), then
#
#   bench/experiments/ab_builds/ab_builds.sh BASE_SHADOWSYNC NEW_SHADOWSYNC [ROWS] [REPEAT] [ONLY]
#                                                    defaults: 1000000 rows, 3, every configuration
# ONLY, a regular expression, keeps the configurations whose name matches (e.g. "processes").
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/bench.sh"
base=${1:?usage: ab_builds.sh BASE_SHADOWSYNC NEW_SHADOWSYNC [ROWS] [REPEAT]}
new=${2:?usage: ab_builds.sh BASE_SHADOWSYNC NEW_SHADOWSYNC [ROWS] [REPEAT]}
rows=${3:-1000000}
repeat=${4:-3}
only=${5:-}
for b in "$base" "$new"; do [ -x "$b" ] || { echo "ab_builds: $b is not an executable" >&2; exit 2; }; done
data=$(bench_data "$new" "$rows")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

configs=(
  "train, 1 thread|train --threads 1"
  "local, 2 trainers, 2 shards, 2 readers|local"
  "local --processes, 2 trainers, 2 shards, 2 readers|local --processes"
)
if [ -n "$only" ]; then
  kept=()
  for c in "${configs[@]}"; do [[ ${c%%|*} =~ $only ]] && kept+=("$c"); done
  ((${#kept[@]})) || { echo "ab_builds: no configuration matches $only" >&2; exit 2; }
  configs=("${kept[@]}")
fi
for r in $(seq 1 "$repeat"); do
  for i in "${!configs[@]}"; do
    for which in base new; do
      bin=$base; [ "$which" = new ] && bin=$new
      f="$out/$i-$which-$r.txt"
      # shellcheck disable=SC2086
      "$bin" ${configs[$i]#*|} --train "$data/train.tsv" --test "$data/test.tsv" --progress-interval 0 >"$f" 2>&1 ||
        { cat "$f" >&2; exit 1; }
      echo "run $r, ${configs[$i]%%|*}, $which: $(bench_field "$f" examples_per_sec) examples/s, test NE $(bench_field "$f" test_ne)"
    done
  done
done

/usr/bin/python3 - "$out" "$repeat" "${configs[@]}" <<'PY'
import json, re, statistics, sys
out, repeat, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def value(path, name):
    m = re.search(r'"%s":([0-9.]+)' % name, open(path).read())
    return float(m.group(1)) if m else float("nan")
rows = []
print()
print("%-52s %12s %12s %7s %9s %9s" % ("configuration", "base ex/s", "new ex/s", "ratio", "base NE", "new NE"))
for i, c in enumerate(configs):
    name = c.split("|", 1)[0]
    med = {}
    for which in ("base", "new"):
        files = ["%s/%d-%s-%d.txt" % (out, i, which, r) for r in range(1, repeat + 1)]
        med[which] = (statistics.median(value(f, "examples_per_sec") for f in files),
                      statistics.median(value(f, "test_ne") for f in files))
    ratio = med["new"][0] / med["base"][0]
    print("%-52s %12.0f %12.0f %7.3f %9.5f %9.5f" % (name, med["base"][0], med["new"][0], ratio, med["base"][1], med["new"][1]))
    rows.append({"configuration": name, "base_examples_per_sec": med["base"][0], "new_examples_per_sec": med["new"][0],
                 "ratio": ratio, "base_test_ne": med["base"][1], "new_test_ne": med["new"][1]})
print(json.dumps({"bench": "ab_builds", "repeat": repeat, "medians": rows}))
PY
