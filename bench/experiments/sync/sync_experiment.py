#!/usr/bin/python3
"""The ShadowSync experiment (docs/sync.md) in one run.

Part 1, quality: for n = 1, 2, 4, 8 trainers and each algorithm in shadow (S-, with and without
the outer Nesterov optimizer) and foreground (FR-, --ks) mode, at a fixed sync capacity
(--sync-servers), one pass over the same generated data: cluster examples/s, examples/s per
trainer, sync gap, bytes per round and test NE.
Part 2, throughput: shadow against none at n = 2, 4, 8, each run --repeat times in alternation on
the first --throughput-rows rows (this machine is shared and noisy: medians, not single runs).
Part 3, SIMULATED: every training step is a calibrated wait instead of the model's compute (no
data, no lookups; the sync layer and the dense parameters are real), to show how the sync layer
behaves at 8-256 trainers on a machine with fewer cores (foreground runs up to --simulated-fr-max).

Writes sync_experiment.md (the tables), sync_eps.png, sync_ne.png, sync_simulated.png and
sync_experiment.json beside this script, and prints the tables.

    /usr/bin/python3 bench/experiments/sync/sync_experiment.py [--rows N] [--quick]

Needs a built tree (scripts/build.sh) and python3-matplotlib (scripts/setup.sh --bench).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import BIN, ROOT, experiment_data as data, here, load_runs, pyplot, run_job  # noqa: E402

OUT = here(__file__)
RUNS = os.path.join(OUT, "sync_experiment.runs.jsonl")
done_runs = {}  # label -> result, from RUNS with --resume


def run(args, label):
    return run_job(args, label, RUNS, done_runs)


def calibrate_step_ms(train):
    """The real time of one training step (batch 128, one worker) on this machine, in ms."""
    r = subprocess.run([BIN, "train", "--train", train, "--threads", "1", "--progress-interval", "0"],
                       capture_output=True, text=True, env=dict(os.environ))
    j = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][-1])
    return 1000.0 * 128 / j["examples_per_sec"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4000000, help="training rows (one pass) for the quality part")
    ap.add_argument("--throughput-rows", type=int, default=1000000, help="rows of the throughput part")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of each throughput run")
    ap.add_argument("--trainers", default="1,2,4,8")
    ap.add_argument("--ks", default="10", help="foreground sync periods k (batches)")
    ap.add_argument("--sync-servers", type=int, default=2, help="sync capacity, the same for every run")
    ap.add_argument("--simulated-trainers", default="8,16,32,64,128,256")
    ap.add_argument("--simulated-fr-max", type=int, default=64,
                    help="foreground runs only up to this many SIMULATED trainers (they stop every worker)")
    ap.add_argument("--simulated-steps", type=int, default=1500)
    ap.add_argument("--quick", action="store_true", help="fewer runs (smoke test)")
    ap.add_argument("--resume", action="store_true",
                    help=f"take the runs already in {os.path.relpath(RUNS, ROOT)} instead of running them again")
    args = ap.parse_args()
    if args.resume:
        done_runs.update(load_runs(RUNS))
    elif os.path.exists(RUNS):
        os.remove(RUNS)
    os.makedirs(OUT, exist_ok=True)
    ns = [int(x) for x in args.trainers.split(",")]
    ks = [int(x) for x in args.ks.split(",")]
    sim_ns = [int(x) for x in args.simulated_trainers.split(",")]
    if args.quick:
        ns, ks, sim_ns = [1, 2], ks[:1], sim_ns[:2]
        args.repeat = 1
    train, test = data(args.rows)
    small_train, _ = data(args.throughput_rows)
    common = ["--shards", "1", "--readers", "1", "--threads", "1", "--progress-interval", "0",
              "--log-level", "warn", "--sync-servers", str(args.sync_servers), "--train", train, "--test", test]

    algorithms = [("none", None)]
    for a in ("easgd", "ma", "bmuf"):
        algorithms.append((f"s-{a}", None))
        if a != "bmuf":
            algorithms.append((f"s-{a}-nesterov", None))
        for k in ks:
            algorithms.append((f"fr-{a}", k))

    results = {}
    print(f"real training: {args.rows} rows, one pass, sync capacity {args.sync_servers} server(s)", file=sys.stderr)
    for n in ns:
        for sync, k in algorithms:
            if n == 1 and sync != "none":
                continue  # one trainer has nobody to sync with
            label = f"n={n} {sync}" + (f" k={k}" if k else "")
            extra = ["--trainers", str(n), "--sync", sync] + (["--sync-every", str(k)] if k else [])
            results[label] = {**run(["local"] + common + extra, label), "n": n, "sync": sync, "k": k}

    print(f"throughput: shadow vs none, {args.throughput_rows} rows, {args.repeat} runs each", file=sys.stderr)
    tput = {}
    tput_common = ["--shards", "1", "--readers", "1", "--threads", "1", "--progress-interval", "0",
                   "--log-level", "warn", "--sync-servers", str(args.sync_servers), "--train", small_train]
    for n in [x for x in ns if x > 1]:
        for r in range(args.repeat):
            for sync in ("none", "s-easgd", "s-ma", "s-bmuf"):
                label = f"n={n} {sync} #{r + 1}"
                res = run(["local", "--trainers", str(n), "--sync", sync] + tput_common, label)
                tput.setdefault((n, sync), []).append(res["examples_per_sec"])

    step_ms = done_runs["calibrate"]["step_ms"] if "calibrate" in done_runs else calibrate_step_ms(train)
    if "calibrate" not in done_runs:
        with open(RUNS, "a") as f:
            f.write(json.dumps({"label": "calibrate", "result": {"step_ms": step_ms}}) + "\n")
    print(f"simulated: a step waits {step_ms:.2f} ms (this machine's real step at batch 128)", file=sys.stderr)
    sim = {}
    sim_common = ["--shards", "0", "--readers", "0", "--threads", "1", "--progress-interval", "0",
                  "--log-level", "warn", "--sync-servers", str(args.sync_servers),
                  "--simulate-step-ms", f"{step_ms:.3f}", "--simulate-steps", str(args.simulated_steps)]
    sim_algorithms = [("none", None), ("s-easgd", None), ("s-ma", None), ("s-bmuf", None), ("fr-easgd", ks[0]),
                      ("fr-ma", ks[0])]
    for n in sim_ns:
        for sync, k in sim_algorithms:
            if k and n > args.simulated_fr_max:
                continue
            label = f"sim n={n} {sync}" + (f" k={k}" if k else "")
            extra = ["--trainers", str(n), "--sync", sync] + (["--sync-every", str(k)] if k else [])
            sim[label] = {**run(["local"] + extra + sim_common, label), "n": n, "sync": sync, "k": k}

    write_report(results, tput, sim, step_ms, args)


def fmt_ne(x):
    return "n/a" if x is None else f"{x:.5f}"


def kb_per_round(r):
    """What a trainer's round moved, both ways and every slice: the cluster's sync bytes over its rounds."""
    if "sync_bytes" not in r:
        return "n/a"
    return f"{r['sync_bytes'] / r['sync_rounds'] / 1e3:.0f}" if r.get("sync_rounds") else ""


def mb_per_sec(r):
    """Sync bytes of the whole cluster per second of the job's training."""
    seconds = r["examples"] / r["examples_per_sec"] if r.get("examples_per_sec") else 0
    return f"{r.get('sync_bytes', 0) / seconds / 1e6:.0f}" if seconds > 0 else ""


def write_report(results, tput, sim, step_ms, args):
    lines = [f"# ShadowSync experiment", "",
             f"One pass over {args.rows:,} generated rows (test: 100,000), batch 128, 1 worker per trainer, "
             f"1 shard, 1 reader, sync capacity {args.sync_servers} server(s), on this machine "
             f"({os.cpu_count()} cores). Cluster examples/s counts every trainer; the sync gap is the mean "
             f"number of a trainer's batches between two of its syncs.", "",
             "| trainers | sync | k | cluster ex/s | ex/s per trainer | vs none | sync gap | rounds | KB per round | "
             "test NE | vs 1 trainer |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {r["n"]: r["examples_per_sec"] for r in results.values() if r["sync"] == "none"}
    one = next((r.get("test_ne") for r in results.values() if r["n"] == 1), None)
    for r in results.values():
        ne = r.get("test_ne")
        r["ne_vs_one"] = 100 * (ne / one - 1) if ne and one else None
        vs_one = f"{r['ne_vs_one']:+.2f}%" if r["ne_vs_one"] is not None and r["n"] > 1 else ""
        lines.append(f"| {r['n']} | {r['sync']} | {r['k'] or ''} | {r['examples_per_sec']:.0f} | "
                     f"{r['examples_per_sec'] / r['n']:.0f} | {100 * r['examples_per_sec'] / base[r['n']]:.1f}% | "
                     f"{r['sync_gap']:.1f} | {r.get('sync_rounds', 'n/a')} | {kb_per_round(r)} | {fmt_ne(ne)} | {vs_one} |")
    import statistics
    lines += ["", f"Throughput, shadow against none: median of {args.repeat} alternating runs over the first "
              f"{args.throughput_rows:,} rows (same cores, same n):", "",
              "| trainers | none ex/s | s-easgd | s-ma | s-bmuf |", "|---|---|---|---|---|"]
    for n in sorted({k[0] for k in tput}):
        none = statistics.median(tput[(n, "none")])
        cells = [f"{statistics.median(tput[(n, s)]):.0f} ({100 * statistics.median(tput[(n, s)]) / none:.1f}%)"
                 for s in ("s-easgd", "s-ma", "s-bmuf")]
        lines.append(f"| {n} | {none:.0f} | " + " | ".join(cells) + " |")
    lines += ["", f"SIMULATED compute (each step waits {step_ms:.2f} ms, this machine's real step time; no data, "
              f"no lookups; {args.simulated_steps} steps per trainer; the sync layer and the dense "
              f"parameters are real):", "",
              "| trainers | sync | k | cluster ex/s | ideal ex/s | of ideal | sync gap | rounds | KB per round | "
              "sync MB/s | stopped worker-s |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sim.values():
        ideal = r["n"] * 128 * 1000.0 / step_ms
        r["of_ideal"] = 100 * r["examples_per_sec"] / ideal
        lines.append(f"| {r['n']} | {r['sync']} | {r['k'] or ''} | {r['examples_per_sec']:.0f} | {ideal:.0f} | "
                     f"{100 * r['examples_per_sec'] / ideal:.1f}% | {r['sync_gap']:.1f} | {r['sync_rounds']} | "
                     f"{kb_per_round(r)} | {mb_per_sec(r)} | {r['sync_wait_seconds']:.1f} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(OUT, "sync_experiment.md"), "w") as f:
        f.write(text)
    with open(os.path.join(OUT, "sync_experiment.json"), "w") as f:
        json.dump({"real": list(results.values()), "simulated": list(sim.values()), "step_ms": step_ms,
                   "throughput": {f"{n} {s}": v for (n, s), v in tput.items()}}, f)
    print(text)
    plot(results, sim)


def plot(results, sim):
    plt = pyplot()
    if plt is None:
        return

    def series(rows, key):
        by = {}
        for r in rows:
            name = r["sync"] + (f" k={r['k']}" if r["k"] else "")
            by.setdefault(name, []).append((r["n"], r[key]))
        return {k: sorted(v) for k, v in by.items()}

    for key, ylabel, fname, rows in [
        ("examples_per_sec", "cluster examples/s", "sync_eps.png", list(results.values())),
        ("ne_vs_one", "test NE vs 1 trainer, % (lower is better)", "sync_ne.png", list(results.values())),
        ("of_ideal", "% of linear scaling (SIMULATED compute)", "sync_simulated.png", list(sim.values())),
    ]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for name, pts in series(rows, key).items():
            pts = [(n, v) for n, v in pts if v is not None]
            if not pts:
                continue
            style = "-" if name.startswith("s-") else ("--" if name.startswith("fr-") else ":")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=name)
        ax.set_xlabel("trainers")
        ax.set_ylabel(ylabel)
        ax.set_xscale("log", base=2)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, fname), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
