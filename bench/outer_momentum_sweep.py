#!/usr/bin/python3
"""How the outer optimizer's momentum (--outer-momentum) moves test NE, to choose its default.

For each n in --trainers and each momentum in --momenta (and each algorithm in --algorithms), one
pass over the same generated data as bench/sync_experiment.py (data/experiment-ROWS, made when
missing), the experiment's settings otherwise (one shard, one reader, one worker per trainer,
--sync-servers 2). NE is compared with a one-trainer run of the same data, taken from
bench/results/sync_experiment.runs.jsonl when that holds one ("n=1 none"), else run here.
Each run is appended to bench/results/outer_momentum_sweep.runs.jsonl as it ends; --resume takes
the runs already there. Prints a table (NE relative to one trainer) and a JSON line.

    /usr/bin/python3 bench/outer_momentum_sweep.py [--rows N] [--trainers 2,4,8] [--momenta 0.25,0.5]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(os.environ.get("SS_BUILD_DIR", os.path.join(ROOT, "build")), "services/cli/shadowsync")
OUT = os.path.join(ROOT, "bench", "results")
RUNS = os.path.join(OUT, "outer_momentum_sweep.runs.jsonl")
EXPERIMENT_RUNS = os.path.join(OUT, "sync_experiment.runs.jsonl")


def load_runs(path):
    runs = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                runs[r["label"]] = r["result"]
    return runs


def run(args, label, done):
    if label in done:
        return done[label]
    t0 = time.time()
    p = subprocess.run([BIN] + args, capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        raise SystemExit(f"{label}: shadowsync exited {p.returncode}")
    result = json.loads(lines[-1])
    print(f"  {label:36s} {result['examples_per_sec']:9.0f} ex/s  NE {result['test_ne']:.5f}  ({time.time() - t0:.0f} s)",
          file=sys.stderr, flush=True)
    with open(RUNS, "a") as f:
        f.write(json.dumps({"label": label, "result": result}) + "\n")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4000000)
    ap.add_argument("--trainers", default="2,4,8")
    ap.add_argument("--momenta", default="0.25,0.5", help="values of --outer-momentum (-1: 1 - 1/n)")
    ap.add_argument("--algorithms", default="s-ma-nesterov")
    ap.add_argument("--sync-servers", type=int, default=2)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    d = os.path.join(ROOT, "data", f"experiment-{args.rows}")
    if not os.path.exists(os.path.join(d, "teacher.json")):
        subprocess.run([BIN, "gen-data", "--out", d, "--rows", str(args.rows), "--test-rows", "100000"],
                       check=True, capture_output=True)
    common = ["local", "--shards", "1", "--readers", "1", "--threads", "1", "--progress-interval", "0",
              "--log-level", "warn", "--sync-servers", str(args.sync_servers),
              "--train", os.path.join(d, "train.tsv"), "--test", os.path.join(d, "test.tsv")]
    done = load_runs(RUNS) if args.resume else {}
    # The experiment's one-trainer run is the same job on the same data (its label says so).
    if args.rows == 4000000:
        done.update({k: v for k, v in load_runs(EXPERIMENT_RUNS).items() if k == "n=1 none"})
    base = run(common + ["--trainers", "1", "--sync", "none"], "n=1 none", done)["test_ne"]
    ns = [int(x) for x in args.trainers.split(",")]
    momenta = [float(x) for x in args.momenta.split(",")]
    table = {}
    for algo in args.algorithms.split(","):
        for n in ns:
            for mu in momenta:
                label = f"n={n} {algo} mu={mu:g}"
                r = run(common + ["--trainers", str(n), "--sync", algo, "--outer-momentum", str(mu)], label, done)
                table[(algo, n, mu)] = r["test_ne"] / base - 1
    print(f"\ntest NE relative to one trainer ({base:.5f}), {args.rows} rows, one pass\n")
    for algo in args.algorithms.split(","):
        print(f"| {algo} | " + " | ".join(f"mu {mu:g}" if mu >= 0 else "mu 1-1/n" for mu in momenta) + " |")
        print("|---|" + "---|" * len(momenta))
        for n in ns:
            print(f"| n={n} | " + " | ".join(f"{100 * table[(algo, n, mu)]:+.2f}%" for mu in momenta) + " |")
        print()
    print(json.dumps({"bench": "outer_momentum_sweep", "rows": args.rows, "base_ne": base,
                      "relative_ne": [{"algorithm": a, "trainers": n, "momentum": mu, "ne_vs_one": v}
                                      for (a, n, mu), v in table.items()]}))


if __name__ == "__main__":
    main()
