#!/usr/bin/python3
"""Bounding a model's rows: row TTL (--row-ttl) and full tables that evict (--max-rows-per-table),
stored rows against test NE.

One local job per setting on the same generated data (one trainer, one worker thread, one shard,
one reader, no lookahead; shard sweeps and flushes every 50 ms), each exporting its model: the
export's row count is the rows the shard held at the end. A TTL is in examples, so which rows it
keeps depends on the input alone; which rows a sweep has deleted by a given batch depends on its
timing, so repeated runs differ slightly. Prints a table (rows and NE relative to no bound) and a
JSON line, and writes row_limits_curve.{md,json} beside this script.

    /usr/bin/python3 bench/experiments/row_limits/row_limits_curve.py [--rows N] [--ttls 500000,200000,...] [--max-rows 30000,...]
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
    ap.add_argument("--ttls", default="500000,200000,100000,50000", help="row TTLs, in examples")
    ap.add_argument("--max-rows", default="100000,30000,10000,3000", help="--max-rows-per-table values")
    args = ap.parse_args()
    train, test = experiment_data(args.rows)
    settings = [("none", [])]
    settings += [(f"ttl {t}", ["--row-ttl", f"{t}ex"]) for t in args.ttls.split(",") if t]
    settings += [(f"max-rows {m}", ["--max-rows-per-table", m]) for m in args.max_rows.split(",") if m]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, extra in settings:
            r = run_job(["local", "--trainers", "1", "--threads", "1", "--shards", "1", "--readers", "1",
                         "--lookahead", "0", "--progress-interval", "0", "--log-level", "warn", "--flush-interval",
                         "0.05", "--train", train, "--test", test,
                         "--export", os.path.join(tmp, label.replace(" ", "-") + ".ssm")] + extra, label)
            runs.append({"setting": label, "rows": r["export_rows"], "test_ne": r["test_ne"],
                         "test_auc": r["test_auc"], "examples_per_sec": r["examples_per_sec"]})
    base = runs[0]
    lines = [f"Bounding the rows of a model trained on {args.rows} generated rows (one pass; one trainer, one "
             f"worker, one shard), against no bound: {base['rows']} rows, test NE {base['test_ne']:.5f}.", "",
             "| bound | rows at the end | rows vs none | test NE | NE vs none | ex/s |", "|---|---|---|---|---|---|"]
    lines += rows_ne_rows(runs, base, "setting")
    report(here(__file__), "row_limits_curve", "\n".join(lines),
           {"bench": "row_limits_curve", "rows": args.rows, "runs": runs})


if __name__ == "__main__":
    main()
