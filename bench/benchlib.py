"""What the Python benchmarks share: the built binary, the experiment's generated data, and one
job run to its JSON result line (kept in a runs file as it ends, so that a crash late in a long
experiment keeps the runs before it)."""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(os.environ.get("SS_BUILD_DIR", os.path.join(ROOT, "build")), "services/cli/shadowsync")
OUT = os.path.join(ROOT, "bench", "results")


def experiment_data(rows):
    """data/experiment-ROWS (train.tsv, 100k-row test.tsv), generated once: (train, test) paths."""
    d = os.path.join(ROOT, "data", f"experiment-{rows}")
    if not os.path.exists(os.path.join(d, "teacher.json")):
        subprocess.run([BIN, "gen-data", "--out", d, "--rows", str(rows), "--test-rows", "100000"],
                       check=True, capture_output=True)
    return os.path.join(d, "train.tsv"), os.path.join(d, "test.tsv")


def report(name, text, summary):
    """Prints a benchmark's table and its JSON line, and writes them to bench/results/NAME.{md,json}."""
    print(text)
    print(json.dumps(summary))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, f"{name}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(OUT, f"{name}.json"), "w") as f:
        json.dump(summary, f, indent=1)


def load_runs(path):
    """label -> result of the runs a runs file holds (empty when there is none)."""
    runs = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                runs[r["label"]] = r["result"]
    return runs


def result_line(p, label):
    """A finished job's JSON result line as a dict; exits with its output's tail if it failed."""
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        raise SystemExit(f"{label}: shadowsync exited {p.returncode}")
    return json.loads(lines[-1])


def run_job(args, label, runs_path=None, done=None):
    """Runs `shadowsync ARGS`; its result line as a dict, from `done` when it holds `label`.
    Prints a line per run; appends {label, result} to runs_path when given; exits on failure."""
    if done is not None and label in done:
        return done[label]
    t0 = time.time()
    result = result_line(subprocess.run([BIN] + args, capture_output=True, text=True), label)
    ne = result.get("test_ne")
    print(f"  {label:36s} {result['examples_per_sec']:9.0f} ex/s  NE {ne if ne is not None else float('nan'):.5f}"
          f"  gap {result.get('sync_gap', 0):6.1f}  ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    if runs_path:
        with open(runs_path, "a") as f:
            f.write(json.dumps({"label": label, "result": result}) + "\n")
    return result


def run_pinned(cmd, run_dir, base_cpu, moved):
    """Runs `cmd` (a `shadowsync local` job, given --processes and --run-dir here) on CPU base_cpu,
    moving each service whose name starts with a key of `moved` (e.g. {"shard-": 1}) and all its
    threads to that CPU as soon as its pid file appears. Samples the moved services' CPU time until
    the job exits: returns (CompletedProcess, {service: CPU-seconds}, {service: seconds it ran})."""
    needed = max([base_cpu] + list(moved.values())) + 1
    if (os.cpu_count() or 1) < needed:
        raise SystemExit(f"this layout needs {needed} CPUs; this machine has {os.cpu_count()}")
    os.makedirs(run_dir)
    p = subprocess.Popen(["taskset", "-c", str(base_cpu)] + cmd + ["--processes", "--run-dir", run_dir],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids, cpu, first, last = {}, {}, {}, {}
    tick = os.sysconf("SC_CLK_TCK")
    while p.poll() is None:
        for f in os.listdir(run_dir):
            service = f[:-4]
            if not f.endswith(".pid") or service in pids:
                continue
            target = next((c for prefix, c in moved.items() if service.startswith(prefix)), None)
            pid = open(os.path.join(run_dir, f)).read().strip() if target is not None else ""
            if pid:
                subprocess.run(["taskset", "-a", "-p", "-c", str(target), pid], check=True, capture_output=True)
                pids[service], first[service] = pid, time.time()
        for service, pid in pids.items():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                cpu[service], last[service] = (int(fields[11]) + int(fields[12])) / tick, time.time()
            except (OSError, IndexError):
                pass
        time.sleep(0.05 if len(pids) < len(moved) else 0.2)
    out, err = p.communicate()
    if not pids:
        raise SystemExit(f"no service matching {list(moved)} started:\n" + err[-3000:])
    return (subprocess.CompletedProcess(cmd, p.returncode, out, err), cpu,
            {s: last.get(s, first[s]) - first[s] for s in pids})
