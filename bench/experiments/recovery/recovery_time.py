#!/usr/bin/python3
"""Recovery time per service kind: how long a job stops when one of its services is killed.

For each kind (coordinator, shard, reader, trainer, sync server), a `local --processes` job (2
trainers, 1 shard, 1 reader, 2 sync servers, s-easgd, snapshots every second) is run on generated
data; once 30% of the rows are committed, the service gets SIGKILL and its supervisor starts it
again after --restart-delay. The coordinator's status is polled every 0.1 s throughout:

  stall    the longest time, from the kill on, in which the committed count did not pass its
           highest value so far (it grows in steps: the readers report commits with their
           heartbeats, so a job that never stopped shows about the usual step)
  usual    the median step before the kill, for comparison
  rate     seconds from the kill until a 2 s window commits at least 80% of the pre-kill rate
  rewound  how far the count went back (a restarted coordinator starts from its last snapshot's
           count until the readers report again; their positions never go back)

Each run must still end ok with every row committed once. Prints a table and one JSON line, and
writes recovery-<date>.{txt,json} beside this script.

    /usr/bin/python3 bench/experiments/recovery/recovery_time.py [--rows N] [--repeats R] [--kinds shard,reader]

Needs a built tree (scripts/build.sh). The figures depend on --member-timeout (3 s here),
--heartbeat-interval (0.5 s), --request-timeout (2 s) and --restart-delay (0.5 s).
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import BIN, here, last_json, write_report  # noqa: E402

KINDS = {"coordinator": "coordinator", "shard": "shard-0", "reader": "reader-0", "trainer": "trainer-0",
         "sync server": "sync-1"}
FLAGS = ["--processes", "--trainers", "2", "--shards", "1", "--readers", "1", "--sync-servers", "2", "--sync",
         "s-easgd", "--member-timeout", "3", "--heartbeat-interval", "0.5", "--request-timeout", "2",
         "--restart-delay", "0.5", "--snapshot-interval", "1", "--log-level", "info"]


def committed(run_dir):
    """The job's committed examples, or None while the coordinator does not answer."""
    try:
        with open(os.path.join(run_dir, "coordinator.endpoint")) as f:
            endpoint = f.read().strip()
        p = subprocess.run([BIN, "status", "--coordinator", endpoint, "--timeout", "0.5"], capture_output=True,
                           text=True, timeout=3)
        m = re.search(r'"examples_committed":(\d+)', p.stdout)
        return int(m.group(1)) if p.returncode == 0 and m else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def one_run(work, data, kind, service, rows, deadline_s=300):
    run_dir = os.path.join(work, f"{service}-{time.time_ns()}")
    job = subprocess.Popen([BIN, "local"] + FLAGS + ["--train", os.path.join(data, "train.tsv"), "--run-dir", run_dir,
                                                     "--state-dir", os.path.join(run_dir, "state")],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    start = time.monotonic()
    samples = []  # (time, committed) while the job runs
    try:
        while True:
            if job.poll() is not None or time.monotonic() - start > deadline_s:
                raise RuntimeError(f"{kind}: the job never reached 30% of its rows")
            c = committed(run_dir)
            if c is not None:
                samples.append((time.monotonic(), c))
                if c >= rows * 3 // 10:
                    break
            time.sleep(0.1)
        # The rate before the kill: the last 2 s of samples.
        recent = [s for s in samples if s[0] >= samples[-1][0] - 2.0]
        before = (recent[-1][1] - recent[0][1]) / max(recent[-1][0] - recent[0][0], 1e-3)
        with open(os.path.join(run_dir, f"{service}.pid")) as f:
            os.kill(int(f.read()), signal.SIGKILL)
        t0, c0 = time.monotonic(), samples[-1][1]
        after = []
        lowest = c0
        while job.poll() is None and time.monotonic() - t0 < 20:
            c = committed(run_dir)
            if c is not None:
                after.append((time.monotonic(), c))
                lowest = min(lowest, c)
            time.sleep(0.1)
        out, _ = job.communicate(timeout=deadline_s)
    finally:
        if job.poll() is None:
            job.kill()
    result = last_json(out) or {}
    if not result.get("ok") or result.get("examples_committed") != rows:
        raise RuntimeError(f"{kind}: the job did not end ok with {rows} rows: {result.get('error')}")
    shutil.rmtree(run_dir, ignore_errors=True)
    # The count grows in steps (the readers report commits with their heartbeats): progress is a
    # poll above every count seen before, and the stall the longest time without one from the
    # kill on (a restarted coordinator's count starts low until the readers report again).
    rises, top = [], 0
    for t, c in samples + after:
        if c > top:
            rises.append(t)
            top = c
    before_gaps = [b - a for a, b in zip(rises, rises[1:]) if b <= t0]
    stall = max((b - max(a, t0) for a, b in zip(rises, rises[1:]) if b > t0), default=None)
    rate = None  # from the kill until a 2 s window commits at least 80% of the pre-kill rate
    for i, (t, c) in enumerate(after):
        j = next((j for j in range(i, len(after)) if after[j][0] - t >= 2.0), None)
        if j is not None and (after[j][1] - c) / (after[j][0] - t) >= 0.8 * before:
            rate = t - t0
            break
    return {"stall_s": stall, "rate_s": rate, "rewound": c0 - lowest, "rate_before": before,
            "usual_gap_s": statistics.median(before_gaps) if before_gaps else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=600000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kinds", default=",".join(KINDS))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ss-recovery.")
    data = os.path.join(work, "data")
    subprocess.run([BIN, "gen-data", "--rows", str(args.rows), "--test-rows", "1000", "--out", data], check=True,
                   capture_output=True)
    runs = {}
    for kind in args.kinds.split(","):
        runs[kind] = []
        for i in range(args.repeats):
            r = one_run(work, data, kind, KINDS[kind], args.rows)
            runs[kind].append(r)
            print(f"  {kind:12s} run {i + 1}: stall {r['stall_s']}, usual step {r['usual_gap_s']}, "
                  f"rate back {r['rate_s']}, rewound {r['rewound']}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)

    def med(values):
        values = [v for v in values if v is not None]
        return round(statistics.median(values), 2) if values else None

    summary = {k: {"stall_s": med([r["stall_s"] for r in v]), "stall_max_s": max((r["stall_s"] or 0) for r in v),
                   "usual_gap_s": med([r["usual_gap_s"] for r in v]),
                   "rate_s": med([r["rate_s"] for r in v]), "rewound": med([r["rewound"] for r in v]),
                   "runs": len(v)} for k, v in runs.items()}
    lines = [f"Recovery after SIGKILL ({args.rows} rows, 2 trainers, 1 shard, 1 reader, 2 sync servers; "
             f"median of {args.repeats}; {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores)",
             "", "| killed | commits stalled (s) | worst (s) | usual step (s) | rate back to 80% (s) | count rewound |",
             "|---|---|---|---|---|---|"]
    for k, s in summary.items():
        lines.append(f"| {k} | {s['stall_s']} | {s['stall_max_s']:.2f} | {s['usual_gap_s']} | {s['rate_s']} | "
                     f"{s['rewound']:.0f} |")
    record = {"bench": "recovery_time", "rows": args.rows, "repeats": args.repeats, "date": time.strftime("%F"),
              "cores": os.cpu_count(), "kinds": summary, "runs": runs}
    write_report(os.path.join(here(__file__), "recovery-" + time.strftime("%Y%m%d-%H%M")), "\n".join(lines),
                 [json.dumps(record)])


if __name__ == "__main__":
    main()
