#!/usr/bin/python3
"""Sampler, watchdog and report of the load and soak benchmark (bench/soak/soak.sh drives it).

    soak_report.py sample --run-dir D --bin B --supervisor PID --out F [--deadline S] ...
        While `shadowsync local --processes` (PID) runs: every --interval seconds the RSS of every
        service (VmRSS of the pid in RUN_DIR/<service>.pid, re-read each time so that a restarted
        service is followed) and of the supervisor; every --status-every seconds the coordinator's
        status; every --member-status-every seconds the status of every shard and reader and of
        the first --max-trainers trainers. One JSON object a line into F. Past --deadline seconds
        it stops the run (SIGTERM to the supervisor, SIGKILL to everything after --grace s): the
        benchmark stays bounded in time even if the job hangs.

    soak_report.py report --work W --out PREFIX
        Reads W/<scenario>/{meta.json,samples.jsonl,stdout.txt,stderr.txt}, judges every scenario
        and writes PREFIX.txt (the table), PREFIX.json (one line per scenario plus an overall line)
        and PREFIX-<scenario>.png (RSS over time). Exit status 1 when a criterion fails.

Criteria (a scenario passes when all hold):
  exactly once   the job ended ok, exit 0, examples_committed == examples_read == rows x epochs
  flat memory    judged on the steady state: the training phase (coordinator state `running`,
                 from the first committed example to the last sample before the job drains)
                 after the first epoch (every id of the data set exists on the shards by then, so
                 the embedding tables stop growing). Early = median RSS over the second quarter of
                 the training phase, late = median RSS over its last quarter. A process passes
                 when late - early <= max(5% of early, FLOOR_MIB) and <= CAP_MIB; a group
                 (coordinator, shards, readers, trainers) passes when each of its processes does.
                 The small floor is there because the RSS of a 10-20 MiB process moves in
                 allocator-arena steps of about a MiB; the slope (least squares over the steady
                 state, MiB/min) is reported beside it. Shards' RocksDB buffers (memtables + block
                 cache, from their status) must also stay within the bound they report.
  bounded time   the run ended by itself before the deadline
  within budget  a scenario with --memory-budget-mb B: every shard's RSS over the steady state stays
                 within BUDGET_FACTOR x B (RAM may pass the budget by the rows that come in during
                 one write-back, and row memory once taken is reused, not returned) plus the
                 RocksDB bound the shard reports plus SHARD_BASE_MIB (the process itself: code,
                 CAF, ZeroMQ, allocator arenas, the transport's buffers)
"""
import argparse
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import fmt as fmt_or_dash, last_json, pyplot, run_subcommands, write_report  # noqa: E402

FLOOR_MIB = 2.0
CAP_MIB = 20.0
BUDGET_FACTOR = 1.5
SHARD_BASE_MIB = 64.0
GROWTH_FRACTION = 0.05
GROUPS = ["coordinator", "shard", "reader", "trainer", "sync"]


def group_of(name):
    if name == "coordinator":
        return "coordinator"
    if name == "local":
        return "supervisor"
    for g in GROUPS:
        if name.startswith(g + "-"):
            return g
    return "other"


# ---------------------------------------------------------------- sampling


def rss_kib(pid):
    """VmRSS of a live, non-zombie process whose command is shadowsync; None otherwise."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"shadowsync" not in f.read():
                return None
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None  # a zombie has no VmRSS


def pid_files(run_dir):
    out = {}
    for p in glob.glob(os.path.join(run_dir, "*.pid")):
        try:
            out[os.path.basename(p)[:-4]] = int(open(p).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # being rewritten by the supervisor
    return out


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie child of ours counts as gone
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def status(binary, endpoint, timeout):
    try:
        p = subprocess.run([binary, "status", "--coordinator", endpoint, "--timeout", str(timeout)],
                           capture_output=True, text=True, timeout=timeout + 5)
        return json.loads(p.stdout) if p.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return None


def sample(a):
    out = open(a.out, "a", buffering=1)
    lock = threading.Lock()
    t0 = time.monotonic()
    done = threading.Event()

    def emit(obj):
        obj["t"] = round(time.monotonic() - t0, 3)
        with lock:
            out.write(json.dumps(obj, separators=(",", ":")) + "\n")

    latest = {}  # the coordinator's last status: the member poller reads the endpoints from it

    def poll_coordinator():
        # Threads of their own: a slow `status` must not delay the RSS samples, and polling dozens
        # of members must not thin out the coordinator's samples (they define the training phase).
        while not done.is_set():
            start = time.monotonic()
            ep_file = os.path.join(a.run_dir, "coordinator.endpoint")
            ep = open(ep_file).read().strip() if os.path.exists(ep_file) else ""
            st = status(a.bin, ep, a.status_timeout) if ep else None
            if st:
                s = st["service"]
                latest["members"] = s.get("members", [])
                emit({"kind": "coord", "state": s.get("state"), "committed": s.get("examples_committed"),
                      "read": s.get("examples_read"), "examples": s.get("examples"), "eps": s.get("examples_per_sec"),
                      "members": len(s.get("members", [])), "snapshots": s.get("snapshots"),
                      "queue_high_water": st.get("transport", {}).get("queue_high_water")})
            done.wait(max(0.0, a.status_every - (time.monotonic() - start)))

    def poll_members():
        while not done.wait(a.member_status_every):
            members = sorted(latest.get("members", []), key=lambda m: (m["role"], m.get("index", 0), m["name"]))
            trainers = [m for m in members if m["role"] == "trainer"]
            trainers.sort(key=lambda m: int(m["name"].rsplit("-", 1)[-1]) if m["name"][-1].isdigit() else 0)
            for m in [m for m in members if m["role"] in ("shard", "reader")] + trainers[: a.max_trainers]:
                ms = status(a.bin, m["endpoint"], a.status_timeout)
                if ms:
                    rec = {k: v for k, v in ms["service"].items() if isinstance(v, (int, float, str))}
                    rec["queue_high_water"] = ms.get("transport", {}).get("queue_high_water")
                    emit({"kind": "member", "name": m["name"], "status": rec})

    threading.Thread(target=poll_coordinator, daemon=True).start()
    threading.Thread(target=poll_members, daemon=True).start()
    stopped_at = None
    emit({"kind": "start", "supervisor": a.supervisor, "deadline": a.deadline})
    while True:
        pids = pid_files(a.run_dir)
        pids["local"] = a.supervisor
        rss = {}
        for name, pid in pids.items():
            kib = rss_kib(pid)
            if kib is not None:
                rss[name] = [pid, kib]
        emit({"kind": "rss", "rss": rss})
        if not alive(a.supervisor):
            break
        elapsed = time.monotonic() - t0
        if a.deadline and elapsed > a.deadline:
            # Bounded time: the job did not end by itself. Ask it to stop, then force it.
            if stopped_at is None:
                emit({"kind": "deadline", "action": "SIGTERM supervisor"})
                stopped_at = elapsed
                try:
                    os.kill(a.supervisor, signal.SIGTERM)
                except OSError:
                    pass
            elif elapsed - stopped_at > a.grace:
                emit({"kind": "deadline", "action": "SIGKILL all"})
                for name, pid in pids.items():
                    if rss_kib(pid) is not None:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except OSError:
                            pass
        time.sleep(a.interval)
    done.set()
    emit({"kind": "end"})


# ---------------------------------------------------------------- analysis


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def slope_mib_per_min(points):
    if len(points) < 3:
        return float("nan")
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return 60.0 * sum((t - mt) * (v - mv) for t, v in points) / den if den else float("nan")


TRAINER_LINE = re.compile(r"info (trainer-\d+): input exhausted.*?computed (\d+)% .*?waited (\d+)%.*?lookups took p50 ([\d.]+) ms, "
                          r"p99 ([\d.]+) ms \((\d+) requests\), pushes p50 ([\d.]+) ms, p99 ([\d.]+) ms")
RESTART_LINE = re.compile(r"local: (\S+) (?:exited with status (-?\d+)|was killed by signal (\d+)|[^:]*?) before the job ended")


def analyse(sdir):
    meta = json.load(open(os.path.join(sdir, "meta.json")))
    stdout = open(os.path.join(sdir, "stdout.txt"), errors="replace").read()
    stderr = open(os.path.join(sdir, "stderr.txt"), errors="replace").read()
    samples = [json.loads(l) for l in open(os.path.join(sdir, "samples.jsonl")) if l.strip()]
    res = last_json(stdout) or {}
    expected = meta["rows"] * meta["epochs"]
    r = {"bench": "soak", "scenario": meta["name"], "description": meta["description"], "rows": meta["rows"],
         "epochs": meta["epochs"], "expected_examples": expected, "exit_status": meta["exit_status"],
         "wall_seconds": meta["wall_seconds"], "job_ok": bool(res.get("ok")), "job_error": res.get("error", "no result line"),
         "examples_committed": res.get("examples_committed"), "examples_read": res.get("examples_read"),
         "trainings": res.get("examples"), "train_seconds": res.get("seconds"),
         "examples_per_sec": res.get("examples_per_sec"), "trainers": meta["trainers"], "shards": meta["shards"],
         "readers": meta["readers"], "flags": meta["flags"], "problems": []}
    r["examples_per_sec_wall"] = ((r["examples_committed"] or 0) / meta["wall_seconds"]) if meta["wall_seconds"] else None
    r["timed_out"] = any(s["kind"] == "deadline" for s in samples)
    r["exactly_once"] = (r["job_ok"] and meta["exit_status"] == 0 and r["examples_committed"] == expected
                         and r["examples_read"] == expected)
    if not r["exactly_once"]:
        r["problems"].append(f"count/result: ok={r['job_ok']} exit={meta['exit_status']} committed={r['examples_committed']} "
                             f"read={r['examples_read']} expected={expected} error={r['job_error']!r}")
    if r["timed_out"]:
        r["problems"].append(f"did not end within the deadline of {meta['deadline']} s: stopped by the watchdog")
    restarts = [m.group(0) for m in RESTART_LINE.finditer(stderr)]
    r["restarts"] = len(restarts)
    for line in restarts[:5]:
        r["problems"].append("supervisor: " + line)

    # Training phase from the coordinator's samples.
    coord = [s for s in samples if s["kind"] == "coord"]
    running = [s for s in coord if s["state"] == "running" and (s["committed"] or 0) > 0]
    members_max = max((s["members"] for s in coord), default=0)
    r["members_max"] = members_max
    r["snapshots"] = res.get("snapshots")
    if len(running) < 4:
        r["memory_judged"] = False
        r["problems"].append(f"only {len(running)} coordinator samples in the training phase: memory not judged")
        t_start = t_end = None
    else:
        r["memory_judged"] = True
        t_start, t_end = running[0]["t"], running[-1]["t"]
    epoch1 = next((s["t"] for s in coord if (s["committed"] or 0) >= meta["rows"]), None)
    r["epoch1_seconds"] = round(epoch1 - t_start, 1) if (epoch1 is not None and t_start is not None) else None

    rss_samples = [s for s in samples if s["kind"] == "rss"]
    series = {}  # name -> [(t, MiB, pid)]
    for s in rss_samples:
        for name, (pid, kib) in s["rss"].items():
            series.setdefault(name, []).append((s["t"], kib / 1024.0, pid))
    r["peak_total_rss_mib"] = round(max((sum(k for _, k in s["rss"].values()) / 1024.0 for s in rss_samples), default=0), 1)

    groups = {}
    if t_start is not None:
        dur = t_end - t_start
        early_lo, early_hi = t_start + dur / 4, t_start + dur / 2
        late_lo = t_start + 3 * dur / 4
        if epoch1 is not None and epoch1 > early_lo:
            # Never judge a window in which the tables still grow: start the early window after epoch 1.
            early_lo, early_hi = epoch1, max(epoch1 + dur / 4, early_hi)
            r["problems"].append("epoch 1 ended after a quarter of the training phase: early window moved past it")
        if early_hi >= late_lo:
            r["memory_judged"] = False
            r["problems"].append("the steady state is too short for two separate windows: memory not judged")
        r["windows"] = {"train_start": t_start, "train_end": t_end, "early": [early_lo, early_hi], "late": [late_lo, t_end]}
        for name, pts in series.items():
            g = group_of(name)
            if g in ("supervisor", "other"):
                continue
            early = [v for t, v, _ in pts if early_lo <= t <= early_hi]
            late = [v for t, v, _ in pts if late_lo <= t <= t_end]
            steady = [(t, v) for t, v, _ in pts if early_lo <= t <= t_end]
            pids = sorted({p for t, _, p in pts if early_lo <= t <= t_end})
            if not early or not late or not r["memory_judged"]:
                continue
            e, l = median(early), median(late)
            growth = l - e
            ok = growth <= max(GROWTH_FRACTION * e, FLOOR_MIB) and growth <= CAP_MIB
            if len(pids) > 1:
                ok = False
                r["problems"].append(f"{name} was restarted during the steady state (pids {pids})")
            gr = groups.setdefault(g, {"processes": 0, "early_mib": 0.0, "late_mib": 0.0, "start_mib": 0.0, "end_mib": 0.0,
                                       "max_growth_mib": -1e9, "max_growth_process": "", "max_growth_pct": 0.0,
                                       "max_slope_mib_per_min": -1e9,
                                       "max_last_half_slope_mib_per_min": -1e9, "failed": []})
            gr["processes"] += 1
            gr["early_mib"] += e
            gr["late_mib"] += l
            gr["start_mib"] += pts[0][1]
            gr["end_mib"] += [v for t, v, _ in pts if t <= t_end][-1]
            sl = slope_mib_per_min(steady)
            # Not a criterion: the slope over the last half of the training phase tells a warm-up
            # that ends (a plateau) from growth that goes on.
            half = slope_mib_per_min([(t, v) for t, v, _ in pts if t_start + dur / 2 <= t <= t_end])
            if growth > gr["max_growth_mib"]:
                gr["max_growth_mib"], gr["max_growth_process"] = growth, name
                gr["max_growth_pct"] = 100 * growth / e if e else 0.0
            if sl == sl:  # not NaN (too few points)
                gr["max_slope_mib_per_min"] = max(gr["max_slope_mib_per_min"], sl)
            if half == half:
                gr["max_last_half_slope_mib_per_min"] = max(gr["max_last_half_slope_mib_per_min"], half)
            if not ok:
                gr["failed"].append(f"{name}: {e:.1f} -> {l:.1f} MiB")
        for g, gr in groups.items():
            gr["pass"] = not gr["failed"]
            for k in ("early_mib", "late_mib", "start_mib", "end_mib", "max_growth_mib", "max_growth_pct", "max_slope_mib_per_min",
                      "max_last_half_slope_mib_per_min"):
                gr[k] = round(gr[k], 2) if gr[k] > -1e9 else None
            if gr["failed"]:
                r["problems"].append(f"memory grew in {g}: " + "; ".join(gr["failed"][:4]))
    r["memory"] = groups
    r["flat_memory"] = bool(groups) and all(gr["pass"] for gr in groups.values())

    # Latency: the trainers' own whole-run histograms (log lines), sync rounds from the result line.
    lat = {m.group(1): [float(x) for x in m.groups()[1:]] for m in TRAINER_LINE.finditer(stderr)}
    if lat:
        col = lambda i: [v[i] for v in lat.values()]
        r["latency_ms"] = {"trainers_reporting": len(lat),
                           "lookup_p50_median": median(col(2)), "lookup_p99_median": median(col(3)), "lookup_p99_max": max(col(3)),
                           "push_p50_median": median(col(5)), "push_p99_median": median(col(6)), "push_p99_max": max(col(6)),
                           "worker_compute_pct_median": median(col(0)), "worker_wait_pct_median": median(col(1))}
    ts = res.get("trainer_stats") or []
    sync = [t for t in ts if t.get("sync_rounds")]
    if sync:
        r.setdefault("latency_ms", {}).update({
            "sync_rounds": sum(t["sync_rounds"] for t in sync),
            "sync_p50_median": median([t["sync_latency_p50_ms"] for t in sync]),
            "sync_p99_median": median([t["sync_latency_p99_ms"] for t in sync]),
            "sync_p99_max": max(t["sync_latency_p99_ms"] for t in sync)})
    finishers = [t for t in ts if not t.get("left")]  # those that left the job trained less by design
    if finishers:
        per = [t["examples"] for t in finishers]
        r["trainer_examples_min_max"] = [min(per), max(per)]

    # Services' own counters over time: shard table size, shard busy fraction, readers' batches in flight.
    members = {}
    for s in samples:
        if s["kind"] == "member":
            members.setdefault(s["name"], []).append((s["t"], s["status"]))
    shard_names = sorted(n for n in members if n.startswith("shard-"))
    if shard_names:
        rows_end = sum(members[n][-1][1].get("rows", 0) for n in shard_names)
        r["shard_rows_end"] = rows_end
        if epoch1 is not None:
            after = [min((st.get("rows", 0) for t, st in members[n] if t >= epoch1), default=None) for n in shard_names]
            if None not in after:
                r["shard_rows_growth_after_epoch1"] = rows_end - sum(after)
        busy = []
        for n in shard_names:
            pts = members[n]
            if len(pts) >= 2 and pts[-1][0] > pts[0][0]:
                busy.append((pts[-1][1].get("busy_seconds", 0) - pts[0][1].get("busy_seconds", 0)) / (pts[-1][0] - pts[0][0]))
        r["shard_busy_fraction_max"] = round(max(busy), 3) if busy else None
        # RocksDB's own buffers (memtables + block cache), bounded by its configuration: how much
        # of a shard's RSS growth they explain, and whether they stayed within their bound.
        if epoch1 is not None:
            grow = []
            for n in shard_names:
                pts = [(t, st.get("storage_memory_bytes")) for t, st in members[n] if t >= epoch1]
                pts = [(t, v) for t, v in pts if v is not None]
                if len(pts) >= 2:
                    grow.append((n, (pts[-1][1] - pts[0][1]) / 2**20, pts[-1][1] / 2**20))
            if grow:
                worst = max(grow, key=lambda g: g[1])
                peak = max(((st.get("storage_memory_bytes") or 0, n) for n in shard_names for _, st in members[n]))
                bound = max(st.get("storage_memory_bound_bytes", 0) for n in shard_names for _, st in members[n])
                r["shard_storage_memory"] = {
                    "growth_mib_max": round(worst[1], 2), "shard": worst[0], "end_mib_max": round(max(g[2] for g in grow), 2),
                    "peak_mib": round(peak[0] / 2**20, 2), "peak_shard": peak[1], "bound_mib": round(bound / 2**20, 1)}
                if bound and peak[0] > bound:
                    r["flat_memory"] = False
                    r["problems"].append(f"RocksDB buffers of {peak[1]} reached {peak[0] / 2**20:.1f} MiB, "
                                         f"above their bound of {bound / 2**20:.1f} MiB")
    budget = re.search(r"--memory-budget-mb (\d+)", meta.get("flags", ""))
    if budget and shard_names and r.get("windows"):
        b = float(budget.group(1))
        bound = max((st.get("storage_memory_bound_bytes", 0) for n in shard_names for _, st in members[n]), default=0)
        limit = BUDGET_FACTOR * b + bound / 2**20 + SHARD_BASE_MIB
        lo, hi = r["windows"]["early"][0], r["windows"]["train_end"]
        worst = max(((max((v for t, v, _ in series.get(n, []) if lo <= t <= hi), default=0), n) for n in shard_names))
        peak_rows = max((st.get("peak_rows_in_memory", 0) for n in shard_names for _, st in members[n]), default=0)
        budget_rows = max((st.get("max_rows_in_memory", 0) for n in shard_names for _, st in members[n]), default=0)
        r["shard_budget"] = {"budget_mib": b, "limit_mib": round(limit, 1), "max_rss_mib": round(worst[0], 1),
                             "shard": worst[1], "peak_rows_in_memory": peak_rows, "budget_rows": budget_rows}
        if worst[0] > limit:
            r["flat_memory"] = False
            r["problems"].append(f"{worst[1]} reached {worst[0]:.1f} MiB of RSS with a {b:.0f} MB budget, above "
                                 f"{BUDGET_FACTOR} x budget + RocksDB's {bound / 2**20:.0f} MiB + {SHARD_BASE_MIB:.0f} MiB "
                                 f"= {limit:.1f} MiB")
    reader_names = sorted(n for n in members if n.startswith("reader-"))
    if reader_names:
        r["reader_in_flight_max"] = max(st.get("in_flight", 0) for n in reader_names for _, st in members[n])
        r["reader_requeued"] = sum(members[n][-1][1].get("batches_requeued", 0) for n in reader_names)
    hw = [st.get("queue_high_water") or 0 for pts in members.values() for _, st in pts]
    hw += [s.get("queue_high_water") or 0 for s in coord]
    r["transport_queue_high_water_max"] = max(hw) if hw else None
    r["pass"] = r["exactly_once"] and r["flat_memory"] and not r["timed_out"]
    r["ok"] = r["pass"]
    r["_series"] = series
    r["_coord"] = coord
    return r


def plot(r, path):
    plt = pyplot(path)
    if plt is None:
        return
    order = ["coordinator", "shard", "reader", "trainer", "sync", "supervisor"]
    present = [g for g in order if any(group_of(n) == g for n in r["_series"])]
    fig, axes = plt.subplots(len(present) + 1, 1, figsize=(10, 2.2 * (len(present) + 1)), sharex=True)
    w = r.get("windows")
    for ax, g in zip(axes, present):
        names = sorted(n for n in r["_series"] if group_of(n) == g)
        for n in names:
            pts = r["_series"][n]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=0.8, alpha=0.7 if len(names) > 1 else 1.0,
                    label=n if len(names) <= 8 else None)
        verdict = r["memory"].get(g, {}).get("pass")
        tag = "" if verdict is None else (" PASS" if verdict else " FAIL")
        ax.set_ylabel("RSS MiB")
        ax.set_title(f"{g} ({len(names)} process{'es' if len(names) > 1 else ''}){tag}", fontsize=9, loc="left")
        if len(names) <= 8:
            ax.legend(fontsize=6, loc="lower right", ncol=4)
        if w:
            ax.axvspan(*w["early"], color="tab:green", alpha=0.12)
            ax.axvspan(*w["late"], color="tab:red", alpha=0.12)
    ax = axes[-1]
    c = r["_coord"]
    ax.plot([s["t"] for s in c], [(s["committed"] or 0) / 1e6 for s in c], color="k")
    ax.axhline(r["expected_examples"] / 1e6, color="grey", ls=":")
    ax.set_ylabel("committed (M)")
    ax.set_xlabel("seconds since the cluster started (green: early window, red: late window)")
    fig.suptitle(f"soak {r['scenario']}: {r['description']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def fmt(x, spec=".0f"):
    return fmt_or_dash(x, spec)


def report(a):
    scen = sorted((json.load(open(m))["order"], os.path.dirname(m)) for m in glob.glob(os.path.join(a.work, "*", "meta.json")))
    results = [analyse(d) for _, d in scen]
    lines = []
    p = lines.append
    p(f"shadowsync load and soak: {len(results)} scenario(s), binary {a.bin_label}, {a.host}")
    p("memory criterion: steady state (training phase after epoch 1), median RSS of its 2nd quarter (early) vs last quarter (late);")
    p(f"  a process passes when late - early <= max({100 * GROWTH_FRACTION:.0f}% of early, {FLOOR_MIB:.0f} MiB) and <= {CAP_MIB:.0f} MiB")
    p("latency percentiles are the trainers' power-of-two histogram buckets (upper bounds), over the whole run")
    for r in results:
        p("")
        p(f"== {r['scenario']}: {r['description']}  [{'PASS' if r['pass'] else 'FAIL'}]")
        p(f"   {r['trainers']} trainers, {r['shards']} shards, {r['readers']} readers; members seen {r['members_max']}; "
          f"{r['rows']} rows x {r['epochs']} epochs = {r['expected_examples']} examples; flags: {r['flags']}")
        p(f"   wall {r['wall_seconds']:.0f} s, training {fmt(r['train_seconds'], '.1f')} s, epoch 1 done at {fmt(r['epoch1_seconds'], '.1f')} s; "
          f"{fmt(r['examples_per_sec'])} examples/s (training phase), {fmt(r['examples_per_sec_wall'])} examples/s (wall, with start-up)")
        p(f"   exactly once: committed {r['examples_committed']} read {r['examples_read']} expected {r['expected_examples']} "
          f"-> {'OK' if r['exactly_once'] else 'MISMATCH'}; trainings reported {r['trainings']}; restarts {r['restarts']}; "
          f"snapshots {r['snapshots']}")
        p(f"   {'group':12s} {'procs':>5s} {'start':>8s} {'early':>8s} {'late':>8s} {'end':>8s} {'max growth (process)':>30s} {'slope':>10s} {'2nd half':>10s}  verdict")
        for g in ["coordinator", "shard", "reader", "trainer", "sync"]:
            gr = r["memory"].get(g)
            if not gr:
                continue
            p(f"   {g:12s} {gr['processes']:5d} {gr['start_mib']:8.1f} {gr['early_mib']:8.1f} {gr['late_mib']:8.1f} {gr['end_mib']:8.1f} "
              f"{gr['max_growth_mib']:+8.2f} MiB {gr['max_growth_pct']:+5.1f}% {gr['max_growth_process']:>11s} "
              f"{fmt(gr['max_slope_mib_per_min'], '+6.2f'):>6s}/min {fmt(gr['max_last_half_slope_mib_per_min'], '+6.2f'):>6s}/min  {'PASS' if gr['pass'] else 'FAIL'}")
        p(f"   (MiB, group totals; growth and slopes: the worst process; slope over the steady state and over the 2nd half"
      f" of the training phase, MiB/min; peak RSS of the whole cluster {r['peak_total_rss_mib']:.0f} MiB)")
        l = r.get("latency_ms")
        if l and "lookup_p50_median" in l:
            p(f"   trainer lookups p50 {l['lookup_p50_median']:.2f} ms, p99 {l['lookup_p99_median']:.2f} ms (max over trainers {l['lookup_p99_max']:.2f}); "
              f"pushes p50 {l['push_p50_median']:.2f} ms, p99 {l['push_p99_median']:.2f} ms (max {l['push_p99_max']:.2f}); "
              f"workers computing {l['worker_compute_pct_median']:.0f}%, waiting {l['worker_wait_pct_median']:.0f}% (medians over {l['trainers_reporting']} trainers)")
        if l and "sync_rounds" in l:
            p(f"   sync rounds {l['sync_rounds']}: p50 {l['sync_p50_median']:.2f} ms, p99 {l['sync_p99_median']:.2f} ms (max over trainers {l['sync_p99_max']:.2f})")
        extra = []
        if r.get("shard_rows_end") is not None:
            extra.append(f"shard rows at the end {r['shard_rows_end']}, growth after epoch 1 {r.get('shard_rows_growth_after_epoch1', '-')}")
        if r.get("shard_busy_fraction_max") is not None:
            extra.append(f"busiest shard {100 * r['shard_busy_fraction_max']:.0f}% busy")
        if r.get("shard_storage_memory"):
            m = r["shard_storage_memory"]
            extra.append(f"RocksDB buffers (memtables + block cache) grew at most {m['growth_mib_max']:+.1f} MiB "
                         f"({m['shard']}) after epoch 1, at most {m['end_mib_max']:.1f} MiB at the end, peak "
                         f"{m.get('peak_mib', 0):.1f} MiB ({m.get('peak_shard', '-')}), bound {m['bound_mib']:.0f} MiB per shard")
        if r.get("shard_budget"):
            m = r["shard_budget"]
            extra.append(f"memory budget {m['budget_mib']:.0f} MB ({m['budget_rows']} rows; peak {m['peak_rows_in_memory']} "
                         f"rows in RAM): shard RSS at most {m['max_rss_mib']:.1f} MiB ({m['shard']}) in the steady state, "
                         f"limit {m['limit_mib']:.1f} MiB")
        if r.get("reader_in_flight_max") is not None:
            extra.append(f"readers' batches in flight at most {r['reader_in_flight_max']}")
        if r.get("trainer_examples_min_max"):
            extra.append(f"examples per trainer {r['trainer_examples_min_max'][0]}..{r['trainer_examples_min_max'][1]}")
        extra.append(f"transport queue high water {r['transport_queue_high_water_max']}")
        p("   " + "; ".join(extra))
        for prob in r["problems"]:
            p(f"   problem: {prob}")
    ok = bool(results) and all(r["pass"] for r in results)
    total = sum(r["wall_seconds"] for r in results)
    p("")
    p(f"soak: {'PASS' if ok else 'FAIL'} ({sum(r['pass'] for r in results)}/{len(results)} scenarios), "
      f"{total:.0f} s of scenario wall time")
    json_lines = [json.dumps({k: v for k, v in r.items() if not k.startswith("_")}, separators=(",", ":"))
                  for r in results]
    overall = {"bench": "soak", "scenario": "all", "scenarios": [r["scenario"] for r in results],
               "passed": [r["scenario"] for r in results if r["pass"]], "scenario_wall_seconds": round(total, 1),
               "total_wall_seconds": a.total_seconds, "ok": ok}
    json_lines.append(json.dumps(overall, separators=(",", ":")))
    write_report(a.out, "\n".join(lines), json_lines)
    for r in results:
        try:
            plot(r, f"{a.out}-{r['scenario']}.png")
        except Exception as e:  # a plot must not hide the verdict
            print(f"plot of {r['scenario']} failed: {e}", file=sys.stderr)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--run-dir", required=True)
    s.add_argument("--bin", required=True)
    s.add_argument("--supervisor", type=int, required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--interval", type=float, default=1.0)
    s.add_argument("--status-every", type=float, default=2.0)
    s.add_argument("--member-status-every", type=float, default=10.0)
    s.add_argument("--max-trainers", type=int, default=4)
    s.add_argument("--status-timeout", type=float, default=3.0)
    s.add_argument("--deadline", type=float, default=0)
    s.add_argument("--grace", type=float, default=30)
    r = sub.add_parser("report")
    r.add_argument("--work", required=True)
    r.add_argument("--out", default="")
    r.add_argument("--bin-label", default="")
    r.add_argument("--host", default="")
    r.add_argument("--total-seconds", type=float, default=None)
    return run_subcommands(ap, {"sample": sample, "report": report})


if __name__ == "__main__":
    sys.exit(main())
