#!/usr/bin/python3
"""Checks that every shadowsync member pod gets an identity of its own.

Usage: identity_check.py RENDERED.yaml...
       identity_check.py --compose CONFIG.yaml   (the output of `docker-compose config`)

A member registers with the coordinator: a trainer by its name, a shard, reader or sync server by
its --index (its name, by default <command>-<index>, names it in logs, status and metrics). A second
live process that claims a trainer name or an index already held is refused (it exits non-zero, the
holder goes on); a restarted one takes the place once the holder has gone silent. So the pods of
one workload must not share a name or an index.

For every container (not init containers) that runs a shadowsync member in a Pod template
(Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod), the name and the index are
taken from where the service reads them, highest first: --name / --index in command or args (also
inside a `sh -c` string), the SHADOWSYNC_NAME / SHADOWSYNC_INDEX environment variables (env, and
envFrom of a ConfigMap in the output), and the [<command>] / [common] sections of the config file
(SHADOWSYNC_CONFIG or --config in a mounted ConfigMap that is in the output). Then:

  - in a workload of more than one pod (replicas; a Job's parallelism or completions; an HPA's
    maxReplicas; every DaemonSet; a CronJob that may overlap its runs):
      - a name must differ per pod: from the downward API's metadata.name (or metadata.uid,
        status.podIP), $(VAR) of such a variable, or $HOSTNAME in a shell (the pod name when the
        pod sets no spec.hostname); a literal, or a value that is the same in every pod
        (metadata.namespace, spec.nodeName, a ConfigMap or Secret key) is refused; a trainer
        without a name is fine (it makes a unique one of its own: trainer-<host>-<incarnation>);
      - an index must be the pod's ordinal in a StatefulSet (${HOSTNAME##*-} in a shell, or the
        label apps.kubernetes.io/pod-index) or its completion index in an Indexed Job
        (JOB_COMPLETION_INDEX, or the annotation batch.kubernetes.io/job-completion-index), and
        nothing else: a literal or any other value is refused;
  - a shard, reader or sync-server container must have an index at all (the service refuses to
    start without one);
  - across the workloads of one namespace: no literal name twice, and no index of one command held
    by two workloads (a literal index, or the ordinals 0..replicas-1 / completion indexes
    0..completions-1).
A value the check cannot follow (other shell operators, arithmetic) is refused with the accepted
forms named.

With --compose: every service of `docker-compose config`'s output that runs a member is checked in
the same way: a service of more than one replica (deploy.replicas, scale) must not have a literal
name or index, an indexed member must have an index, and no two services may share a literal name
or (command, index).
Exit status 1 with one line per problem.
"""
import re
import shlex
import sys

from manifests import compose_environment, compose_words, finish, load_compose, load_documents

INDEXED = {"shard", "reader", "sync-server"}
MEMBERS = INDEXED | {"trainer"}
COMMANDS = MEMBERS | {"coordinator", "gen-data", "keygen", "status", "snapshot", "export", "predict",
                      "train", "local"}

# Classes of a value, by what it is in each pod of a workload.
LITERAL = "literal"          # the same text in every pod, known here
SHARED = "shared"            # the same in every pod, not known here (ConfigMap, namespace, node)
POD_NAME = "pod-name"        # the pod's name: differs per pod, the same across container restarts
POD = "per-pod"              # differs per pod (uid, IP, a random suffix)
ORDINAL = "ordinal"          # the StatefulSet ordinal: 0..replicas-1, one per pod
COMPLETION = "completion"    # the Indexed Job's completion index: 0..completions-1
UNKNOWN = "unknown"          # a form this check cannot follow
DISTINCT = {POD_NAME, POD, ORDINAL, COMPLETION}

# What a name held twice does: trainers are known by name (the second live one is refused);
# shards, readers and sync servers by index, so the name only blurs logs, status and metrics.
CLASH = {True: "the coordinator refuses every live trainer but the first to register",
         False: "logs, status and metrics could not tell them apart (each registers by its index)"}

ACCEPTED_NAMES = ("the downward API (fieldRef metadata.name), $(POD_NAME) of such a variable, "
                  "or $HOSTNAME in a shell; or no name at all for a trainer")
ACCEPTED_INDEXES = ("the StatefulSet ordinal (--index=\"${HOSTNAME##*-}\" in a shell, or fieldRef "
                    "metadata.labels['apps.kubernetes.io/pod-index']) or the Indexed Job's "
                    "completion index (JOB_COMPLETION_INDEX)")


def pod_template(doc):
    """(pod spec, pods, workload facts) of a workload; pods None = more than one, unbounded."""
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind == "Pod":
        return spec, 1, {"kind": kind}
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        replicas = spec.get("replicas")
        return ((spec.get("template") or {}).get("spec"), 1 if replicas is None else replicas,
                {"kind": kind})
    if kind == "DaemonSet":
        return (spec.get("template") or {}).get("spec"), None, {"kind": kind}
    if kind in ("Job", "CronJob"):
        overlap = False
        if kind == "CronJob":
            overlap = spec.get("concurrencyPolicy", "Allow") == "Allow"
            spec = (spec.get("jobTemplate") or {}).get("spec") or {}
        parallelism = spec.get("parallelism")
        parallelism = 1 if parallelism is None else parallelism
        completions = spec.get("completions")
        pods = max(parallelism, completions if completions is not None else parallelism)
        indexed = spec.get("completionMode") == "Indexed"
        return ((spec.get("template") or {}).get("spec"), None if overlap else pods,
                {"kind": kind, "indexed": indexed,
                 "completions": completions if completions is not None else parallelism})
    return None, 0, {}


def words_of(command_args):
    """Words of command + args; the words of a shell string (one holding whitespace) come out
    split, marked as shell words (a shell expands their variables)."""
    out = []
    for w in command_args:
        if not isinstance(w, str):
            w = str(w)
        if re.search(r"\s", w):
            try:
                inner = shlex.split(w, comments=True)
            except ValueError:
                inner = w.split()
            out.extend((x, True) for x in inner)
        else:
            out.append((w, False))
    return out


def member_command(words, image):
    """The shadowsync command a container runs ('trainer', 'shard', ...) or None."""
    runs_shadowsync = "shadowsync" in (image or "")
    invoked = [words[i + 1][0] for i, (w, _) in enumerate(words[:-1]) if w.rsplit("/", 1)[-1] == "shadowsync"]
    if invoked:  # a shell string may run several commands: the member is the one that matters
        return next((c for c in invoked if c in MEMBERS), invoked[0] if invoked[0] in COMMANDS else None)
    if not runs_shadowsync:
        return words[0][0] if words and words[0][0] in MEMBERS else None
    for w, _ in words:
        if w in COMMANDS:
            return w
        if not w.startswith("-") and not w.startswith("/"):
            return None
    return None


def flag_value(words, flag):
    """(value, shell) of the last --flag=V / --flag V, or None."""
    found = None
    for i, (w, shell) in enumerate(words):
        if w.startswith(flag + "="):
            found = (w[len(flag) + 1:], shell)
        elif w == flag and i + 1 < len(words):
            found = words[i + 1]
    return found


def parse_ini(text):
    """{section: {key: value}} of a shadowsync config file ('' = before any section)."""
    sections = {"": {}}
    current = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        m = re.fullmatch(r"\[([^\]]+)\]", line)
        if m:
            current = m.group(1).strip()
            sections.setdefault(current, {})
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            value = re.split(r"\s[#;]", value, 1)[0]
            sections.setdefault(current, {})[key.strip()] = value.strip()
    return sections


def config_setting(text, command, key):
    """The value of KEY for COMMAND in a config file: its section wins over [common] and the
    lines before any section."""
    s = parse_ini(text)
    for section in (command, "common", ""):
        if key in s.get(section, {}):
            return s[section][key], section
    return None


class Pod:
    """How the variables of one container resolve, per pod of its workload."""

    def __init__(self, spec, container, facts, configmaps):
        self.facts = facts
        self.spec = spec or {}
        self.container = container
        self.configmaps = configmaps
        self.env = {}
        for src in container.get("envFrom") or []:
            # Only a ConfigMap in the output can be read; its keys are the same in every pod.
            data = configmaps.get((src.get("configMapRef") or {}).get("name"))
            for k, v in (data or {}).items():
                self.env[(src.get("prefix") or "") + k] = {"value": v}
        for e in container.get("env") or []:
            if isinstance(e, dict) and e.get("name"):
                self.env[e["name"]] = e

    def builtin(self, name):
        """Variables the runtime sets: HOSTNAME, and JOB_COMPLETION_INDEX in an Indexed Job."""
        if name == "HOSTNAME":
            if self.spec.get("hostname"):
                return LITERAL, self.spec["hostname"], f"$HOSTNAME = spec.hostname {self.spec['hostname']!r}"
            if self.facts.get("kind") == "compose":
                return POD, None, "$HOSTNAME (the container's id)"
            return POD_NAME, None, "$HOSTNAME (the pod name)"
        if name == "JOB_COMPLETION_INDEX" and self.facts.get("indexed"):
            return COMPLETION, None, "JOB_COMPLETION_INDEX (the completion index)"
        return None

    def field_ref(self, name, path):
        path = re.sub(r"\s", "", path or "")
        where = f"{name} (fieldRef {path})"
        if path == "metadata.name":
            return POD_NAME, None, where
        if path in ("metadata.uid", "status.podIP", "status.podIPs"):
            return POD, None, where
        m = re.fullmatch(r"metadata\.(labels|annotations)\[['\"](.+)['\"]\]", path)
        if m and m.group(1) == "labels" and m.group(2) == "apps.kubernetes.io/pod-index" \
                and self.facts.get("kind") == "StatefulSet":
            return ORDINAL, None, where
        if m and m.group(2) == "batch.kubernetes.io/job-completion-index" and self.facts.get("indexed"):
            return COMPLETION, None, where
        return SHARED, None, where

    def variable(self, name, depth=0):
        """(class, literal text or None, where) of an environment variable in this container."""
        e = self.env.get(name)
        if e is None:
            b = self.builtin(name)
            if b:
                return b
            if name == "JOB_COMPLETION_INDEX":
                return LITERAL, "", "$JOB_COMPLETION_INDEX, not set (only an Indexed Job sets it)"
            return LITERAL, "", f"${name}, not set"
        if "valueFrom" not in e:
            cls, lit, where = self.value(str(e.get("value") or ""), shell=False, depth=depth + 1)
            return cls, lit, f"{name}={e.get('value')!r}" + ("" if cls == LITERAL else f" ({where})")
        vf = e.get("valueFrom") or {}
        if "fieldRef" in vf:
            return self.field_ref(name, (vf["fieldRef"] or {}).get("fieldPath"))
        for k in ("configMapKeyRef", "secretKeyRef", "resourceFieldRef"):
            if k in vf:
                return SHARED, None, f"{name} (from a {k})"
        return UNKNOWN, None, f"{name} (valueFrom {sorted(vf)})"

    def reference(self, name, shell, depth):
        """$(NAME): Kubernetes expands it when the container has the variable (the Job controller
        adds JOB_COMPLETION_INDEX to an Indexed Job's containers); else it stays as written."""
        if name in self.env or (name == "JOB_COMPLETION_INDEX" and self.facts.get("indexed")):
            return self.variable(name, depth)
        if shell:
            return UNKNOWN, None, f"$({name}) (not a variable of the container: a shell command substitution)"
        return LITERAL, f"$({name})", f"$({name}) (not a variable of the container: passed as written)"

    def value(self, text, shell, depth=0):
        """(class, literal, where) of a value: $(VAR) references (Kubernetes expands them in env
        values, command and args) and, in a shell word, $VAR, ${VAR}, ${VAR:-x} and
        ${VAR##*-}."""
        if depth > 8:
            return UNKNOWN, None, "references nest too deep"
        parts = []
        pos = 0
        pattern = r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)"
        if shell:
            pattern += r"|\$\{([A-Za-z_][A-Za-z0-9_]*)([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$|`"
        for m in re.finditer(pattern, text):
            if m.start() > pos:
                parts.append((LITERAL, text[pos:m.start()], "text"))
            pos = m.end()
            if m.group(0) == "$$":
                parts.append((LITERAL, "$", "text"))
            elif m.group(1):
                parts.append(self.reference(m.group(1), shell, depth))
            elif m.group(2):
                var, op = m.group(2), m.group(3)
                cls, lit, where = self.variable(var, depth)
                if op == "":
                    parts.append((cls, lit, where))
                elif op.startswith(":-") or op.startswith("-"):
                    default = op.split("-", 1)[1]
                    parts.append((LITERAL, default, where) if cls == LITERAL and not lit else (cls, lit, where))
                elif op == "##*-" and cls == POD_NAME and self.facts.get("kind") == "StatefulSet":
                    parts.append((ORDINAL, None, f"${{{var}##*-}}, the StatefulSet ordinal of {where}"))
                elif op == "##*-" and cls in (POD_NAME, POD):
                    parts.append((POD, None, f"${{{var}##*-}}, the random suffix of {where}"))
                elif op == "##*-" and cls == LITERAL:
                    parts.append((LITERAL, (lit or "").rsplit("-", 1)[-1], where))
                else:
                    parts.append((UNKNOWN, None, f"${{{var}{op}}}"))
            elif m.group(4):
                parts.append(self.variable(m.group(4), depth))
            else:
                parts.append((UNKNOWN, None, f"{m.group(0)!r} in a shell word"))
        if pos < len(text):
            parts.append((LITERAL, text[pos:], "text"))
        real = [p for p in parts if not (p[0] == LITERAL and p[1] == "")]
        if not real:
            return LITERAL, "", parts[0][2] if parts else "an empty value"
        if len(real) == 1:
            return real[0]
        classes = {p[0] for p in real}
        if classes & DISTINCT:
            return POD, None, next(p[2] for p in real if p[0] in DISTINCT)
        if UNKNOWN in classes:
            return UNKNOWN, None, next(p[2] for p in real if p[0] == UNKNOWN)
        if SHARED in classes:
            return SHARED, None, next(p[2] for p in real if p[0] == SHARED)
        return LITERAL, "".join(p[1] for p in real), "text"

    def config_text(self, words):
        """The text of this container's config file, when it is in a ConfigMap in the output."""
        path = None
        f = flag_value(words, "--config")
        if f:
            path = f[0]
        elif self.env.get("SHADOWSYNC_CONFIG"):
            cls, lit, _ = self.variable("SHADOWSYNC_CONFIG")
            path = lit if cls == LITERAL else None
        if not path or not path.startswith("/"):
            return None
        volumes = {v.get("name"): v for v in self.spec.get("volumes") or []}
        best = None
        for vm in self.container.get("volumeMounts") or []:
            mp = (vm.get("mountPath") or "").rstrip("/")
            if mp and path.startswith(mp + "/") and (best is None or len(mp) > len(best[0])):
                best = (mp, vm)
        if best is None:
            return None
        mp, vm = best
        rel = vm.get("subPath") or path[len(mp) + 1:]
        cm = (volumes.get(vm.get("name")) or {}).get("configMap")
        if not cm or cm.get("name") not in self.configmaps:
            return None
        key = rel
        for item in cm.get("items") or []:
            if item.get("path") == rel:
                key = item.get("key")
        return self.configmaps[cm["name"]].get(key)


def setting(pod, words, command, key):
    """(class, literal, where) of --KEY, else SHADOWSYNC_KEY, else the config file, else None."""
    flag = "--" + key
    var = "SHADOWSYNC_" + key.upper().replace("-", "_")
    f = flag_value(words, flag)
    if f:
        cls, lit, where = pod.value(f[0], shell=f[1])
        return cls, lit, f"{flag}={f[0]}" + ("" if cls == LITERAL and lit else f": {where}")
    if var in pod.env:
        return pod.variable(var)
    text = pod.config_text(words)
    if text is not None:
        found = config_setting(text, command, key)
        if found:
            return LITERAL, found[0], f"{key} = {found[0]} in [{found[1] or 'no section'}] of the config file"
    return None


def same_or_unknown(where, what, cls, src, accepted):
    """The error for a name or index (WHAT) that is the same in every pod (SHARED) or in a form
    this check cannot follow."""
    if cls == SHARED:
        return f"{where}: the {what}, {src}, is the same in every pod; use {accepted}"
    return f"{where}: the {what}, {src}, is a form this check cannot follow; use {accepted}"


def pods_text(pods):
    return "an unbounded number of pods" if pods is None else f"{pods} pods"


def check_kubernetes(files):
    docs = load_documents(files)
    configmaps = {}
    hpa_max = {}
    for f, d in docs:
        meta = d.get("metadata") or {}
        if d.get("kind") == "ConfigMap":
            configmaps[meta.get("name")] = {k: str(v) for k, v in (d.get("data") or {}).items()}
        if d.get("kind") == "HorizontalPodAutoscaler":
            ref = (d.get("spec") or {}).get("scaleTargetRef") or {}
            hpa_max[(meta.get("namespace", ""), ref.get("kind"), ref.get("name"))] = \
                (d.get("spec") or {}).get("maxReplicas")

    errors = []
    literal_names = {}   # (namespace, name) -> [workload]
    index_holders = {}   # (namespace, command) -> [(workload, set of indexes)]
    members = 0
    for f, d in docs:
        spec, pods, facts = pod_template(d)
        if spec is None:
            continue
        meta = d.get("metadata") or {}
        ns = meta.get("namespace", "")
        workload = f"{d.get('kind')}/{meta.get('name')}"
        hpa = hpa_max.get((ns, d.get("kind"), meta.get("name")))
        if hpa is not None and pods is not None:
            pods = max(pods, hpa)
        multi = pods is None or pods > 1
        for c in spec.get("containers") or []:
            words = words_of(list(c.get("command") or []) + list(c.get("args") or []))
            command = member_command(words, c.get("image"))
            if command not in MEMBERS:
                continue
            members += 1
            where = f"{f}: {workload} container {c.get('name')} ({command}, {pods_text(pods)})"
            pod = Pod(spec, c, facts, configmaps)

            name = setting(pod, words, command, "name")
            if name is not None:
                cls, lit, src = name
                if multi and cls not in DISTINCT:
                    if cls == LITERAL:
                        errors.append(f"{where}: every pod is named {lit!r} ({src}): "
                                      f"{CLASH[command == 'trainer']}; give each pod its own name: {ACCEPTED_NAMES}")
                    else:
                        errors.append(same_or_unknown(where, "name", cls, src, ACCEPTED_NAMES))
                if cls == LITERAL:
                    literal_names.setdefault((ns, lit), []).append((workload, command))

            if command in INDEXED:
                index = setting(pod, words, command, "index")
                if index is None:
                    errors.append(f"{where}: no --index (SHADOWSYNC_INDEX): a {command} refuses to start "
                                  f"without one; use {ACCEPTED_INDEXES}")
                    continue
                cls, lit, src = index
                held = None
                if cls == LITERAL and not lit:
                    errors.append(f"{where}: the index, {src}, is empty; use {ACCEPTED_INDEXES}")
                elif cls == LITERAL:
                    if multi:
                        errors.append(f"{where}: every pod claims {command} index {lit!r} ({src}): the "
                                      f"second live one is refused; use {ACCEPTED_INDEXES}")
                    elif re.fullmatch(r"\d+", lit or ""):
                        held = {int(lit)}
                elif cls == ORDINAL:
                    held = set(range(pods if pods is not None else 0))
                elif cls == COMPLETION:
                    held = set(range(facts.get("completions") or 0))
                elif cls == POD:
                    errors.append(f"{where}: the index, {src}, differs per pod but is not an index "
                                  f"(0, 1, ...); use {ACCEPTED_INDEXES}")
                else:
                    errors.append(same_or_unknown(where, "index", cls, src, ACCEPTED_INDEXES))
                if held:
                    index_holders.setdefault((ns, command), []).append((workload, held))

    for (ns, lit), users in sorted(literal_names.items()):
        if len(users) > 1:
            errors.append(f"name {lit!r} is given to {', '.join(u for u, _ in users)}"
                          f"{' in namespace ' + ns if ns else ''}: {CLASH[any(c == 'trainer' for _, c in users)]}")
    for (ns, command), holders in sorted(index_holders.items()):
        for i in range(len(holders)):
            for j in range(i + 1, len(holders)):
                both = holders[i][1] & holders[j][1]
                if both:
                    errors.append(f"{command} index {', '.join(map(str, sorted(both)))} is held by both {holders[i][0]} and "
                                  f"{holders[j][0]}{' in namespace ' + ns if ns else ''}")
    return finish("identity_check", errors, members, f"{' '.join(files)}: no shadowsync member containers to check",
                  f"{members} member workload(s): every pod has a name and index of its own")


def check_compose(path):
    doc = load_compose(path)
    errors = []
    literal_names = {}
    indexes = {}
    members = 0
    for svc, c in sorted((doc.get("services") or {}).items()):
        words = words_of(list(compose_words(c.get("entrypoint"))) + list(compose_words(c.get("command"))))
        role = member_command(words, c.get("image"))
        if role not in MEMBERS:
            continue
        members += 1
        replicas = max(int((c.get("deploy") or {}).get("replicas") or 1), int(c.get("scale") or 1))
        where = f"{path}: service {svc} ({role}, {replicas} replica(s))"
        env = compose_environment(c, "")
        spec = {"hostname": c.get("hostname")} if c.get("hostname") else {}
        pod = Pod(spec, {"env": [{"name": k, "value": "" if v is None else str(v)} for k, v in env.items()]},
                  {"kind": "compose"}, {})
        name = setting(pod, words, role, "name")
        if name is not None:
            cls, lit, src = name
            if replicas > 1 and cls not in DISTINCT:
                errors.append(f"{where}: every replica is named {lit!r} ({src}): {CLASH[role == 'trainer']}")
            if cls == LITERAL:
                literal_names.setdefault(lit, []).append((svc, role))
        if role in INDEXED:
            index = setting(pod, words, role, "index")
            if index is None:
                errors.append(f"{where}: no --index (SHADOWSYNC_INDEX): a {role} refuses to start without one")
                continue
            cls, lit, src = index
            if replicas > 1:
                errors.append(f"{where}: its replicas share index {lit if cls == LITERAL else src!r}: give each "
                              f"index a service of its own")
            elif cls == LITERAL:
                indexes.setdefault((role, lit), []).append(svc)
            else:
                errors.append(f"{where}: index from {src}: not a literal index")
    for lit, users in sorted(literal_names.items()):
        if len(users) > 1:
            errors.append(f"{path}: name {lit!r} is given to services {', '.join(u for u, _ in users)}: "
                          f"{CLASH[any(r == 'trainer' for _, r in users)]}")
    for (role, lit), users in sorted(indexes.items()):
        if len(users) > 1:
            errors.append(f"{path}: {role} index {lit} is given to services {', '.join(users)}: the second live one "
                          f"to register is refused")
    return finish("identity_check", errors, members, f"{path}: no member services to check",
                  f"{members} compose member service(s), each with a name and index of its own")


def main(argv):
    if argv[:1] == ["--compose"] and len(argv) == 2:
        return check_compose(argv[1])
    if not argv or any(a.startswith("-") for a in argv):
        print(__doc__, file=sys.stderr)
        return 2
    return check_kubernetes(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
