#!/usr/bin/python3
"""What the closing round and the outer optimizer buy (issue 16, items 1 and 2), on this machine.

Short jobs (--rows, default 60k generated rows) with n = 1 and --trainers (default 2, 4), a few
model seeds, the shadow algorithms at their defaults (--sync-interval 0.2 s): test log loss and NE
of each run. `--base-bin` names a shadowsync built without the closing round (e.g. main before
it); its S- runs are the "before" column. A longer run (--long-rows, one n) compares the outer
optimizer (s-*-nesterov) with the plain variants where the closing round matters less.

Writes sync_closing.{md,json} (--out) beside this script and prints the tables. --train/--test run
the short part on given files instead (e.g. the real Criteo sample, split as
bench/experiments/defaults_sweep/defaults_sweep.py does).

    /usr/bin/python3 bench/experiments/sync_closing/sync_closing_experiment.py --base-bin /path/to/old/shadowsync
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import BIN, generated_data, here, local_result  # noqa: E402

OUT = here(__file__)
PLAIN = ["s-easgd", "s-ma", "s-bmuf"]
OUTER = ["s-easgd-nesterov", "s-ma-nesterov"]


def run(binary, args, label):
    t0 = time.time()
    r = local_result(binary, args, label)
    print(f"  {label:40s} logloss {r['test_logloss']:.5f}  NE {r['test_ne']:.5f}  rounds {r['sync_rounds']:4d}"
          f"  ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    return {"logloss": r["test_logloss"], "ne": r["test_ne"], "rounds": r["sync_rounds"],
            "eps": r["examples_per_sec"]}


def data(rows):
    train, test = generated_data("closing", rows, 20000, seed=5)
    return ["--train", train, "--test", test]


def sweep(rows, trainers, seeds, base_bin, algos, files=None):
    """{(n, sync, build): [result per seed]}"""
    files = files or data(rows)
    out = {}
    for seed in seeds:
        common = files + ["--seed", str(seed)]
        out.setdefault((1, "none", "new"), []).append(run(BIN, common + ["--trainers", "1"], f"{rows} n=1 seed {seed}"))
        for n in trainers:
            for sync in algos:
                builds = ["new"] + (["base"] if base_bin and sync in PLAIN else [])
                for build in builds:
                    binary = BIN if build == "new" else base_bin
                    label = f"{rows} n={n} {sync} {build} seed {seed}"
                    out.setdefault((n, sync, build), []).append(
                        run(binary, common + ["--trainers", str(n), "--sync", sync], label))
    return out


def table(results, trainers, title):
    ref = statistics.mean(r["logloss"] for r in results[(1, "none", "new")])
    ref_ne = statistics.mean(r["ne"] for r in results[(1, "none", "new")])
    lines = [f"### {title}", "",
             f"One trainer: test log loss {ref:.5f}, NE {ref_ne:.5f} (mean over seeds). Each cell: mean test log "
             "loss over seeds, and its gap to one trainer's.", "",
             "| n | sync | build | log loss | vs 1 trainer | NE | per seed |", "|---|---|---|---|---|---|---|"]
    for (n, sync, build), rs in sorted(results.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] != "base")):
        if n == 1:
            continue
        ll = statistics.mean(r["logloss"] for r in rs)
        ne = statistics.mean(r["ne"] for r in rs)
        what = "before (no closing round)" if build == "base" else "closing round"
        seeds = ", ".join(f"{r['logloss']:.4f}" for r in rs)
        lines.append(f"| {n} | {sync} | {what} | {ll:.5f} | {100 * (ll / ref - 1):+.2f}% | {ne:.5f} | {seeds} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-bin", default="", help="shadowsync without the closing round")
    ap.add_argument("--rows", type=int, default=60000)
    ap.add_argument("--trainers", default="2,4")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--long-rows", type=int, default=400000)
    ap.add_argument("--long-trainers", type=int, default=4)
    ap.add_argument("--long-seeds", default="1,2")
    ap.add_argument("--train", default="", help="train on this file instead of generated rows (with --test)")
    ap.add_argument("--test", default="")
    ap.add_argument("--name", default="", help="what --train is, for the table's title")
    ap.add_argument("--out", default="sync_closing", help="results file name (beside this script)")
    args = ap.parse_args()
    files = ["--train", args.train, "--test", args.test] if args.train else None
    trainers = [int(x) for x in args.trainers.split(",")]
    short = sweep(args.rows, trainers, [int(s) for s in args.seeds.split(",")], args.base_bin, PLAIN + OUTER, files)
    long = sweep(args.long_rows, [args.long_trainers], [int(s) for s in args.long_seeds.split(",")], "",
                 PLAIN + OUTER) if args.long_rows > 0 else {}
    what = args.name or os.path.basename(args.train) if args.train else f"{args.rows} generated rows"
    md = table(short, trainers, f"{what}, one pass, seeds {args.seeds}")
    if long:
        md += "\n" + table(long, [args.long_trainers], f"{args.long_rows} rows, one pass, seeds {args.long_seeds}")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, args.out + ".md"), "w") as f:
        f.write(md)
    with open(os.path.join(OUT, args.out + ".json"), "w") as f:
        json.dump({"args": vars(args),
                   "short": [{"n": k[0], "sync": k[1], "build": k[2], "runs": v} for k, v in short.items()],
                   "long": [{"n": k[0], "sync": k[1], "build": k[2], "runs": v} for k, v in long.items()]}, f, indent=1)
    print(md)


if __name__ == "__main__":
    main()
