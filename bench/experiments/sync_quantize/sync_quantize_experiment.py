#!/usr/bin/python3
"""What 8-bit sync rounds cost and save (issue 16, item 3), on this machine.

`shadowsync local` jobs on generated rows (--rows, default 300k, one pass), --trainers trainers
and --sync-servers slices, each shadow algorithm with --sync-quantize none and int8, over a few
model seeds: test NE, sync bytes per round and in all (what every trainer's rounds sent and
received), examples/s. The int8 run of a seed is compared with the FP32 run of the same seed (the
same data and model seed; the runs differ only by what the rounds sent and by timing).

Writes sync_quantize.{md,json} (--out) beside this script and prints the table.

    /usr/bin/python3 bench/experiments/sync_quantize/sync_quantize_experiment.py
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


def run(args, label):
    t0 = time.time()
    r = local_result(BIN, args, label)
    per_round = r["sync_bytes"] / max(1, r["sync_rounds"])
    print(f"  {label:36s} NE {r['test_ne']:.5f}  rounds {r['sync_rounds']:4d}  {per_round / 1e3:8.1f} KB/round"
          f"  {r['examples_per_sec']:8.0f} ex/s  ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    return {"ne": r["test_ne"], "logloss": r["test_logloss"], "rounds": r["sync_rounds"], "bytes": r["sync_bytes"],
            "bytes_per_round": per_round, "eps": r["examples_per_sec"]}


def data(rows):
    train, test = generated_data("quantize", rows, 30000, seed=5)
    return ["--train", train, "--test", test]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=300000)
    ap.add_argument("--trainers", type=int, default=2)
    ap.add_argument("--sync-servers", type=int, default=2)
    ap.add_argument("--algos", default="s-easgd,s-ma,s-bmuf")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", default="sync_quantize", help="results file name (beside this script)")
    args = ap.parse_args()
    files = data(args.rows)
    results = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        for sync in args.algos.split(","):
            for q in ["none", "int8"]:
                label = f"{sync} {q} seed {seed}"
                results.setdefault((sync, q), []).append(run(
                    files + ["--seed", str(seed), "--trainers", str(args.trainers), "--sync", sync,
                             "--sync-servers", str(args.sync_servers), "--sync-quantize", q], label))
    lines = [f"### {args.rows} generated rows, one pass, {args.trainers} trainers, {args.sync_servers} sync servers, "
             f"seeds {args.seeds}", "",
             "Each cell: the mean over seeds. NE vs FP32: the int8 run's test NE relative to the FP32 run of the same "
             "seed, mean (and each seed's). Bytes: what every trainer's rounds sent and received, per round (a "
             "round: every slice synced once) and in all; the ratio is FP32's over int8's.", "",
             "| sync | rounds | test NE FP32 | test NE int8 | NE vs FP32 | KB/round FP32 | KB/round int8 | bytes ratio "
             "| examples/s FP32 | examples/s int8 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for sync in args.algos.split(","):
        fp, q8 = results[(sync, "none")], results[(sync, "int8")]
        rel = [100 * (b["ne"] / a["ne"] - 1) for a, b in zip(fp, q8)]
        ratio = statistics.mean(a["bytes_per_round"] for a in fp) / statistics.mean(b["bytes_per_round"] for b in q8)
        lines.append(
            f"| {sync} | {statistics.mean(r['rounds'] for r in q8):.0f} "
            f"| {statistics.mean(r['ne'] for r in fp):.5f} | {statistics.mean(r['ne'] for r in q8):.5f} "
            f"| {statistics.mean(rel):+.3f}% ({', '.join(f'{x:+.3f}' for x in rel)}) "
            f"| {statistics.mean(r['bytes_per_round'] for r in fp) / 1e3:.1f} "
            f"| {statistics.mean(r['bytes_per_round'] for r in q8) / 1e3:.1f} | {ratio:.2f}x "
            f"| {statistics.mean(r['eps'] for r in fp):.0f} | {statistics.mean(r['eps'] for r in q8):.0f} |")
    md = "\n".join(lines) + "\n"
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, args.out + ".md"), "w") as f:
        f.write(md)
    with open(os.path.join(OUT, args.out + ".json"), "w") as f:
        json.dump({"args": vars(args), "results": [{"sync": k[0], "quantize": k[1], "runs": v}
                                                   for k, v in results.items()]}, f, indent=1)
    print(md)


if __name__ == "__main__":
    main()
