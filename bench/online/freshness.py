#!/usr/bin/env python3
"""Freshness: from a row appended to the input to `serve` answering with a model that trained on it
(docs/online.md). One run, all on this machine:

  - an appender writes the rows of a generated file to input.tsv at --rate rows per second, a
    piece every 50 ms, noting when each piece was in the file;
  - a following job (`local --follow`, one reader and one trainer, so that rows are trained in file
    order) publishes every --interval seconds;
  - `serve --publish-dir` follows the publications (--poll-interval), and a client asks it for a
    one-row prediction every 10 ms, noting the `examples_trained` each answer reports.

A piece's freshness is the time from its append to the first answer whose model had trained on
at least as many rows as the file then held. Batches in flight commit out of order within a
trainer's few Hogwild workers, so a count can include a row a few batches early (a few ms here).
Reports p50, p90, p99 and the worst over pieces, a human summary and a JSON line
(bench/online/results/freshness.{md,json}).

usage: bench/online/freshness.py [--rows N] [--rate R] [--interval S] [--poll S]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import benchlib  # noqa: E402


def percentile(values, q):
    v = sorted(values)
    if not v:
        return None
    k = min(len(v) - 1, max(0, int(round(q / 100.0 * (len(v) - 1)))))
    return v[k]


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=120000, help="rows streamed (default 120,000)")
    ap.add_argument("--rate", type=float, default=4000, help="rows appended per second (default 4,000)")
    ap.add_argument("--interval", type=float, default=1.0, help="--publish-interval (default 1 s)")
    ap.add_argument("--poll", type=float, default=0.05, help="serve's --poll-interval (default 0.05 s)")
    ap.add_argument("--out", default=os.path.join(benchlib.here(__file__), "results"))
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="ss-freshness.")
    procs = []
    try:
        src = os.path.join(work, "src")
        subprocess.run([benchlib.BIN, "gen-data", "--rows", str(a.rows), "--test-rows", "1000", "--out", src],
                       check=True, capture_output=True)
        with open(os.path.join(src, "train.tsv"), "rb") as f:
            lines = f.read().splitlines(keepends=True)
        probe = lines[0]
        inp = os.path.join(work, "input.tsv")
        open(inp, "wb").close()
        pub = os.path.join(work, "pub")
        job = subprocess.Popen(
            benchlib.following_job(inp, a.rows, pub, a.interval),
            stdout=open(os.path.join(work, "job.out"), "w"), stderr=open(os.path.join(work, "job.err"), "w"))
        procs.append(job)

        # The appender: pieces every 50 ms, each noted (time, rows in the file) once written.
        appended = []
        piece = max(1, int(a.rate * 0.05))

        def append():
            start = time.monotonic()
            with open(inp, "ab", buffering=0) as f:
                for i in range(0, len(lines), piece):
                    due = start + i / a.rate
                    now = time.monotonic()
                    if due > now:
                        time.sleep(due - now)
                    f.write(b"".join(lines[i:i + piece]))
                    appended.append((time.monotonic(), min(len(lines), i + piece)))

        # serve, once the first base is in place.
        while not any(n.endswith(".manifest") for n in (os.listdir(pub) if os.path.isdir(pub) else [])):
            if job.poll() is not None:
                sys.exit("the job ended before publishing: " + open(os.path.join(work, "job.err")).read()[-500:])
            time.sleep(0.05)
        port = free_port()
        serve = subprocess.Popen(
            [benchlib.BIN, "serve", "--publish-dir", pub, "--listen", f"127.0.0.1:{port}",
             "--poll-interval", str(a.poll), "--workers", "1", "--log-level", "warn"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "serve.err"), "w"))
        procs.append(serve)
        url = f"http://127.0.0.1:{port}/predict"
        answers = []  # (time, examples_trained)

        def ask():
            req = urllib.request.Request(url, data=probe, method="POST")
            with urllib.request.urlopen(req, timeout=2) as r:
                return json.loads(r.read())

        deadline = time.monotonic() + 30
        while True:
            try:
                ask()
                break
            except Exception:
                if time.monotonic() > deadline:
                    sys.exit("serve did not answer: " + open(os.path.join(work, "serve.err")).read()[-500:])
                time.sleep(0.05)
        appender = threading.Thread(target=append)
        appender.start()
        last_report = time.monotonic()
        while True:
            try:
                got = ask()
                answers.append((time.monotonic(), int(got["examples_trained"])))
            except Exception as e:  # a refused connection while serve swaps: noted, not fatal
                print(f"  (request failed: {e})", file=sys.stderr)
            if answers and answers[-1][1] >= a.rows:
                break
            if job.poll() is not None and time.monotonic() - last_report > 10:
                break
            if time.monotonic() - last_report > 5:
                last_report = time.monotonic()
                print(f"  {len(appended) and appended[-1][1]} rows appended, serving a model of "
                      f"{answers[-1][1] if answers else 0} examples", file=sys.stderr)
            time.sleep(0.01)
        appender.join()
        job.wait(timeout=120)
        result = benchlib.last_json(open(os.path.join(work, "job.out")).read())

        # Each piece: the first answer at or after its append whose model covers it.
        fresh = []
        j = 0
        for t, rows in appended:
            while j < len(answers) and (answers[j][0] < t or answers[j][1] < rows):
                j += 1
            if j == len(answers):
                break
            fresh.append(answers[j][0] - t)
        pubs = [n for n in os.listdir(pub) if n.endswith(".manifest")]
        covered = len(fresh)
        summary = {
            "benchmark": "freshness", "rows": a.rows, "rate_rows_per_s": a.rate, "publish_interval_s": a.interval,
            "serve_poll_s": a.poll, "pieces": len(appended), "pieces_measured": covered,
            "p50_s": percentile(fresh, 50), "p90_s": percentile(fresh, 90), "p99_s": percentile(fresh, 99),
            "max_s": max(fresh) if fresh else None, "publications": len(pubs),
            "job_ok": bool(result and result.get("ok")), "cpus": os.cpu_count(),
        }
        text = "\n".join([
            f"# Freshness: appended row to an answer from a model trained on it ({a.rows:,} rows at {a.rate:,.0f}/s)",
            "",
            f"publish interval {a.interval} s, serve polling every {a.poll} s, {len(pubs)} publications, "
            f"{covered} of {len(appended)} pieces measured, job ok: {summary['job_ok']}",
            "",
            "| p50 | p90 | p99 | worst |",
            "|---|---|---|---|",
            "| " + " | ".join(benchlib.fmt(summary[k], ".2f") + " s" for k in ("p50_s", "p90_s", "p99_s", "max_s")) + " |",
        ])
        benchlib.report(a.out, "freshness", text, summary)
        return 0 if summary["job_ok"] and covered == len(appended) else 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
        if os.environ.get("SS_KEEP_WORK"):
            print(f"work kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
