#!/usr/bin/env python3
"""Drift, to show why publishing matters (docs/online.md): a stream whose hidden teacher turns
(`gen-data --drift-rows`) is trained by a following job (`local --follow`, one reader and one
trainer, so that rows are trained in stream order) that publishes every --interval seconds. The
stream is then cut into windows; each window is scored by

  - the served model: what `serve` answered with while the window's rows arrived (the
    publication before the newest whose count of examples precedes the window: counts lag by up
    to a heartbeat), and
  - a frozen model: the publication that had trained on the first --freeze fraction of the stream
    (a model trained once and never updated),

both by `predict --publish-dir` on a copy of the directory cut at that publication (a chain cut at
any publication is a valid chain). Prints AUC and NE per window, the gap, a JSON line, and a plot
(bench/online/results/drift.{md,json,png}; the PNG needs matplotlib: scripts/setup.sh --bench).

usage: bench/online/drift.py [--rows N] [--windows W] [--freeze F] [--interval S]
       bench/online/drift.py --replot bench/online/results/drift.json   (the plot alone, from a record)
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import benchlib  # noqa: E402


def manifests(pub):
    """[(sequence, examples_trained, file names of that publication)] in sequence order."""
    out = []
    for name in sorted(os.listdir(pub)):
        if not name.endswith(".manifest"):
            continue
        fields = dict(re.findall(r"^(\w+) = (.*)$", open(os.path.join(pub, name)).read(), re.M))
        out.append((int(fields["sequence"]), int(fields["examples_trained"]), [name, fields["data_file"]]))
    return out


def score_at(pub, pubs, sequence, test, work):
    """predict --publish-dir on a copy of PUB holding the publications up to SEQUENCE."""
    cut = os.path.join(work, f"cut-{sequence}")
    if not os.path.isdir(cut):
        os.makedirs(cut)
        for seq, _, files in pubs:
            if seq <= sequence:
                for f in files:
                    os.link(os.path.join(pub, f), os.path.join(cut, f))
    p = subprocess.run([benchlib.BIN, "predict", "--publish-dir", cut, "--test", test, "--threads", "1"],
                       capture_output=True, text=True)
    r = benchlib.last_json(p.stdout)
    if p.returncode != 0 or not r:
        sys.exit(f"predict at publication {sequence} failed: {p.stderr[-400:]}")
    return r


def plot(rows, freeze, out):
    """drift.png from the windows' AUCs; False where matplotlib is missing."""
    plt = benchlib.pyplot("drift plot")
    if plt is None or not rows:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    x = [(r["rows"][0] + r["rows"][1]) / 2 / 1000 for r in rows]
    ax.plot(x, [r["served_auc"] for r in rows], marker="o", label="served (newest publication)")
    ax.plot(x, [r["frozen_auc"] for r in rows], marker="s", label=f"frozen after {freeze:.0%}")
    ax.set_xlabel("stream position (thousand rows)")
    ax.set_ylabel("AUC of the window")
    ax.set_title("A drifting stream: served vs frozen model")
    ax.grid(alpha=0.3)
    ax.legend()
    os.makedirs(out, exist_ok=True)
    fig.savefig(os.path.join(out, "drift.png"), dpi=110, bbox_inches="tight")
    return True


def replot(path, out):
    """Draws drift.png from a recorded drift.json (its measurement, not a new one)."""
    with open(path) as f:
        summary = json.load(f)
    if not plot(summary["per_window"], summary["freeze"], out):
        sys.exit("no plot: matplotlib is missing (scripts/setup.sh --bench)")
    md = os.path.join(out, "drift.md")
    if os.path.exists(md):
        with open(md) as f:
            text = f.read()
        if "drift.png" not in text:
            with open(md, "a") as f:
                f.write("\n![served vs frozen AUC](drift.png)\n")
    print(os.path.join(out, "drift.png"))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=600000, help="rows streamed (default 600,000)")
    ap.add_argument("--windows", type=int, default=12, help="windows the stream is scored in (default 12)")
    ap.add_argument("--freeze", type=float, default=0.25, help="the frozen model's share of the stream (default 0.25)")
    ap.add_argument("--interval", type=float, default=1.0, help="--publish-interval (default 1 s)")
    ap.add_argument("--out", default=os.path.join(benchlib.here(__file__), "results"))
    ap.add_argument("--replot", metavar="DRIFT_JSON", help="only draw drift.png from a recorded drift.json")
    a = ap.parse_args()
    if a.replot:
        return replot(a.replot, a.out)

    work = tempfile.mkdtemp(prefix="ss-drift.")
    try:
        data = os.path.join(work, "data")
        # The teacher turns over the whole stream, continuously.
        subprocess.run([benchlib.BIN, "gen-data", "--rows", str(a.rows), "--test-rows", "1000", "--out", data,
                        "--drift-rows", str(a.rows)], check=True, capture_output=True)
        stream = os.path.join(data, "train.tsv")
        pub = os.path.join(work, "pub")
        print(f"training a following job on {a.rows:,} drifting rows, publishing every {a.interval} s",
              file=sys.stderr)
        job = subprocess.run(benchlib.following_job(stream, a.rows, pub, a.interval), capture_output=True, text=True)
        result = benchlib.last_json(job.stdout)
        if job.returncode != 0 or not result or not result.get("ok"):
            sys.exit("the job failed: " + job.stderr[-600:])
        pubs = manifests(pub)
        with open(stream, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        size = len(lines) // a.windows
        freeze_at = int(a.rows * a.freeze)
        # A manifest counts the examples the coordinator had heard of (heartbeats, a second apart),
        # so a publication may hold a little more than it says: what serving had when row `at`
        # arrived is taken as the publication before the newest that says it precedes the row.
        def serving_at(at):
            before = [s for s, e, _ in pubs if e <= at]
            return before[-2] if len(before) >= 2 else pubs[0][0]
        # The frozen model: what serving had when the first part was over.
        frozen = serving_at(freeze_at)
        rows = []
        for w in range(a.windows):
            begin, end = w * size, (w + 1) * size
            if begin < freeze_at:
                continue  # the frozen model may have trained on some of these rows
            served = serving_at(begin)
            test = os.path.join(work, f"window-{w}.tsv")
            with open(test, "wb") as f:
                f.writelines(lines[begin:end])
            s = score_at(pub, pubs, served, test, work)
            z = score_at(pub, pubs, frozen, test, work)
            rows.append({"window": w, "rows": [begin, end], "served_publication": served,
                         "served_auc": s["test_auc"], "frozen_auc": z["test_auc"],
                         "served_ne": s["test_ne"], "frozen_ne": z["test_ne"]})
            print(f"  window {w}: served AUC {s['test_auc']:.4f}, frozen {z['test_auc']:.4f}", file=sys.stderr)
        gaps = [r["served_auc"] - r["frozen_auc"] for r in rows]
        summary = {"benchmark": "drift", "rows": a.rows, "windows": a.windows, "freeze": a.freeze,
                   "publish_interval_s": a.interval, "publications": len(pubs), "frozen_publication": frozen,
                   "auc_gap_first": gaps[0] if gaps else None, "auc_gap_last": gaps[-1] if gaps else None,
                   "auc_gap_mean": sum(gaps) / len(gaps) if gaps else None, "per_window": rows}
        table = ["| window (rows) | served model (publication) | served AUC | frozen AUC | gap | served NE | frozen NE |",
                 "|---|---|---|---|---|---|---|"]
        for r in rows:
            table.append(f"| {r['rows'][0]:,}-{r['rows'][1]:,} | {r['served_publication']} | {r['served_auc']:.4f} | "
                         f"{r['frozen_auc']:.4f} | {r['served_auc'] - r['frozen_auc']:+.4f} | {r['served_ne']:.4f} | "
                         f"{r['frozen_ne']:.4f} |")
        text = "\n".join([
            f"# Drift: the served model against one frozen after {a.freeze:.0%} of the stream",
            "",
            f"{a.rows:,} rows whose teacher turns over the whole stream, a publication every {a.interval} s "
            f"({len(pubs)} in all); the frozen model is publication {frozen}.",
            "",
            *table,
        ])
        if plot(rows, a.freeze, a.out):
            text += "\n\n![served vs frozen AUC](drift.png)"
        summary_line = {k: v for k, v in summary.items() if k != "per_window"}
        benchlib.report(a.out, "drift", text, summary_line | {"per_window": rows})
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
