#!/usr/bin/env bash
# shadowsync train vs the PyTorch peer (bench/peers/torch_peer.py): the same model, data (generated,
# Criteo format) and hyperparameters (batch 128, one pass; SGD 0.1 everywhere, then Adam on the
# dense layers and Adagrad on the rows), both pinned to the same single core, in one run. Prints
# every JSON line, then a summary and one comparison JSON line.
#
#   bench/peers/compare_torch.sh [ROWS] [CORE]        defaults: 2000000 rows, core 0
# Needs scripts/setup.sh --bench (python3-torch with libopenblas0-pthread).
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"
rows=${1:-2000000}
core=${2:-0}
bin=$(bench_built_bin)
data=$(bench_data "$bin" "$rows")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The peer runs without OpenBLAS's core-type overrides, which slow PyTorch where set.
peer() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$bench_root/bench/peers/torch_peer.py" "$@"; }
# Both configurations spelled out (the DLRM reference's sizes), each trainer pinned to the same core:
#   sgd   SGD 0.1 on the dense layers and the embedding rows (the DLRM reference's)
#   adam  Adam 0.001 on the dense layers, Adagrad 0.03 on the rows (shadowsync's defaults; its
#         Adagrad is row-wise, PyTorch's one accumulator per value: the nearest PyTorch offers)
model=(--batch-size 128 --embedding-init-scale 0.01 --embedding-dim 16 --bottom-mlp 512-256-64-16 --top-mlp 512-256-1)
for config in sgd adam; do
  if [[ $config == sgd ]]; then
    ours=(--learning-rate 0.1 --embedding-learning-rate 0.1 --dense-optimizer sgd --sparse-optimizer sgd)
    theirs=(--learning-rate 0.1 --embedding-learning-rate 0.1 --dense-optimizer sgd --sparse-optimizer sgd)
  else
    ours=(--learning-rate 0.001 --embedding-learning-rate 0.03 --dense-optimizer adam --sparse-optimizer rowwise-adagrad)
    theirs=(--learning-rate 0.001 --embedding-learning-rate 0.03 --dense-optimizer adam --sparse-optimizer adagrad)
  fi
  echo "== $config: shadowsync train (1 worker thread, pinned to core $core) ==" >&2
  taskset -c "$core" "$bin" train --train "$data/train.tsv" --test "$data/test.tsv" --threads 1 \
    "${model[@]}" "${ours[@]}" --progress-interval 30 | tee "$out/ours-$config.txt" >&2
  echo "== $config: PyTorch peer (1 thread, pinned to core $core) ==" >&2
  peer --train "$data/train.tsv" --test "$data/test.tsv" --cpu "$core" --threads 1 --batch-size 128 "${theirs[@]}" |
    tee "$out/torch-$config.txt" >&2
done

echo "== shadowsync train with its defaults (bench/experiments/defaults_sweep/defaults_sweep.py chose them) ==" >&2
taskset -c "$core" "$bin" train --train "$data/train.tsv" --test "$data/test.tsv" --threads 1 \
  --progress-interval 30 | tee "$out/best.txt" >&2

/usr/bin/python3 - "$out" "$data/teacher.json" <<'PY'
import json, sys
def last_json(path):
    return json.loads([l for l in open(path) if l.startswith("{")][-1])
out, teacher = sys.argv[1], json.load(open(sys.argv[2]))
bayes = teacher["test"]["bayes_ne"]
best = last_json(f"{out}/best.txt")
line = {"bench": "compare_torch", "defaults_test_ne": best["test_ne"], "bayes_ne": bayes}
print()
for config, what in (("sgd", "SGD 0.1 everywhere"), ("adam", "Adam + Adagrad (row-wise in shadowsync)")):
    ours, torch = last_json(f"{out}/ours-{config}.txt"), last_json(f"{out}/torch-{config}.txt")
    ratio = ours["examples_per_sec"] / torch["examples_per_sec"]
    print(f"{what}: examples/s on one core: shadowsync {ours['examples_per_sec']:.0f}, PyTorch "
          f"{torch['torch_version']} {torch['examples_per_sec']:.0f} -> {ratio:.2f}x; test NE shadowsync "
          f"{ours['test_ne']:.5f}, PyTorch {torch['test_ne']:.5f}")
    line[config] = {"shadowsync_examples_per_sec": ours["examples_per_sec"],
                    "torch_examples_per_sec": torch["examples_per_sec"], "speedup": round(ratio, 3),
                    "shadowsync_test_ne": ours["test_ne"], "torch_test_ne": torch["test_ne"]}
line["rows"] = ours["examples"]
print(f"shadowsync defaults: test NE {best['test_ne']:.5f}; Bayes-optimal {bayes:.5f}")
print(json.dumps(line))
PY
