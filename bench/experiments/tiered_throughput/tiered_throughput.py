#!/usr/bin/python3
"""A cluster job's examples/s against its shard's cache hit rate: every row in RAM, then memory
budgets of --budget-pcts of the rows' size (and the --prefetch-pct one again with prefetch hints);
hit rate and peak rows in RAM from the shard's last log line.

`shadowsync local` (default trainers and readers, one shard, --state-dir so the rows persist in
every run) on the experiment's generated data, alternating the configurations --repeat times
(this machine is shared and noisy); medians against the all-in-RAM runs. Two layouts:

  shared      (default) one process: the shard, the readers and the trainers share every core.
  shard-core  --processes, the shard's process on CPU 1 and every other process on CPU 0: the
              shard has a core of its own, as on a cluster where shards run on machines of
              their own, so what its storage costs shows as the shard's time, not the trainers'.

Prints a table and a JSON line and writes tiered_throughput{,-shard-core}.{md,json,png} beside this
script.

    /usr/bin/python3 bench/experiments/tiered_throughput/tiered_throughput.py [--rows N] [--budget-pcts 5,10,20,40]
                                       [--prefetch-pct 10] [--repeat R] [--layout shared|shard-core]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import BIN, experiment_data, here, pyplot, report, result_line, run_pinned  # noqa: E402

ROW_BYTES = (16 + 1) * 4 + 48  # dim 16 + row-wise adagrad state, plus the index (row_bytes_in_memory)
STOP_LINE = re.compile(r"all rows written to storage before stopping: (\d+) stored, (\d+) in RAM \(budget (\d+), "
                       r"peak (\d+)\); hit rate ([0-9.]+) \((\d+) misses\), (\d+) evictions, (\d+) rows read back, "
                       r"(\d+) read ahead by hints")


def run(train, test, state, extra, label, layout="shared"):
    t0 = time.time()
    cmd = [BIN, "local", "--shards", "1", "--train", train, "--test", test, "--progress-interval", "0",
           "--log-level", "info", "--state-dir", state] + extra
    shard_busy = None  # of its one CPU, with the shard on a core of its own
    if layout == "shared":
        p = subprocess.run(cmd, capture_output=True, text=True)
    else:
        p, cpu, ran = run_pinned(cmd, state + "-run", 0, {"shard-": 1})
        shard_busy = cpu.get("shard-0", 0) / max(1e-9, ran.get("shard-0", 0))
    r = result_line(p, label)
    out = {"label": label, "examples_per_sec": r["examples_per_sec"], "test_ne": r["test_ne"]}
    if shard_busy is not None:
        out["shard_busy"] = shard_busy
    m = STOP_LINE.search(p.stderr)
    if m:
        stored, ram, budget, peak, hit, misses, evictions, read_back, warmed = m.groups()
        out.update(rows=int(stored), budget_rows=int(budget), peak_rows=int(peak), hit_rate=float(hit),
                   rows_read_back=int(read_back), rows_warmed=int(warmed))
    else:
        rows = re.search(r"all (\d+) rows written to storage before stopping", p.stderr)
        out.update(rows=int(rows.group(1)) if rows else 0)
    print(f"  {label:18s} {out['examples_per_sec']:8.0f} ex/s  NE {out['test_ne']:.5f}  "
          f"hit rate {out.get('hit_rate', 1):.3f}  peak {out.get('peak_rows', out['rows'])} rows  "
          + (f"shard busy {100 * out['shard_busy']:.0f}%  " if "shard_busy" in out else "") +
          f"({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--budget-pcts", default="5,10,20,40")
    ap.add_argument("--prefetch-pct", type=float, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--layout", choices=["shared", "shard-core"], default="shared")
    args = ap.parse_args()
    bench_name = "tiered_throughput" + ("" if args.layout == "shared" else "-shard-core")
    pcts = [float(x) for x in args.budget_pcts.split(",")]
    train, test = experiment_data(args.rows)
    runs = {"ram": []}
    budgets = {}  # run name -> MB
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            runs["ram"].append(run(train, test, os.path.join(tmp, f"ram{i}"), [], "ram", args.layout))
            if not budgets:
                full = runs["ram"][0]["rows"] * ROW_BYTES / (1 << 20)
                for p in pcts:
                    budgets[f"budget {p:g}%"] = max(1, round(full * p / 100))
                budgets[f"budget {args.prefetch_pct:g}% + prefetch"] = max(1, round(full * args.prefetch_pct / 100))
            for k, (name, mb) in enumerate(budgets.items()):
                extra = ["--memory-budget-mb", str(mb)] + (["--prefetch"] if "prefetch" in name else [])
                # A state directory of its own: a finished job's directory only reports its result.
                runs.setdefault(name, []).append(
                    run(train, test, os.path.join(tmp, f"b{k}-{i}"), extra, name, args.layout))
    ram_eps = statistics.median(r["examples_per_sec"] for r in runs["ram"])
    rows = runs["ram"][0]["rows"]
    full_mb = rows * ROW_BYTES / (1 << 20)
    pinned = args.layout == "shard-core"
    where = ("in one process (2 trainers, 1 shard, --state-dir), every thread sharing both CPUs"
             if args.layout == "shared" else
             "with --processes (2 trainers, 1 shard, --state-dir), the shard's process alone on CPU 1 and "
             "every other process on CPU 0")
    lines = [f"{args.rows} generated rows, one pass, `shadowsync local` {where}, {args.repeat} alternating runs each, "
             f"medians. The shard's {rows} rows take "
             f"{full_mb:.1f} MB in RAM (all-in-RAM run: {ram_eps:.0f} ex/s).", "",
             "| run | budget MB | ex/s | vs all in RAM | test NE | hit rate | peak rows in RAM / budget | "
             "rows read back | rows read ahead |" + (" shard's CPU busy |" if pinned else ""),
             "|---|---|---|---|---|---|---|---|---|" + ("---|" if pinned else "")]
    summary = {"bench": bench_name, "layout": args.layout, "rows": args.rows, "shard_rows": rows, "all_in_ram_mb": full_mb,
               "repeat": args.repeat, "runs": []}
    for name, rs in runs.items():
        eps = statistics.median(r["examples_per_sec"] for r in rs)
        entry = {"run": name, "budget_mb": budgets.get(name, 0), "examples_per_sec": eps, "vs_ram": eps / ram_eps,
                 "test_ne": statistics.median(r["test_ne"] for r in rs),
                 "each_examples_per_sec": [r["examples_per_sec"] for r in rs]}
        if pinned:
            entry["shard_busy"] = statistics.median(r["shard_busy"] for r in rs)
        if name != "ram":
            entry.update(hit_rate=statistics.median(r["hit_rate"] for r in rs),
                         peak_vs_budget=statistics.median(r["peak_rows"] / r["budget_rows"] for r in rs),
                         rows_read_back=statistics.median(r["rows_read_back"] for r in rs),
                         rows_warmed=statistics.median(r["rows_warmed"] for r in rs))
        summary["runs"].append(entry)
        each = ", ".join(f"{e:.0f}" for e in entry["each_examples_per_sec"])
        lines.append(f"| {name} | {budgets.get(name, '-')} | {eps:.0f} ({each}) | {100 * entry['vs_ram']:.1f}% | {entry['test_ne']:.5f} | "
                     + (f"{entry['hit_rate']:.3f} | {100 * entry['peak_vs_budget']:.0f}% | "
                        f"{entry['rows_read_back']:.0f} | {entry['rows_warmed']:.0f} |" if name != "ram" else
                        "1 | - | - | - |")
                     + (f" {100 * entry['shard_busy']:.0f}% |" if pinned else ""))
    report(here(__file__), bench_name, "\n".join(lines), summary)
    plot(summary, os.path.join(here(__file__), bench_name + ".png"))


def plot(summary, path):
    """Examples/s (relative to all in RAM) against hit rate, one point per budget."""
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    plain = [r for r in summary["runs"] if r["run"] != "ram" and "prefetch" not in r["run"]]
    ax.plot([r["hit_rate"] for r in plain], [100 * r["vs_ram"] for r in plain], "o-", label="memory budget")
    for r in plain:
        ax.annotate(f"{r['budget_mb']} MB", (r["hit_rate"], 100 * r["vs_ram"]), textcoords="offset points",
                    xytext=(5, -12), fontsize=8)
    pre = [r for r in summary["runs"] if "prefetch" in r["run"]]
    ax.plot([r["hit_rate"] for r in pre], [100 * r["vs_ram"] for r in pre], "s", label="with prefetch hints")
    ax.plot([1.0], [100.0], "k*", markersize=10, label="every row in RAM")
    ax.axhline(70, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("shard cache hit rate (lookups and pushes)")
    ax.set_ylabel("examples/s, % of every row in RAM")
    where = "2 vCPUs shared" if summary.get("layout", "shared") == "shared" else "shard on its own core"
    ax.set_title(f"Training throughput against hit rate ({summary['rows'] // 1000}k rows, {where})", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
