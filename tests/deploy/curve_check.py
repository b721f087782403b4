#!/usr/bin/python3
"""Checks that every shadowsync workload runs CURVE with its keys from a Secret volume.

Usage: curve_check.py [--secrets-present] RENDERED.yaml...
       curve_check.py --compose CONFIG.yaml   (the output of `docker-compose config`)

For every container (not init containers) of every Pod template (Deployment, StatefulSet,
DaemonSet, ReplicaSet, Job, CronJob, Pod) in the rendered manifests:
  - the three CURVE options are set, as SHADOWSYNC_CURVE_SERVER_KEY / _CLIENT_KEY /
    _AUTHORIZED_KEYS environment variables or as --curve-server-key / --curve-client-key /
    --curve-authorized-keys in command or args (also inside a `sh -c` string);
  - each path lies in a volume mounted readOnly that is a Secret (a `secret` volume, or a
    `projected` one made only of secrets), holding that file (its `items`, and the Secret's data
    when the Secret is in the output);
  - that volume's mode is one the key loader accepts once the kubelet has applied fsGroup (which
    adds group read): defaultMode (or the item's mode) set, owner-readable, nothing for others, no
    group write or execute (0400, 0440, 0600, 0640); the default 0644 is refused;
  - a pod that runs as a non-root user has securityContext.fsGroup (the Secret files are
    root-owned: without fsGroup a non-root process cannot read a 0440 file);
  - no two workloads share a client key Secret (each workload gets only its own client key).
With --secrets-present every Secret the volumes name must be in the output (an overlay that
generates them); without it (a base) they may come from elsewhere.

With --compose: every service but the one-shot data and key generators (gen-data, keygen) sets
the three options to files of compose secrets it mounts, its client key secret is its own, and
every secret it uses is declared with a file.
Exit status 1 with one line per problem.
"""
import re
import shlex
import sys

from manifests import compose_environment, compose_words, finish, load_compose, load_documents

OPTIONS = {
    "server": ("SHADOWSYNC_CURVE_SERVER_KEY", "--curve-server-key"),
    "client": ("SHADOWSYNC_CURVE_CLIENT_KEY", "--curve-client-key"),
    "authorized": ("SHADOWSYNC_CURVE_AUTHORIZED_KEYS", "--curve-authorized-keys"),
}


def pod_spec(doc):
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        return (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        return (spec.get("template") or {}).get("spec")
    return None


def flag_values(words, flag):
    """Values of --flag=V / --flag V in a list of words, also inside `sh -c` strings."""
    out = []
    for i, w in enumerate(words):
        if not isinstance(w, str):
            continue
        if w.startswith(flag + "="):
            out.append(w[len(flag) + 1:])
        elif w == flag and i + 1 < len(words):
            out.append(words[i + 1])
        elif flag in w and (" " in w or "\n" in w):
            try:
                inner = shlex.split(w)
            except ValueError:
                inner = re.split(r"\s+", w)
            out.extend(flag_values(inner, flag))
    return out


def mode_problem(mode, where):
    if mode is None:
        return f"{where}: no defaultMode: the default 0644 makes the secret key readable by others, which the key loader refuses (use 0440)"
    if not isinstance(mode, int) or mode < 0 or mode > 0o777:
        return f"{where}: mode {mode!r} is not a file mode"
    if not mode & 0o400:
        return f"{where}: mode {mode:04o} is not readable by the owner"
    if mode & 0o037:
        return f"{where}: mode {mode:04o} gives others access or the group write/execute; the key loader accepts at most 0640 for a root-owned file (use 0440)"
    return None


OFFLINE_COMMANDS = {"gen-data", "keygen"}


def report(errors, client_key_users, shared_error, checked, nothing_error, ok_message):
    """The end of both checks: a client key used by more than one service, nothing checked, then
    the errors (exit 1) or the summary line (exit 0)."""
    for name, users in sorted(client_key_users.items(), key=lambda x: str(x[0])):
        if len(users) > 1:
            errors.append(shared_error(name, ", ".join(sorted(users))))
    return finish("curve_check", errors, checked, nothing_error, ok_message)


def check_compose(path):
    doc = load_compose(path)
    declared = doc.get("secrets") or {}
    errors = []
    client_users = {}
    checked = 0
    for svc, c in sorted((doc.get("services") or {}).items()):
        command = compose_words(c.get("command"))
        if command and command[0] in OFFLINE_COMMANDS:
            continue
        checked += 1
        where = f"{path}: service {svc}"
        env = compose_environment(c, None)
        files = {}  # path in the container -> secret name
        for sec in c.get("secrets") or []:
            if isinstance(sec, str):
                sec = {"source": sec}
            target = sec.get("target") or sec.get("source")
            files[target if target.startswith("/") else "/run/secrets/" + target] = sec.get("source")
        for opt, (var, flag) in OPTIONS.items():
            paths = flag_values(list(command), flag)
            if env.get(var):
                paths.append(env[var])
            if not paths:
                errors.append(f"{where}: CURVE not configured: neither {var} nor {flag} is set")
                continue
            for p in paths:
                sname = files.get(p)
                if sname is None:
                    errors.append(f"{where}: {flag} {p}: not a secret this service mounts")
                    continue
                if not (declared.get(sname) or {}).get("file"):
                    errors.append(f"{where}: secret {sname} is not declared with a file")
                if opt == "client":
                    client_users.setdefault(sname, set()).add(svc)
    return report(errors, client_users,
                  lambda sname, users: f"{path}: client key secret {sname} is shared by {users}: each service needs its own",
                  checked, f"{path}: no services to check",
                  f"{checked} compose service(s) run CURVE with their own keys from secrets")


def main(argv):
    secrets_present = False
    files = []
    if argv[:1] == ["--compose"] and len(argv) == 2:
        return check_compose(argv[1])
    for a in argv:
        if a == "--secrets-present":
            secrets_present = True
        elif a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            files.append(a)
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    docs = load_documents(files)
    secrets = {}
    for f, d in docs:
        if d.get("kind") == "Secret":
            keys = set((d.get("data") or {}).keys()) | set((d.get("stringData") or {}).keys())
            secrets[(d.get("metadata") or {}).get("name")] = keys

    errors = []
    client_secret_users = {}
    workloads = 0
    for f, d in docs:
        spec = pod_spec(d)
        if spec is None:
            continue
        workloads += 1
        name = f"{f}: {d.get('kind')}/{(d.get('metadata') or {}).get('name')}"
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        psc = spec.get("securityContext") or {}
        containers = spec.get("containers") or []
        if not containers:
            errors.append(f"{name}: no containers")
        for c in containers:
            where = f"{name} container {c.get('name')}"
            csc = c.get("securityContext") or {}
            run_as = csc.get("runAsUser", psc.get("runAsUser"))
            if run_as not in (None, 0) and psc.get("fsGroup") is None:
                errors.append(f"{where}: runs as uid {run_as} without securityContext.fsGroup: it cannot read the root-owned CURVE Secret files")
            env = {e.get("name"): e.get("value") for e in c.get("env") or [] if isinstance(e, dict)}
            words = list(c.get("command") or []) + list(c.get("args") or [])
            mounts = c.get("volumeMounts") or []
            for opt, (var, flag) in OPTIONS.items():
                paths = flag_values(words, flag)
                if var in env and env[var]:
                    paths.append(env[var])
                if not paths:
                    errors.append(f"{where}: CURVE not configured: neither {var} nor {flag} is set")
                    continue
                path = paths[-1]  # a flag wins over the environment; any of them must be right
                for p in paths:
                    if not p.startswith("/"):
                        errors.append(f"{where}: {flag} {p!r} is not an absolute path into a Secret volume")
                        break
                else:
                    m = None
                    for vm in mounts:
                        mp = (vm.get("mountPath") or "").rstrip("/")
                        if mp and path.startswith(mp + "/") and (m is None or len(mp) > len(m["mountPath"].rstrip("/"))):
                            m = vm
                    if m is None:
                        errors.append(f"{where}: {flag} {path}: no volume is mounted there")
                        continue
                    if not m.get("readOnly"):
                        errors.append(f"{where}: the volume {m.get('name')} holding {path} is not mounted readOnly")
                    if m.get("subPath"):
                        errors.append(f"{where}: {path} comes through a subPath mount (not updated, and not the Secret's own file)")
                    rel = path[len(m["mountPath"].rstrip("/")) + 1:]
                    v = volumes.get(m.get("name"))
                    if v is None:
                        errors.append(f"{where}: volume {m.get('name')} is mounted but not declared")
                        continue
                    sources = []  # (secret name, items, defaultMode)
                    if "secret" in v:
                        s = v["secret"] or {}
                        sources.append((s.get("secretName"), s.get("items"), s.get("defaultMode")))
                    elif "projected" in v:
                        pr = v["projected"] or {}
                        for src in pr.get("sources") or []:
                            if "secret" not in src:
                                errors.append(f"{where}: projected volume {m.get('name')} mixes in a non-Secret source")
                                continue
                            s = src["secret"] or {}
                            sources.append((s.get("name"), s.get("items"), pr.get("defaultMode")))
                    else:
                        errors.append(f"{where}: {path} is on volume {m.get('name')}, which is not a Secret volume")
                        continue
                    found = False
                    for sname, items, default_mode in sources:
                        mode = default_mode
                        if items:
                            item = next((i for i in items if i.get("path") == rel), None)
                            if item is None:
                                continue
                            key = item.get("key")
                            if item.get("mode") is not None:
                                mode = item["mode"]
                        else:
                            key = rel
                            if sname in secrets and key not in secrets[sname]:
                                continue
                        found = True
                        problem = mode_problem(mode, f"{where}: volume {m.get('name')} ({path})")
                        if problem:
                            errors.append(problem)
                        if sname in secrets:
                            if key not in secrets[sname]:
                                errors.append(f"{where}: Secret {sname} has no key {key!r} for {path}")
                        elif secrets_present:
                            errors.append(f"{where}: Secret {sname} (for {path}) is not in the rendered output")
                        if opt == "client":
                            client_secret_users.setdefault(sname, set()).add(name)
                        break
                    if not found:
                        errors.append(f"{where}: no Secret in volume {m.get('name')} provides {rel!r} ({path})")
    return report(errors, client_secret_users,
                  lambda sname, users: f"client key Secret {sname} is shared by {users}: each workload needs its own client key",
                  workloads, f"{' '.join(files)}: no workloads to check",
                  f"{workloads} workload(s) run CURVE with keys from Secret volumes")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
