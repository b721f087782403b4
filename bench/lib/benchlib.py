"""What the Python benchmarks share; every Python script under bench/ imports it, and none imports
another script (what two scripts need goes here).

  paths    ROOT (the repository), BIN (the built shadowsync: $SS_BUILD_DIR, else build/), here(__file__):
           a script's own folder, where its results are written (results lie beside their experiment)
  data     experiment_data(rows), generated_data(name, rows, ...), ctr_sets(work, rows): the data sets
           of the defaults sweep (generated, generated read as categorical only, the Criteo and Avazu samples)
  jobs     following_job (argv of a following, publishing job), run_job (one job to its JSON result line, kept in a runs file as it ends, so that a crash late
           in a long experiment keeps the runs before it), local_result, run_train, run_pinned,
           result_line, last_json, load_runs
  results  report (a table and its JSON line into DIR/NAME.{md,json}), write_report (a text and JSON
           lines into PREFIX.{txt,json}), run_subcommands, pyplot
  figures  auc, fmt, rows_ne_rows (the table of admission_curve and row_limits_curve)

Scripts find it with sys.path.insert(0, <their folder>/../lib or ../../lib).
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(os.environ.get("SS_BUILD_DIR", os.path.join(ROOT, "build")), "services/cli/shadowsync")
# The real CTR samples, read where they lie and never copied into the repository.
SHARED = os.environ.get("SS_SHARED_DATA", os.path.join(os.path.dirname(ROOT), "shared", "data", "ctr"))


def here(script):
    """The folder of a script (pass __file__): where its results lie."""
    return os.path.dirname(os.path.abspath(script))


# ---------------------------------------------------------------- data


def generated_data(name, rows, test_rows, seed=None):
    """data/NAME-ROWS (train.tsv, test.tsv of test_rows rows), generated once: (train, test) paths."""
    d = os.path.join(ROOT, "data", f"{name}-{rows}")
    if not os.path.exists(os.path.join(d, "teacher.json")):
        subprocess.run([BIN, "gen-data", "--out", d, "--rows", str(rows), "--test-rows", str(test_rows)] +
                       (["--seed", str(seed)] if seed is not None else []), check=True, capture_output=True)
    return os.path.join(d, "train.tsv"), os.path.join(d, "test.tsv")


def experiment_data(rows):
    """data/experiment-ROWS (train.tsv, 100k-row test.tsv), generated once: (train, test) paths."""
    return generated_data("experiment", rows, 100000)


def ctr_sets(work, rows):
    """The defaults sweep's data sets in WORK, each split by row order (the first rows train, the
    rest test: time order, as served): {name: {"data": flags, "dense": dense columns}}.
      gen      generated Criteo-format data (13 dense, 26 categorical), ROWS training rows
      gen-cat  the same files read with a schema that ignores the 13 dense columns
      criteo   SHARED/criteo/train-10k.txt: the first 8,000 rows train, the last 2,000 test
      avazu    SHARED/avazu/train-10k: 8,000 / 1,999 (categorical only, with a header)"""
    sets = {}
    gen = os.path.join(work, "gen")
    subprocess.run([BIN, "gen-data", "--rows", str(rows), "--test-rows", str(max(rows // 4, 10000)), "--out", gen],
                   check=True, capture_output=True)
    sets["gen"] = {"data": ["--train", f"{gen}/train.tsv", "--test", f"{gen}/test.tsv"], "dense": 13}
    schema = os.path.join(work, "gen-cat.schema")
    with open(schema, "w") as f:
        cols = ["label"] + [f"I{i}" for i in range(1, 14)] + [f"C{i}" for i in range(1, 27)]
        f.write("format = csv\ndelimiter = tab\nheader = false\n")
        f.write("columns = " + ", ".join(cols) + "\nlabel = label\ncategorical = *\n")
        f.write("ignore = " + ", ".join(f"I{i}" for i in range(1, 14)) + "\n")
    sets["gen-cat"] = {"data": sets["gen"]["data"] + ["--schema", schema], "dense": 0}
    criteo = os.path.join(SHARED, "criteo", "train-10k.txt")
    avazu = os.path.join(SHARED, "avazu", "train-10k")
    if os.path.exists(criteo):
        with open(criteo, "rb") as f:
            lines = f.readlines()
        _split(work, "criteo", [], lines[:8000], lines[8000:])
        sets["criteo"] = {"data": ["--train", f"{work}/criteo-train.tsv", "--test", f"{work}/criteo-test.tsv"],
                          "dense": 13}
    if os.path.exists(avazu):
        with open(avazu, "rb") as f:
            lines = f.readlines()
        _split(work, "avazu", lines[:1], lines[1:8001], lines[8001:])
        sets["avazu"] = {"data": ["--train", f"{work}/avazu-train.tsv", "--test", f"{work}/avazu-test.tsv",
                                  "--schema", "avazu"], "dense": 0}
    missing = [n for n in ("criteo", "avazu") if n not in sets]
    if missing:
        print(f"note: {', '.join(missing)} sample(s) not found under {SHARED}; swept without them")
    return sets


def _split(work, name, header, train, test):
    for part, rows in (("train", train), ("test", test)):
        with open(os.path.join(work, f"{name}-{part}.tsv"), "wb") as f:
            f.writelines(header + rows)


# ---------------------------------------------------------------- jobs


def last_json(text):
    """The last line of TEXT that starts with "{", parsed; None when there is none or it does not parse."""
    lines = [l for l in text.splitlines() if l.startswith("{")]
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None


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


def local_result(binary, args, label):
    """Runs `BINARY local` with args (warnings only, no progress lines); its result line, parsed.
    Exits with the output on failure."""
    return result_line(subprocess.run([binary, "local", "--log-level", "warn", "--progress-interval", "0"] + args,
                                      capture_output=True, text=True), label)


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


def run_train(job):
    """One `shadowsync train` on one thread, job = (flags, seed): its test AUC, NE and log loss. A run
    that fails (diverged) scores AUC 0.5 and is marked (its error in "failed")."""
    extra, seed = job
    cmd = [BIN, "train", "--threads", "1", "--progress-interval", "0", "--log-level", "warn",
           "--seed", str(seed)] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    r = last_json(p.stdout) or {}
    if p.returncode != 0 or not r.get("ok"):
        return {"auc": 0.5, "ne": float("nan"), "logloss": float("nan"), "failed": r.get("error") or p.stderr[-300:]}
    return {"auc": r["test_auc"], "ne": r["test_ne"], "logloss": r["test_logloss"], "failed": ""}


def following_job(train, limit, publish_dir, interval):
    """argv of a following job that publishes (bench/online): `local --follow` on TRAIN up to LIMIT
    examples, one reader and one trainer (rows train in file order), a publication every INTERVAL s."""
    return [BIN, "local", "--follow", "--train", train, "--follow-limit-examples", str(limit),
            "--trainers", "1", "--readers", "1", "--shards", "1", "--sync", "none",
            "--publish-dir", publish_dir, "--publish-interval", str(interval), "--publish-retain", "100000",
            "--progress-interval", "0", "--log-level", "warn"]


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


# ---------------------------------------------------------------- results


def report(out_dir, name, text, summary):
    """Prints a benchmark's table and its JSON line, and writes them to OUT_DIR/NAME.{md,json}."""
    print(text)
    print(json.dumps(summary))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{name}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(summary, f, indent=1)


def write_report(prefix, text, json_lines):
    """Prints a report's text and its JSON lines (strings), and writes them to PREFIX.txt and
    PREFIX.json (its folder made when missing); with an empty prefix, prints only."""
    print(text)
    for line in json_lines:
        print(line)
    if prefix:
        if os.path.dirname(prefix):
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
        with open(prefix + ".txt", "w") as f:
            f.write(text + "\n")
        with open(prefix + ".json", "w") as f:
            f.write("\n".join(json_lines) + "\n")


def run_subcommands(parser, commands):
    """Parses the arguments of a parser whose subcommand lands in `cmd` and runs it: commands maps
    each name to a function of the parsed arguments; what it returns (None: 0) is the exit status."""
    a = parser.parse_args()
    return commands[a.cmd](a) or 0


def pyplot(what="plots"):
    """matplotlib.pyplot drawing into files (no display); None, said on stderr, when it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib missing (scripts/setup.sh --bench): no {what}", file=sys.stderr)
        return None
    return plt


# ---------------------------------------------------------------- figures


def auc(labels, scores):
    """Exact ROC AUC, ties given their average rank (Mann-Whitney U); NaN without both classes."""
    pairs = sorted(zip(scores, labels))
    pos = sum(1 for l in labels if l > 0.5)
    neg = len(pairs) - pos
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        rank_sum += (i + j + 1) / 2 * sum(1 for _, l in pairs[i:j] if l > 0.5)
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg) if pos and neg else float("nan")


def rows_ne_rows(runs, base, key):
    """Table rows of a bound on a model's rows: each run's stored rows and test NE against `base`'s
    (adds rows_vs_base and ne_vs_base to each run); `key` names the column that tells runs apart."""
    lines = []
    for r in runs:
        r["rows_vs_base"] = r["rows"] / base["rows"] - 1
        r["ne_vs_base"] = r["test_ne"] / base["test_ne"] - 1
        lines.append(f"| {r[key]} | {r['rows']} | {100 * r['rows_vs_base']:+.1f}% | {r['test_ne']:.5f} | "
                     f"{100 * r['ne_vs_base']:+.3f}% | {r['examples_per_sec']:.0f} |")
    return lines


def fmt(x, spec=".1f", none="-"):
    """x formatted by spec, or `none` for None."""
    return none if x is None else format(x, spec)
