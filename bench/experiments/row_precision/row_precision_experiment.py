#!/usr/bin/python3
"""Model quality and speed of 16-bit embedding rows (issue 36, --row-precision), on this machine.

`shadowsync local` jobs on each data set of benchlib.ctr_sets (generated rows, and the Criteo and
Avazu samples when ../shared has them), with --row-precision fp32, bf16 and fp16, over a few
seeds: test NE, AUC and log loss, and examples/s. Each 16-bit run is compared with the FP32 run
of the same data and seed.

By default the jobs run one trainer, one worker thread, one shard and no sync (--cluster
deterministic): such a job gives the same model on every run (the fp32 rerun, "fp32 again",
shows it), so a ratio is the rows' precision alone. With --cluster default (2 trainers, 2
shards, background sync) Hogwild's timing moves each run's NE too; the fp32 rerun then shows by
how much.

Writes row_precision.{txt,json} (--out) beside this script and prints the table.

    /usr/bin/python3 bench/experiments/row_precision/row_precision_experiment.py [--rows 200000]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import BIN, ctr_sets, here, local_result, write_report  # noqa: E402

OUT = here(__file__)
PRECISIONS = ["fp32", "bf16", "fp16", "fp32 again"]
DETERMINISTIC = ["--trainers", "1", "--threads", "1", "--lookahead", "0", "--shards", "1", "--sync", "none"]


def run(args, label):
    t0 = time.time()
    r = local_result(BIN, args, label)
    print(f"  {label:30s} NE {r['test_ne']:.5f}  AUC {r.get('test_auc', float('nan')):.5f}  "
          f"{r['examples_per_sec']:8.0f} ex/s  ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    return {"ne": r["test_ne"], "auc": r.get("test_auc"), "logloss": r["test_logloss"],
            "eps": r["examples_per_sec"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200000, help="generated training rows")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--sets", default="gen,criteo,avazu")
    ap.add_argument("--cluster", choices=["deterministic", "default"], default="deterministic")
    ap.add_argument("--out", default="row_precision", help="results file name (beside this script)")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    work = tempfile.mkdtemp(prefix="row-precision-")
    sets = {k: v for k, v in ctr_sets(work, args.rows).items() if k in args.sets.split(",")}
    results = {}
    for name, data in sets.items():
        for seed in seeds:
            # Alternating precisions within a seed: the host's drift falls on all three alike.
            for p in PRECISIONS:
                cluster = DETERMINISTIC if args.cluster == "deterministic" else []
                results.setdefault((name, p), []).append(
                    run(data["data"] + cluster + ["--seed", str(seed), "--row-precision", p.split()[0]],
                        f"{name} {p} seed {seed}"))
    shape = ("1 trainer, 1 thread, 1 shard, no sync" if args.cluster == "deterministic"
             else "2 trainers, 2 shards, background sync")
    lines = [f"### `shadowsync local` ({shape}), seeds {args.seeds}; {args.rows} generated rows",
             "",
             "| data | precision | test NE (mean) | NE / fp32 (per seed) | AUC (mean) | examples/s / fp32 (mean) |",
             "|---|---|---|---|---|---|"]
    summary = []
    for name in sets:
        base = results[(name, "fp32")]
        for p in PRECISIONS:
            runs = results[(name, p)]
            ne_ratio = [r["ne"] / b["ne"] for r, b in zip(runs, base)]
            eps_ratio = [r["eps"] / b["eps"] for r, b in zip(runs, base)]
            aucs = [r["auc"] for r in runs if r["auc"] is not None]
            lines.append(f"| {name} | {p} | {statistics.mean(r['ne'] for r in runs):.5f} | "
                         f"{', '.join(f'{x:.4f}' for x in ne_ratio)} | "
                         f"{statistics.mean(aucs) if aucs else float('nan'):.5f} | {statistics.mean(eps_ratio):.3f} |")
            summary.append({"data": name, "precision": p, "ne": [r["ne"] for r in runs], "ne_ratio": ne_ratio,
                            "auc": aucs, "eps_ratio": eps_ratio})
    write_report(os.path.join(OUT, args.out), "\n".join(lines), [json.dumps(s) for s in summary])


if __name__ == "__main__":
    main()
