#!/usr/bin/python3
"""How the outer optimizer's momentum (--outer-momentum) moves test NE, to choose its default.

For each n in --trainers and each momentum in --momenta (and each algorithm in --algorithms), one
pass over the same generated data as bench/experiments/sync/sync_experiment.py (data/experiment-ROWS, made when
missing), the experiment's settings otherwise (one shard, one reader, one worker per trainer,
--sync-servers 2). NE is compared with a one-trainer run of the same data, taken from
bench/experiments/sync/sync_experiment.runs.jsonl when that holds one ("n=1 none"), else run here.
Each run is appended to outer_momentum_sweep.runs.jsonl (beside this script) as it ends; --resume takes
the runs already there (without it the file starts over). Prints a table (NE relative to one
trainer) and a JSON line, and writes both to outer_momentum_sweep.md beside this script.

    /usr/bin/python3 bench/experiments/outer_momentum/outer_momentum_sweep.py [--rows N] [--trainers 2,4,8]
                                                                           [--momenta 0.25,0.5]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import ROOT, experiment_data, here, load_runs, run_job  # noqa: E402

OUT = here(__file__)
RUNS = os.path.join(OUT, "outer_momentum_sweep.runs.jsonl")
EXPERIMENT_RUNS = os.path.join(ROOT, "bench", "experiments", "sync", "sync_experiment.runs.jsonl")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4000000)
    ap.add_argument("--trainers", default="2,4,8")
    ap.add_argument("--momenta", default="0.25,0.5", help="values of --outer-momentum (-1: 1 - 1/n)")
    ap.add_argument("--algorithms", default="s-ma-nesterov")
    ap.add_argument("--sync-servers", type=int, default=2)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    train, test = experiment_data(args.rows)
    common = ["local", "--shards", "1", "--readers", "1", "--threads", "1", "--progress-interval", "0",
              "--log-level", "warn", "--sync-servers", str(args.sync_servers), "--train", train, "--test", test]
    done = load_runs(RUNS) if args.resume else {}
    if not args.resume and os.path.exists(RUNS):
        os.remove(RUNS)
    # The experiment's one-trainer run is the same job on the same data (its label says so).
    if args.rows == 4000000:
        done.update({k: v for k, v in load_runs(EXPERIMENT_RUNS).items() if k == "n=1 none"})
    base = run_job(common + ["--trainers", "1", "--sync", "none"], "n=1 none", RUNS, done)["test_ne"]
    ns = [int(x) for x in args.trainers.split(",")]
    momenta = [float(x) for x in args.momenta.split(",")]
    table = {}
    for algo in args.algorithms.split(","):
        for n in ns:
            for mu in momenta:
                label = f"n={n} {algo} mu={mu:g}"
                r = run_job(common + ["--trainers", str(n), "--sync", algo, "--outer-momentum", str(mu)], label, RUNS,
                            done)
                table[(algo, n, mu)] = r["test_ne"] / base - 1
    lines = [f"test NE relative to one trainer ({base:.5f}), {args.rows} rows, one pass", ""]
    for algo in args.algorithms.split(","):
        lines.append(f"| {algo} | " + " | ".join(f"mu {mu:g}" if mu >= 0 else "mu 1-1/n" for mu in momenta) + " |")
        lines.append("|---|" + "---|" * len(momenta))
        for n in ns:
            lines.append(f"| n={n} | " + " | ".join(f"{100 * table[(algo, n, mu)]:+.2f}%" for mu in momenta) + " |")
        lines.append("")
    summary = json.dumps({"bench": "outer_momentum_sweep", "rows": args.rows, "base_ne": base,
                          "relative_ne": [{"algorithm": a, "trainers": n, "momentum": mu, "ne_vs_one": v}
                                          for (a, n, mu), v in table.items()]})
    print("\n".join(lines))
    print(summary)
    with open(os.path.join(OUT, "outer_momentum_sweep.md"), "w") as f:
        f.write("\n".join(lines) + "\n" + summary + "\n")


if __name__ == "__main__":
    main()
