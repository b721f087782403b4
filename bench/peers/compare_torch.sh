#!/usr/bin/env bash
# shadowsync train vs the PyTorch peer (bench/peers/torch_peer.py): the same model, data (generated,
# Criteo format) and hyperparameters (SGD 0.1, batch 128, one pass), both pinned to the same
# single core, in one run. Prints both JSON lines, then a summary and one comparison JSON line.
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

echo "== shadowsync train (1 worker thread, pinned to core $core) ==" >&2
# The peer's configuration, spelled out (the DLRM reference's, not shadowsync's defaults).
taskset -c "$core" "$bin" train --train "$data/train.tsv" --test "$data/test.tsv" --threads 1 \
  --learning-rate 0.1 --embedding-learning-rate 0.1 --batch-size 128 --dense-optimizer sgd \
  --sparse-optimizer sgd --embedding-init-scale 0.01 --embedding-dim 16 --bottom-mlp 512-256-64-16 \
  --top-mlp 512-256-1 --progress-interval 30 | tee "$out/ours.txt" >&2
echo "== PyTorch peer (1 thread, pinned to core $core) ==" >&2
/usr/bin/python3 "$bench_root/bench/peers/torch_peer.py" --train "$data/train.tsv" --test "$data/test.tsv" \
  --cpu "$core" --threads 1 --learning-rate 0.1 --batch-size 128 | tee "$out/torch.txt" >&2

echo "== shadowsync train with its defaults (bench/experiments/defaults_sweep/defaults_sweep.py chose them) ==" >&2
taskset -c "$core" "$bin" train --train "$data/train.tsv" --test "$data/test.tsv" --threads 1 \
  --progress-interval 30 | tee "$out/best.txt" >&2

/usr/bin/python3 - "$out/ours.txt" "$out/torch.txt" "$data/teacher.json" "$out/best.txt" <<'PY'
import json, sys
def last_json(path):
    return json.loads([l for l in open(path) if l.startswith("{")][-1])
ours, torch, teacher, best = (last_json(p) for p in sys.argv[1:5])
bayes = teacher["test"]["bayes_ne"]
ratio = ours["examples_per_sec"] / torch["examples_per_sec"]
print(f"\nexamples/s on one core: shadowsync {ours['examples_per_sec']:.0f}, "
      f"PyTorch {torch['version'] if 'version' in torch else torch['torch_version']} {torch['examples_per_sec']:.0f} "
      f"-> {ratio:.2f}x")
print(f"test NE with SGD 0.1: shadowsync {ours['test_ne']:.5f}, PyTorch {torch['test_ne']:.5f}; "
      f"shadowsync defaults {best['test_ne']:.5f}; Bayes-optimal {bayes:.5f}")
print(json.dumps({"bench": "compare_torch", "rows": ours["examples"],
                  "shadowsync_examples_per_sec": ours["examples_per_sec"],
                  "torch_examples_per_sec": torch["examples_per_sec"], "speedup": round(ratio, 3),
                  "shadowsync_test_ne": ours["test_ne"], "torch_test_ne": torch["test_ne"],
                  "defaults_test_ne": best["test_ne"], "bayes_ne": bayes}))
PY
