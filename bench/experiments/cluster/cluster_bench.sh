#!/usr/bin/env bash
# Cluster throughput against single-process `shadowsync train` at equal cores, in one run:
# the same generated data, each configuration run REPEAT times in alternation (this machine is
# shared and noisy), medians and ratios reported. Also prints where the cluster's time goes
# (the trainer's own account: computing vs waiting, shard lookup and push latency).
#
#   bench/experiments/cluster/cluster_bench.sh [ROWS] [REPEAT]        defaults: 1000000 rows, 3 repeats
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/bench.sh"
rows=${1:-1000000}
repeat=${2:-3}
bin=$(bench_built_bin)
data=$(bench_data "$bin" "$rows")
cores=$(nproc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

configs=(
  "train|$bin train --threads $cores"
  "local 1 trainer x $cores workers, 1 shard, 1 reader|$bin local --trainers 1 --threads $cores --shards 1 --readers 1 --lookahead 2"
  "local $cores trainers x 1 worker, 1 shard, 1 reader|$bin local --trainers $cores --threads 1 --shards 1 --readers 1 --lookahead 2"
  "local --processes 1 trainer x $cores workers|$bin local --processes --trainers 1 --threads $cores --shards 1 --readers 1 --lookahead 2"
)
for r in $(seq 1 "$repeat"); do
  for i in "${!configs[@]}"; do
    cmd=${configs[$i]#*|}
    $cmd --train "$data/train.tsv" --progress-interval 0 >"$out/run-$i-$r.txt" 2>&1 || { cat "$out/run-$i-$r.txt" >&2; exit 1; }
    echo "run $r, ${configs[$i]%%|*}: $(grep -o '"examples_per_sec":[0-9.]*' "$out/run-$i-$r.txt" | cut -d: -f2) examples/s" >&2
  done
done

/usr/bin/python3 - "$out" "$repeat" "$cores" "${configs[@]}" <<'PY'
import json, re, statistics, sys
out, repeat, cores, configs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
names = [c.split("|", 1)[0] for c in configs]
def runs(i):
    eps, notes = [], []
    for r in range(1, repeat + 1):
        text = open(f"{out}/run-{i}-{r}.txt").read()
        line = [l for l in text.splitlines() if l.startswith("{")][-1]
        eps.append(json.loads(line)["examples_per_sec"])
        m = re.search(r"Workers computed (\d+)% of their time and waited (\d+)%.*lookups took p50 ([\d.]+) ms, "
                      r"p99 ([\d.]+) ms.*pushes p50 ([\d.]+) ms, p99 ([\d.]+) ms", text)
        if m: notes.append(m.groups())
    return statistics.median(eps), notes
base, _ = runs(0)
print(f"\ncluster vs single-process train, {cores} cores, median of {repeat} runs")
result = {"bench": "cluster", "cores": cores, "repeat": repeat, "train_examples_per_sec": base, "configs": {}}
for i, name in enumerate(names):
    eps, notes = runs(i)
    ratio = eps / base
    line = f"  {name:52s} {eps:9.0f} examples/s  {100 * ratio:5.1f}% of train"
    if notes:
        c, w, lp50, lp99, pp50, pp99 = notes[-1]
        line += f"\n      workers computing {c}%, waiting {w}%; lookups p50 {lp50} ms p99 {lp99} ms; pushes p50 {pp50} ms p99 {pp99} ms"
    print(line)
    result["configs"][name] = {"examples_per_sec": eps, "ratio_to_train": round(ratio, 4)}
print(json.dumps(result))
PY
