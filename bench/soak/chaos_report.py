#!/usr/bin/python3
"""The chaos run's fault schedule and its report (bench/soak/chaos_run.sh drives both).

    chaos_report.py schedule --seed S [--count N] [--gap A-B] [--seconds A-B] [--slow-rates R,R]
        Prints N faults, one a line: "INDEX KIND SERVICE SECONDS GAP RATE". Drawn from random.Random(S):
        in blocks of 25, every fault kind (kill, pause, partition, slow, move) meets every service kind
        (coordinator, shard, reader, trainer, sync server) once (a Latin square), and every 5 faults in a
        row hold each fault kind and each service kind once; the instance (shard-0 or shard-1, ...),
        the fault's length (SECONDS, uniform in --seconds), the quiet time before it (GAP, uniform in
        --gap) and a slow link's rate are drawn for each. RATE is "-" but for slow links.

    chaos_report.py poll --job DIR --coordinator HOST:PORT --reader-port P
        Runs on the ops host while a job runs: every 0.25 s the coordinator's /api/status (its
        committed count, the job's state) and each reader's /metrics (its own committed count; its
        host read from DIR/where/reader-I, so that a moved reader is followed), three requests at
        once with a 1 s timeout; appends "TIME COORDINATOR STATE READER-0 READER-1" to DIR/poll.log
        ("-" for no answer). One process without forks (run it niced up, as chaos_run.sh does), so
        that its samples stay 0.25 s apart on a loaded machine.

    chaos_report.py report --work W --out PREFIX
        Reads W/free and W/chaos (each: meta.json, poll.log, events.log, result.json, exits.tsv),
        prints the summary and one JSON line, and writes PREFIX.txt, PREFIX.json and PREFIX.png
        (committed examples and examples/s over time, both runs, the faults marked). Exit status 1 when
        a target is missed or a check fails.

What is measured (the same way for both runs):
  committed      each reader's own committed count (its /metrics, polled every 0.25 s from a host of
                 its own), the highest seen so far, summed over the readers; a count that cannot be
                 polled (the reader cut off, stopped, restarting) holds its last value
  training time  from the first commit to the poll at which every row was committed
  examples/s     rows / training time; the chaos run's as a share of the failure-free run's
  stall          the longest time in training without a new highest committed sum ("no commits");
                 per fault, the longest one that began between the fault and the next one
  NE             the test NE of the coordinator's result line; the change vs the failure-free run
  exactly once   examples_committed of the result line = the rows, and every reader's final
                 count = its files' rows
  faults survived  faults injected while training, after which the job ended ok with every row once
                 and every service's last process exited 0
Targets: every row committed exactly once, NE within 1% of the failure-free run, at least 90% of
its examples/s.
"""
import argparse
import bisect
import json
import os
import random
import re
import statistics
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import fmt, pyplot, run_subcommands, write_report  # noqa: E402

FAULT_KINDS = ["kill", "pause", "partition", "slow", "move"]
SERVICE_KINDS = ["coordinator", "shard", "reader", "trainer", "sync-server"]
INSTANCES = {"coordinator": ["coordinator"], "shard": ["shard-0", "shard-1"], "reader": ["reader-0", "reader-1"],
             "trainer": ["trainer-0", "trainer-1"], "sync-server": ["sync-1"]}
COLORS = {"kill": "tab:red", "pause": "tab:orange", "partition": "tab:purple", "slow": "tab:olive",
          "move": "tab:blue"}
NE_TARGET_PCT = 1.0
EPS_TARGET_SHARE = 0.90


def span(text):
    a, b = (float(x) for x in text.split("-"))
    if b < a:
        raise SystemExit(f"bad range {text}")
    return a, b


def schedule(a):
    rng = random.Random(a.seed)
    gap, secs = span(a.gap), span(a.seconds)
    rates = a.slow_rates.split(",")
    out = []
    while len(out) < a.count:
        # A Latin square: round r pairs fault kind k with service kind p[(k + r) % 5]; over the 5
        # rounds every pair comes once, and every round has each fault kind and each service kind.
        p = SERVICE_KINDS[:]
        rng.shuffle(p)
        rounds = list(range(5))
        rng.shuffle(rounds)
        for r in rounds:
            block = [(FAULT_KINDS[k], p[(k + r) % 5]) for k in range(5)]
            rng.shuffle(block)
            out.extend(block)
    for i, (kind, skind) in enumerate(out[:a.count], 1):
        service = rng.choice(INSTANCES[skind])
        d = round(rng.uniform(*secs), 1)
        g = round(rng.uniform(*gap), 1)
        rate = rng.choice(rates) if kind == "slow" else "-"
        print(f"{i} {kind} {service} {d} {g} {rate}")


def poll(a):
    def get(url, out, i):
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                out[i] = r.read().decode("utf-8", "replace")
        except Exception:  # no answer: "-"
            out[i] = None

    def where(name):
        try:
            with open(os.path.join(a.job, "where", name)) as f:
                return f.read().strip()
        except OSError:
            return name

    metric = re.compile(r"^shadowsync_service_committed_examples\{[^}]*\} ([0-9.e+]+)", re.M)
    with open(os.path.join(a.job, "poll.log"), "a") as log:
        while True:
            t = time.time()
            urls = [f"http://{a.coordinator}/api/status"] + \
                [f"http://{where(r)}:{a.reader_port}/metrics" for r in ("reader-0", "reader-1")]
            out = [None] * len(urls)
            threads = [threading.Thread(target=get, args=(u, out, i)) for i, u in enumerate(urls)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            c = re.search(r'"examples_committed":(\d+)', out[0] or "")
            st = re.search(r'"state":"([a-z]+)"', out[0] or "")
            readers = []
            for o in out[1:]:
                m = metric.search(o or "")
                readers.append(str(int(float(m.group(1)))) if m else "-")
            log.write(f"{t:.6f} {c.group(1) if c else '-'} {st.group(1) if st else '-'} {' '.join(readers)}\n")
            log.flush()
            time.sleep(max(0.0, 0.25 - (time.time() - t)))


# ---------------------------------------------------------------------------------------------
# The report


def read_poll(path):
    """[(t, coordinator count or None, state, [reader counts or None])]."""
    rows = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 5:
                continue
            num = [None if x == "-" else int(float(x)) for x in (w[1], w[3], w[4])]
            rows.append((float(w[0]), num[0], w[2], num[1:]))
    return rows


def read_events(path):
    ev = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2:
                ev.append((float(w[0]), w[1], w[2:]))
    return ev


def committed_series(poll, reader_rows):
    """[(t, sum over readers of the highest count seen so far)]: a reader that cannot be polled
    holds its last value."""
    top = [0] * len(reader_rows)
    out = []
    for t, _, _, rc in poll:
        for i, c in enumerate(rc):
            if c is not None and c > top[i]:
                top[i] = min(c, reader_rows[i])
        out.append((t, sum(top)))
    return out


def rises(series):
    """The times at which the series reached a new highest value: [(t, value)]."""
    out, m = [], -1
    for t, v in series:
        if v > m:
            out.append((t, v))
            m = v
    return out


def analyse(d, rows, reader_rows):
    meta = json.load(open(os.path.join(d, "meta.json")))
    poll = read_poll(os.path.join(d, "poll.log"))
    ev = read_events(os.path.join(d, "events.log"))
    res = {}
    rp = os.path.join(d, "result.json")
    if os.path.exists(rp) and os.path.getsize(rp) > 0:
        res = json.loads(open(rp).read().strip().splitlines()[-1])
    exits = []
    ep = os.path.join(d, "exits.tsv")
    if os.path.exists(ep):
        for line in open(ep):
            w = line.split()
            if len(w) >= 5:
                exits.append({"service": w[0], "incarnation": int(w[1]), "host": w[2], "rc": w[3], "how": w[4]})
    series = committed_series(poll, reader_rows)
    up = rises(series)
    t_first = next((t for t, v in up if v > 0), None)
    t_done = next((t for t, v in up if v >= rows), None)
    r = {"name": meta["name"], "meta": meta, "result": res, "exits": exits, "series": series, "t_first": t_first,
         "t_done": t_done, "events": ev, "t_start": meta.get("started")}
    r["training_s"] = (t_done - t_first) if t_first and t_done else None
    r["eps"] = rows / r["training_s"] if r["training_s"] else None
    # The longest time without a new highest sum while training (first commit to the last row).
    train_up = [(t, v) for t, v in up if t_first is not None and t >= t_first and (t_done is None or t <= t_done)]
    # A stall runs from a rise to the next one; where no sample was taken just before that rise
    # (the poller got no CPU, on a loaded machine), it ends 0.25 s after the last sample that showed
    # no rise: what is known to have been a stall, not a gap in the samples.
    times = [t for t, _ in series]
    stalls = []
    for a, b in zip(train_up, train_up[1:]):
        k = bisect.bisect_left(times, b[0]) - 1
        end = min(b[0], times[k] + 0.25) if k >= 0 and times[k] > a[0] else min(b[0], a[0] + 0.25)
        stalls.append((end - a[0], a[0], end))
    if t_done is None and train_up and series:
        stalls.append((series[-1][0] - train_up[-1][0], train_up[-1][0], series[-1][0]))
    r["stalls"] = stalls
    r["longest_stall"] = max(stalls) if stalls else None
    gaps = [s[0] for s in stalls]
    r["usual_step_s"] = statistics.median(gaps) if gaps else None
    # Faults.
    faults = {}
    for t, kind, w in ev:
        if kind == "fault":
            faults[w[0]] = {"id": w[0], "kind": w[1], "service": w[2], "host": w[3], "seconds": float(w[4]),
                            "extra": w[5] if len(w) > 5 else "-", "t": t, "heal": None}
        elif kind == "heal" and w[0] in faults:
            faults[w[0]]["heal"] = t
    fl = sorted(faults.values(), key=lambda f: f["t"])
    for i, f in enumerate(fl):
        end = fl[i + 1]["t"] if i + 1 < len(fl) else (t_done or (series[-1][0] if series else f["t"]))
        # The longest stall that began (its last rise) before the next fault and ended after this one began.
        own = [s for s in stalls if s[2] > f["t"] and s[1] < end]
        f["stall_s"] = max((s[2] - max(s[1], f["t"]) for s in own), default=0.0)
        f["stall_full_s"] = max((s[0] for s in own), default=0.0)
        # Its window: from the fault until 10 s after its heal, or 5 s after the end of a stall that
        # was still going then (commits held back come all at once when it ends).
        h0 = h = (f["heal"] or f["t"]) + 10
        for dur, sa, sb in stalls:
            if dur > 1.0 and sa < h0 < sb:
                h = sb + 5
        f["win_end"] = h
        v0 = value_at(series, f["t"])
        v1 = value_at(series, h)
        f["window_eps"] = (v1 - v0) / (h - f["t"]) if h > f["t"] else None
        f["committed_at"] = v0
        # Commits stalled at the heal (none in the second before it): how long after it they resumed.
        heal = f["heal"] or f["t"]
        before = [t for t, _ in up if t <= heal]
        after = [t for t, _ in up if t > heal]
        f["resumed_after_heal_s"] = (after[0] - heal) if before and after and heal - before[-1] > 1.0 else 0.0
    # Time lost to the faults: each fault's window (above) against this
    # run's own rate outside every window (so that the runs' difference from each other, a few
    # percent on this machine, does not enter it).
    win = []
    for f in fl:
        a, b = f["t"], f["win_end"]
        if t_first is not None:
            a = max(a, t_first)
        if t_done is not None:
            b = min(b, t_done)
        if b > a:
            if win and a <= win[-1][1]:
                win[-1][1] = max(win[-1][1], b)
            else:
                win.append([a, b])
    in_t = sum(b - a for a, b in win)
    in_c = sum(value_at(series, b) - value_at(series, a) for a, b in win)
    r["outside_eps"] = None
    if r["training_s"] and r["training_s"] > in_t:
        r["outside_eps"] = (rows - in_c) / (r["training_s"] - in_t)
    for f in fl:
        a, b = f["t"], f["win_end"]
        f["lost_s"] = (b - a) - (f["window_eps"] or 0) * (b - a) / r["outside_eps"] if r["outside_eps"] else None
    r["lost_s"] = in_t - in_c / r["outside_eps"] if r["outside_eps"] else None
    r["faults"] = fl
    r["cpu"] = cpu_use(os.path.join(d, "cpu.log"), t_first, t_done)
    c = r["cpu"]
    r["eps_per_cpu"] = rows / c["job_cpu_s"] if c and c["job_cpu_s"] > 0 else None
    r["crashes"] = [(t, w) for t, k, w in ev if k == "crash"]
    r["skipped"] = [(t, w) for t, k, w in ev if k == "skipped"]
    return r


def cpu_use(path, t0, t1):
    """CPU seconds over [t0, t1] from cpu.log: (the job's processes, every other process, steal)."""
    if not os.path.exists(path) or t0 is None or t1 is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    samples = []  # (t, busy, steal, {proc: jiffies})
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 3:
                continue
            procs = {}
            for kv in w[3:]:
                k, _, v = kv.partition("=")
                procs[k] = int(float(v)) if v else 0
            samples.append((float(w[0]), int(w[1]), int(w[2]), procs))
    if len(samples) < 2:
        return None
    before = [s for s in samples if s[0] <= t0] or samples[:1]
    upto = [s for s in samples if s[0] <= t1] or samples[:1]
    a, b = before[-1], upto[-1]
    first, last = {}, {}
    for t, _, _, procs in samples:
        if t > t1:
            break
        for k, v in procs.items():
            if t <= t0:
                first[k] = v
            last[k] = v
    job = sum(last[k] - first.get(k, 0) for k in last) / tick
    busy = (b[1] - a[1]) / tick
    return {"job_cpu_s": job, "other_cpu_s": max(busy - job, 0.0), "steal_s": (b[2] - a[2]) / tick,
            "seconds": b[0] - a[0]}


def value_at(series, t):
    v = 0
    for ts, x in series:
        if ts > t:
            break
        v = x
    return v


def plot(free, chaos, path, title):
    plt = pyplot(path)
    if plt is None:
        return
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(13, 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]})

    def rel(r):
        t0 = r["t_first"] or (r["series"][0][0] if r["series"] else 0)
        return t0, [((t - t0) / 60, v / 1e6) for t, v in r["series"] if t >= t0 - 5]

    def rate(r, window=10.0):
        t0 = r["t_first"]
        if t0 is None:
            return [], []
        s = [(t, v) for t, v in r["series"] if t >= t0]
        xs, ys, j = [], [], 0
        for i, (t, v) in enumerate(s):
            while s[j][0] < t - window:
                j += 1
            if t - s[j][0] >= window * 0.8:
                xs.append((t - window / 2 - t0) / 60)
                ys.append((v - s[j][1]) / (t - s[j][0]) / 1000)
        return xs, ys

    for r, style, label in ((free, "--", "failure-free"), (chaos, "-", "chaos")):
        if not r["series"]:
            continue
        t0, pts = rel(r)
        ax1.plot([p[0] for p in pts], [p[1] for p in pts], style, color="k" if r is chaos else "grey", lw=1.2,
                 label=f"{label}: {fmt(r['eps'], ',.0f')} ex/s")
        xs, ys = rate(r)
        ax2.plot(xs, ys, style, color="k" if r is chaos else "grey", lw=0.9, label=label)
    t0 = chaos["t_first"] or 0
    seen = set()
    for f in chaos["faults"]:
        a = (f["t"] - t0) / 60
        b = ((f["heal"] or f["t"]) - t0) / 60
        for ax in (ax1, ax2):
            ax.axvspan(a, max(b, a + 0.02), color=COLORS[f["kind"]], alpha=0.35, lw=0,
                       label=(f["kind"] if ax is ax1 and f["kind"] not in seen else None))
        seen.add(f["kind"])
        ax1.text(a, 1.0, f["service"].replace("coordinator", "coord"), rotation=90, fontsize=6, va="bottom",
                 ha="center", transform=ax1.get_xaxis_transform(), clip_on=False)
    if chaos["longest_stall"]:
        s, a, b = chaos["longest_stall"]
        for ax in (ax1, ax2):
            ax.axvspan((a - t0) / 60, (b - t0) / 60, ymin=0, ymax=0.06, color="red", alpha=0.9, lw=0)
        ax2.annotate(f"longest stall {s:.1f} s", xy=((a - t0) / 60, 0), xytext=(0, 18), textcoords="offset points",
                     fontsize=7, color="red", arrowprops=dict(arrowstyle="->", color="red", lw=0.6))
    ax1.set_ylabel("examples committed (M)")
    ax1.legend(fontsize=7, loc="lower right", ncol=2)
    ax2.set_ylabel("committed/s, 10 s window (k)")
    ax2.set_xlabel("minutes since the first commit (shaded: a fault, from its start to its heal or restart)")
    ax2.legend(fontsize=7, loc="lower right")
    ax2.set_ylim(bottom=0)
    fig.suptitle(title, fontsize=10, y=0.995)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def report(a):
    meta = json.load(open(os.path.join(a.work, "chaos", "meta.json")))
    rows = meta["rows"]
    reader_rows = meta["reader_rows"]
    free = analyse(os.path.join(a.work, "free"), rows, reader_rows)
    chaos = analyse(os.path.join(a.work, "chaos"), rows, reader_rows)
    checks = []  # (ok, text)

    def run_checks(r):
        res = r["result"]
        ok = bool(res.get("ok"))
        checks.append((ok, f"{r['name']}: result ok {res.get('ok')} {res.get('error') or ''}".rstrip()))
        committed = res.get("examples_committed")
        checks.append((committed == rows, f"{r['name']}: examples_committed {committed} of {rows} rows"))
        last = {}
        for e in r["exits"]:
            last[e["service"]] = e
        for e in r["exits"]:
            if e is last[e["service"]]:
                checks.append((e["rc"] == "0", f"{r['name']}: {e['service']} (last process, on {e['host']}) exited {e['rc']}"))
            elif e["how"] not in ("killed",):
                checks.append((False, f"{r['name']}: {e['service']} #{e['incarnation']} on {e['host']} exited {e['rc']} ({e['how']})"))
        final = [r["series"][-1][1] if r["series"] else 0]
        checks.append((r["t_done"] is not None, f"{r['name']}: the readers' counts reached every row ({final[0]} of {rows})"))
        for t, w in r["crashes"]:
            checks.append((False, f"{r['name']}: {' '.join(w)}"))

    run_checks(free)
    run_checks(chaos)
    ne_f, ne_c = free["result"].get("test_ne"), chaos["result"].get("test_ne")
    ne_pct = (ne_c / ne_f - 1) * 100 if ne_f and ne_c else None
    share = chaos["eps"] / free["eps"] if chaos["eps"] and free["eps"] else None
    n_faults = len(chaos["faults"])
    kinds = {k: sum(1 for f in chaos["faults"] if f["kind"] == k) for k in FAULT_KINDS}
    svc_kinds = {s: sum(1 for f in chaos["faults"] if f["service"] in INSTANCES[s]) for s in SERVICE_KINDS}
    exactly_once = all(ok for ok, t in checks if "examples_committed" in t or "reached every row" in t)
    all_ok = all(ok for ok, _ in checks)
    survived = n_faults if all_ok else 0
    ne_ok = ne_pct is not None and abs(ne_pct) <= NE_TARGET_PCT
    eps_ok = share is not None and share >= EPS_TARGET_SHARE
    enough = n_faults >= meta["faults_wanted"] and chaos["training_s"] is not None and \
        chaos["training_s"] >= meta["minutes_wanted"] * 60 * 0.999
    every_kind = all(kinds.values()) and all(svc_kinds.values())
    passed = all_ok and ne_ok and eps_ok and exactly_once and enough and every_kind

    L = []
    L.append(f"Chaos run ({meta['host_text']}; {meta['date']}; seed {meta['seed']})")
    L.append(f"cluster: {meta['cluster']}")
    L.append(f"settings: {meta['settings']}")
    L.append(f"data: {rows:,} generated rows in {meta['files']} gzip files, 1 epoch; test {meta['test_rows']:,} rows")
    L.append("")
    L.append("| | failure-free | chaos | target |")
    L.append("|---|---|---|---|")
    L.append(f"| faults (survived) | 0 | {n_faults} ({survived}) | at least {meta['faults_wanted']}, every kind |")
    L.append(f"| training time | {fmt(free['training_s'], '.0f')} s | {fmt(chaos['training_s'], '.0f')} s | at least {meta['minutes_wanted'] * 60:.0f} s (chaos) |")
    L.append(f"| examples/s | {fmt(free['eps'], ',.0f')} | {fmt(chaos['eps'], ',.0f')} ({fmt(share and share * 100, '.1f')}%) | at least 90% |")
    ls_f, ls_c = free["longest_stall"], chaos["longest_stall"]
    cf, cc = free["cpu"] or {}, chaos["cpu"] or {}

    def cores(c, k):
        return fmt(c[k] / c["seconds"], ".2f") if c and c.get("seconds") else "-"
    L.append(f"| CPU cores used by the job / by other processes (mean over training) | {cores(cf, 'job_cpu_s')} / "
             f"{cores(cf, 'other_cpu_s')} | {cores(cc, 'job_cpu_s')} / {cores(cc, 'other_cpu_s')} | |")
    cpu_share = chaos["eps_per_cpu"] / free["eps_per_cpu"] if chaos["eps_per_cpu"] and free["eps_per_cpu"] else None
    L.append(f"| examples per CPU-second of the job | {fmt(free['eps_per_cpu'], ',.0f')} | "
             f"{fmt(chaos['eps_per_cpu'], ',.0f')} ({fmt(cpu_share and cpu_share * 100, '.1f')}%) | |")
    L.append(f"| longest stall (no commits) | {fmt(ls_f and ls_f[0])} s | {fmt(ls_c and ls_c[0])} s | |")
    L.append(f"| usual step between commits | {fmt(free['usual_step_s'], '.2f')} s | {fmt(chaos['usual_step_s'], '.2f')} s | |")
    lost = chaos["lost_s"]
    L.append(f"| time lost in the faults' windows (each from the fault to 10 s after its heal or 5 s after its stall), at the run's rate outside them "
             f"| - | {fmt(lost)} s ({fmt(lost and chaos['training_s'] and 100 * lost / chaos['training_s'])}% of training) | |")
    L.append(f"| test NE | {fmt(ne_f, '.5f')} | {fmt(ne_c, '.5f')} ({fmt(ne_pct, '+.2f')}%) | within 1% |")
    L.append(f"| rows committed | {free['result'].get('examples_committed')} | {chaos['result'].get('examples_committed')} | {rows} each once |")
    L.append(f"| trainings reported (replays) | {free['result'].get('examples')} | {chaos['result'].get('examples')} | |")
    L.append("")
    L.append("faults by kind: " + ", ".join(f"{k} {v}" for k, v in kinds.items()) + "; by service: " +
             ", ".join(f"{k} {v}" for k, v in svc_kinds.items()))
    L.append("")
    L.append("| # | at (min) | fault | service | host | length (s) | longest stall (s) | commits resumed after the heal (s) | time lost (s) |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    t0 = chaos["t_first"] or 0
    for f in chaos["faults"]:
        what = f["kind"] + (f" {f['extra']}" if f["extra"] != "-" else "")
        L.append(f"| {f['id']} | {(f['t'] - t0) / 60:.1f} | {what} | {f['service']} | {f['host']} | {f['seconds']:.1f} | "
                 f"{f['stall_s']:.1f} | {f['resumed_after_heal_s']:.1f} | {fmt(f['lost_s'])} |")
    for t, w in chaos["skipped"]:
        L.append(f"not done: {' '.join(w)}")
    L.append("")
    bad = [t for ok, t in checks if not ok]
    L.append("checks: " + ("all passed" if not bad else f"{len(bad)} FAILED"))
    for t in bad:
        L.append(f"  FAIL {t}")
    verdicts = [("exactly once", exactly_once), (f"NE within {NE_TARGET_PCT:g}%", ne_ok),
                (f"examples/s at least {EPS_TARGET_SHARE:.0%}", eps_ok),
                (f"at least {meta['faults_wanted']} faults in at least {meta['minutes_wanted']:g} min", enough),
                ("every fault kind and service kind", every_kind), ("every process and result as expected", all_ok)]
    L.append("targets: " + "; ".join(f"{n} {'PASS' if v else 'FAIL'}" for n, v in verdicts))
    text = "\n".join(L)
    summary = {"bench": "chaos", "ok": passed, "seed": meta["seed"], "date": meta["date"], "host": meta["host_text"],
               "rows": rows, "faults": n_faults, "faults_survived": survived, "faults_by_kind": kinds,
               "faults_by_service": svc_kinds, "training_s": {"free": free["training_s"], "chaos": chaos["training_s"]},
               "examples_per_sec": {"free": free["eps"], "chaos": chaos["eps"]}, "eps_share": share, "lost_s": chaos["lost_s"], "outside_eps": chaos["outside_eps"],
               "cpu": {"free": free["cpu"], "chaos": chaos["cpu"]},
               "examples_per_job_cpu_s": {"free": free["eps_per_cpu"], "chaos": chaos["eps_per_cpu"]},
               "longest_stall_s": {"free": ls_f and ls_f[0], "chaos": ls_c and ls_c[0]},
               "test_ne": {"free": ne_f, "chaos": ne_c}, "ne_change_pct": ne_pct,
               "examples_committed": {"free": free["result"].get("examples_committed"),
                                      "chaos": chaos["result"].get("examples_committed")},
               "trainings": {"free": free["result"].get("examples"), "chaos": chaos["result"].get("examples")},
               "exactly_once": exactly_once, "checks_failed": bad,
               "fault_list": [{k: f[k] for k in ("id", "kind", "service", "host", "seconds", "extra", "stall_s", "resumed_after_heal_s", "window_eps", "lost_s")} |
                              {"at_s": round(f["t"] - t0, 1)} for f in chaos["faults"]],
               "settings": meta["settings"], "cluster": meta["cluster"]}
    write_report(a.out, text, [json.dumps(summary)])
    if a.out:
        plot(free, chaos, a.out + ".png",
             f"chaos run: {n_faults} faults, {fmt(share and share * 100, '.1f')}% of the failure-free examples/s, "
             f"NE {fmt(ne_pct, '+.2f')}%, every row once: {'yes' if exactly_once else 'NO'} "
             f"(seed {meta['seed']}, {meta['date']})")
    return 0 if passed else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("schedule")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--count", type=int, default=200)
    s.add_argument("--gap", default="20-40")
    s.add_argument("--seconds", default="2-8")
    s.add_argument("--slow-rates", default="10mbit,20mbit,50mbit")
    q = sub.add_parser("poll")
    q.add_argument("--job", required=True)
    q.add_argument("--coordinator", required=True)
    q.add_argument("--reader-port", type=int, required=True)
    r = sub.add_parser("report")
    r.add_argument("--work", required=True)
    r.add_argument("--out", default="")
    return run_subcommands(ap, {"schedule": schedule, "poll": poll, "report": report})


if __name__ == "__main__":
    sys.exit(main())
