#!/usr/bin/python3
"""The sweep that chose the model and optimizer defaults of `shadowsync train` (and of every
cluster command: they share the options).

Data sets (benchlib.ctr_sets), each split by row order (the first rows train, the rest test: time
order, as served):
  gen        generated Criteo-format data (gen-data: 13 dense, 26 categorical), --rows training rows
  gen-cat    the same files read with a schema that ignores the 13 dense columns (categorical only)
  criteo     ../shared/data/ctr/criteo/train-10k.txt: the first 8,000 rows train, the last 2,000 test
  avazu      ../shared/data/ctr/avazu/train-10k: 8,000 / 1,999 (categorical only, with a header)
The real samples are read where they lie and never copied into the repository.

Search: coordinate descent from a start point, two rounds. A coordinate is one knob (sparse
optimizer with its learning rate, dense optimizer with its learning rate, dense weight decay,
embedding init scale, embedding dim, bottom and top MLP); each value is scored by the mean test AUC over the data sets
and --seeds seeds (--threads 1: a run is deterministic given its seed), and the best value is kept
before the next coordinate. Every configuration's per-data-set AUC, NE and log loss are kept, so
the table also shows the best setting found per data set and how far the defaults are from it.

Writes defaults_sweep.md and defaults_sweep.json beside this script and prints the table.

    /usr/bin/python3 bench/experiments/defaults_sweep/defaults_sweep.py [--rows 100000] [--seeds 3] [--jobs 2]
                                                                        [--quick]

Needs a built tree (scripts/build.sh). One run of the full sweep takes about 30 minutes on 2 cores.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import ctr_sets, here, run_train  # noqa: E402

OUT = here(__file__)

# The options of the pre-sweep defaults (the DLRM reference script's), to compare against.
OLD_DEFAULTS = {"sparse": ("sgd", 0.1), "dense": ("sgd", 0.1), "weight_decay": 0.0, "init": 0.01, "dim": 16,
                "bottom": "512-256-64", "top": "512-256"}

COORDINATES = {
    "sparse": [(o, lr) for o in ("rowwise-adagrad", "sgd") for lr in (0.003, 0.01, 0.03, 0.1, 0.3)],
    "dense": [(o, lr) for o in ("sgd", "adagrad") for lr in (0.003, 0.01, 0.03, 0.1, 0.3)] +
             [("adam", lr) for lr in (0.0003, 0.001, 0.003, 0.01)],
    "weight_decay": [0.0, 1e-5, 1e-4],
    "init": [0.001, 0.01, 0.05, 0.1, 0.2],
    "dim": [8, 16, 32],
    "bottom": ["", "64", "256-64", "512-256-64"],
    "top": ["64", "256-64", "512-256"],
}


def flags(cfg, num_dense):
    """shadowsync flags for one configuration; the bottom MLP's last layer is the embedding dim,
    and with no dense features the bottom MLP is that one layer (a learned vector)."""
    bottom = [cfg["bottom"]] if cfg["bottom"] and num_dense > 0 else []
    bottom_mlp = "-".join(bottom + [str(cfg["dim"])])
    top_mlp = "-".join([cfg["top"], "1"]) if cfg["top"] else "1"
    return ["--sparse-optimizer", cfg["sparse"][0], "--embedding-learning-rate", str(cfg["sparse"][1]),
            "--dense-optimizer", cfg["dense"][0], "--learning-rate", str(cfg["dense"][1]),
            "--weight-decay", str(cfg["weight_decay"]),
            "--embedding-init-scale", str(cfg["init"]), "--embedding-dim", str(cfg["dim"]),
            "--bottom-mlp", bottom_mlp, "--top-mlp", top_mlp]


class Sweep:
    def __init__(self, sets, seeds, jobs, cache_path=None, settings=None):
        self.sets, self.seeds, self.jobs = sets, seeds, jobs
        self.cache = {}
        self.cache_path, self.settings = cache_path, settings
        if cache_path and os.path.exists(cache_path):
            with open(cache_path) as f:
                saved = json.load(f)
            if saved.get("settings") == settings:  # scores of the same data and seeds only
                self.cache = {k: v for k, v in saved["scores"].items()}
                print(f"{len(self.cache)} configurations scored before, read from {cache_path}")
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)

    def save(self):
        if self.cache_path:
            with open(self.cache_path + ".tmp", "w") as f:
                json.dump({"settings": self.settings, "scores": self.cache}, f)
            os.replace(self.cache_path + ".tmp", self.cache_path)

    @staticmethod
    def key(cfg):
        return json.dumps(cfg, sort_keys=True)

    def score(self, cfg):
        """Per data set: mean AUC, NE and log loss over the seeds; 'mean_auc' over the data sets."""
        k = self.key(cfg)
        if k in self.cache:
            return self.cache[k]
        work = [(name, seed, (s["data"] + flags(cfg, s["dense"]), seed))
                for name, s in self.sets.items() for seed in range(1, self.seeds + 1)]
        results = list(self.pool.map(run_train, [w[2] for w in work]))
        per = {}
        for (name, _, _), r in zip(work, results):
            per.setdefault(name, []).append(r)
        out = {"config": cfg, "sets": {}}
        for name, rs in per.items():
            out["sets"][name] = {
                "auc": statistics.mean(r["auc"] for r in rs),
                "auc_spread": max(r["auc"] for r in rs) - min(r["auc"] for r in rs),
                "ne": statistics.mean(r["ne"] for r in rs),
                "logloss": statistics.mean(r["logloss"] for r in rs),
                "failed": sum(1 for r in rs if r["failed"]),
            }
        out["mean_auc"] = statistics.mean(v["auc"] for v in out["sets"].values())
        self.cache[k] = out
        self.save()
        return out

    def descend(self, start, rounds):
        best = dict(start)
        best_score = self.score(best)
        for rnd in range(1, rounds + 1):
            for coord, values in COORDINATES.items():
                for v in values:
                    cand = dict(best)
                    cand[coord] = v
                    s = self.score(cand)
                    mark = ""
                    if s["mean_auc"] > best_score["mean_auc"] + 1e-4:
                        best, best_score, mark = cand, s, "  <- best so far"
                    print(f"  round {rnd} {coord:6s} {str(v):24s} mean AUC {s['mean_auc']:.4f}  " +
                          " ".join(f"{n} {x['auc']:.4f}" for n, x in s["sets"].items()) + mark, flush=True)
        return best, best_score


def describe(cfg):
    return (f"embeddings {cfg['sparse'][0]} lr {cfg['sparse'][1]}, init {cfg['init']}, dim {cfg['dim']}; "
            f"dense {cfg['dense'][0]} lr {cfg['dense'][1]}, weight decay {cfg['weight_decay']}; "
            f"bottom {cfg['bottom'] or '-'}-dim, top {cfg['top']}-1")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100000, help="generated training rows")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (each uses one thread)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one seed, one round, 30,000 rows: a smoke run")
    ap.add_argument("--cache", help="keep every score in this JSON file and reuse it when run again with the "
                                    "same rows and seeds (an interrupted sweep goes on where it stopped)")
    a = ap.parse_args()
    if a.quick:
        a.rows, a.seeds, a.rounds = 30000, 1, 1
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="ss-sweep.") as work:
        sets = ctr_sets(work, a.rows)
        sweep = Sweep(sets, a.seeds, a.jobs, a.cache, {"rows": a.rows, "seeds": a.seeds, "sets": sorted(sets)})
        print(f"data sets: {', '.join(sets)}; {a.seeds} seeds; coordinate descent, {a.rounds} rounds")
        old = sweep.score(OLD_DEFAULTS)
        start = dict(OLD_DEFAULTS)
        start["sparse"] = ("rowwise-adagrad", 0.1)
        best, best_score = sweep.descend(start, a.rounds)
        scored = list(sweep.cache.values())
    # The best setting found per data set, over every configuration the descent scored.
    per_set_best = {}
    for name in sets:
        top = max(scored, key=lambda s: s["sets"][name]["auc"])
        per_set_best[name] = {"auc": top["sets"][name]["auc"], "config": top["config"]}
    lines = ["# Defaults sweep", "",
             f"`bench/experiments/defaults_sweep/defaults_sweep.py --rows {a.rows} --seeds {a.seeds} --rounds {a.rounds}`: "
             f"{len(scored)} configurations x {len(sets)} data sets x {a.seeds} seeds, "
             f"{(time.time() - t0) / 60:.0f} minutes, {time.strftime('%Y-%m-%d')}.", "",
             f"Chosen (best mean test AUC): {describe(best)}.", "",
             "| data set | old defaults AUC | chosen AUC | best found AUC | chosen - best | chosen NE | "
             "chosen log loss | seed spread (AUC) |", "|---|---|---|---|---|---|---|---|"]
    for name in sets:
        c = best_score["sets"][name]
        lines.append(f"| {name} | {old['sets'][name]['auc']:.4f} | {c['auc']:.4f} | {per_set_best[name]['auc']:.4f} | "
                     f"{c['auc'] - per_set_best[name]['auc']:+.4f} | {c['ne']:.4f} | {c['logloss']:.4f} | "
                     f"{c['auc_spread']:.4f} |")
    lines += ["", "Best setting per data set:", ""]
    lines += [f"- {name}: {describe(b['config'])}" for name, b in per_set_best.items()]
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    os.makedirs(OUT, exist_ok=True)
    if not a.quick:
        with open(os.path.join(OUT, "defaults_sweep.md"), "w") as f:
            f.write(text)
        with open(os.path.join(OUT, "defaults_sweep.json"), "w") as f:
            json.dump({"chosen": best, "chosen_score": best_score, "old_defaults": old,
                       "per_set_best": per_set_best, "scored": scored}, f, indent=1)
    print(json.dumps({"bench": "defaults_sweep", "chosen": best, "mean_auc": best_score["mean_auc"],
                      "old_mean_auc": old["mean_auc"],
                      "gap_to_best": {n: best_score["sets"][n]["auc"] - per_set_best[n]["auc"] for n in sets}}))


if __name__ == "__main__":
    sys.exit(main())
