#!/usr/bin/python3
"""What shadow sync costs in CPU: CPU-seconds per example with and without it.

On a machine whose cores are all busy training (this one: 2 vCPUs for every trainer, shard,
reader and sync server of a local job), every CPU-second the sync layer spends is a CPU-second
training does not get, so the throughput cost of shadow sync is its CPU share. On a machine
with cores to spare for the syncer and the sync servers it would cost training nothing but the
memory bandwidth of reading the replica. This script measures the CPU side: for n in --trainers
and each algorithm, --repeat runs of a local job over the same rows, alternating, and reports
median examples/s, user+system CPU-seconds per 100k examples (the job's process, from
getrusage), rounds per second and the ratios against --sync none.

--layout trainer-core runs the job with --processes, every trainer process on CPU 0 and every
other service (coordinator, sync servers, shard, reader) on CPU 1, as on a cluster whose sync
servers and shards run on machines of their own: then what shadow sync costs the trainers is
their share of each round (snapshot, encode, apply, transport), and the CPU-seconds reported are
the trainer processes' alone.

    /usr/bin/python3 bench/experiments/sync_cpu_cost/sync_cpu_cost.py [--rows 1000000] [--trainers 2,4,8]
                                            [--repeat 2] [--layout shared|trainer-core]

It prints its table and JSON line only; the recorded runs beside it (sync_cpu_cost.md,
sync_cpu_cost-trainer-core.md) are its output, saved.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import BIN, experiment_data, result_line, run_job, run_pinned  # noqa: E402


def cpu_seconds():
    """User and system CPU-seconds of every child that ended so far (one job runs at a time)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--trainers", default="2,4,8")
    ap.add_argument("--algorithms", default="s-easgd,s-ma,s-bmuf")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--sync-servers", type=int, default=2)
    ap.add_argument("--layout", choices=["shared", "trainer-core"], default="shared")
    args = ap.parse_args()
    train, _ = experiment_data(args.rows)
    tmp = tempfile.TemporaryDirectory()
    common = ["local", "--shards", "1", "--readers", "1", "--threads", "1", "--progress-interval", "0",
              "--log-level", "warn", "--sync-servers", str(args.sync_servers), "--train", train]
    table = []
    for n in [int(x) for x in args.trainers.split(",")]:
        algos = ["none"] + args.algorithms.split(",")
        samples = {a: [] for a in algos}
        for rep in range(args.repeat):
            for a in algos:  # alternating, so that the machine's drift hits every algorithm alike
                job = common + ["--trainers", str(n), "--sync", a]
                if args.layout == "shared":
                    before = cpu_seconds()
                    r = run_job(job, f"n={n} {a} #{rep + 1}")
                    cpu, busy = cpu_seconds() - before, None
                else:
                    r, cpu, busy = run_on_trainer_core(job, os.path.join(tmp.name, f"{n}-{a}-{rep}"))
                samples[a].append({"eps": r["examples_per_sec"], "cpu_per_100k": cpu / r["examples"] * 1e5,
                                   "rounds_per_sec": r["sync_rounds"] / r["seconds"] if r["seconds"] else 0})
                if busy is not None:
                    samples[a][-1]["trainer_core_busy"] = busy
                print(f"  n={n} {a:8s} #{rep + 1}: {r['examples_per_sec']:8.0f} ex/s, "
                      f"{samples[a][-1]['cpu_per_100k']:.2f} CPU-s per 100k examples, "
                      f"{samples[a][-1]['rounds_per_sec']:.1f} rounds/s"
                      + (f", trainers' core {100 * busy:.0f}% busy" if busy is not None else ""),
                      file=sys.stderr, flush=True)
        med = {a: {k: statistics.median(s[k] for s in samples[a]) for k in samples[a][0]} for a in algos}
        for a in algos[1:]:
            table.append({"trainers": n, "sync": a, "eps_vs_none": med[a]["eps"] / med["none"]["eps"],
                          "cpu_vs_none": med[a]["cpu_per_100k"] / med["none"]["cpu_per_100k"],
                          "rounds_per_sec": med[a]["rounds_per_sec"], "cpu_per_100k": med[a]["cpu_per_100k"],
                          "none_cpu_per_100k": med["none"]["cpu_per_100k"],
                          "each_eps": [x["eps"] for x in samples[a]],
                          "none_each_eps": [x["eps"] for x in samples["none"]]})
    whose = "CPU per example" if args.layout == "shared" else "trainers' CPU per example"
    print(f"\n| trainers | sync | ex/s vs none | {whose} vs none | rounds/s |")
    print("|---|---|---|---|---|")
    for t in table:
        print(f"| {t['trainers']} | {t['sync']} | {100 * t['eps_vs_none']:.1f}% | {100 * (t['cpu_vs_none'] - 1):+.1f}% | "
              f"{t['rounds_per_sec']:.1f} |")
    print(json.dumps({"bench": "sync_cpu_cost", "layout": args.layout, "rows": args.rows, "repeat": args.repeat,
                      "runs": table}))


def run_on_trainer_core(job, run_dir):
    """The job with its trainers on CPU 0 and everything else on CPU 1: (result line, the trainers'
    CPU-seconds, how busy they kept CPU 0)."""
    p, cpu, ran = run_pinned([BIN] + job, run_dir, 1, {"trainer-": 0})
    trainers_cpu = sum(cpu.values())
    return result_line(p, " ".join(job[-4:])), trainers_cpu, trainers_cpu / max(1e-9, max(ran.values()))


if __name__ == "__main__":
    main()
