#!/usr/bin/python3
"""Id admission's trade-off (--admit-after K): stored embedding rows against test NE, K = 1..8.

One local job per K on the same generated data (one trainer, one worker thread, one shard, one
reader, no lookahead: the runs are deterministic, so one seed shows the effect of K alone), each
exporting its model: the export's row count is the rows the shard stored. K = 1 is no admission.
Prints a table (rows and NE relative to K = 1) and a JSON line, and writes
admission_curve.{md,json} beside this script.

    /usr/bin/python3 bench/experiments/admission/admission_curve.py [--rows N] [--ks 1,2,3,4,5,6,7,8]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import experiment_data, here, report, rows_ne_rows, run_job  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--ks", default="1,2,3,4,5,6,7,8")
    args = ap.parse_args()
    train, test = experiment_data(args.rows)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in [int(x) for x in args.ks.split(",")]:
            r = run_job(["local", "--trainers", "1", "--threads", "1", "--shards", "1", "--readers", "1",
                         "--lookahead", "0", "--progress-interval", "0", "--log-level", "warn", "--train", train,
                         "--test", test, "--admit-after", str(k), "--export", os.path.join(tmp, f"k{k}.ssm")],
                        f"K={k}")
            runs.append({"k": k, "rows": r["export_rows"], "test_ne": r["test_ne"], "test_auc": r["test_auc"],
                         "examples_per_sec": r["examples_per_sec"]})
    base = next((r for r in runs if r["k"] == 1), runs[0])
    lines = [f"Id admission on {args.rows} generated rows (one pass; one trainer, one worker, one shard), "
             f"against K = {base['k']}: {base['rows']} rows, test NE {base['test_ne']:.5f}.", "",
             "| K | stored rows | rows vs K=1 | test NE | NE vs K=1 | ex/s |", "|---|---|---|---|---|---|"]
    lines += rows_ne_rows(runs, base, "k")
    report(here(__file__), "admission_curve", "\n".join(lines),
           {"bench": "admission_curve", "rows": args.rows, "runs": runs})


if __name__ == "__main__":
    main()
