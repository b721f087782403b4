"""What the deployment checks (curve_check.py, identity_check.py) share: reading the rendered
Kubernetes manifests and `docker-compose config`'s output, and how a check ends."""
import shlex
import sys

import yaml


def load_documents(files):
    """(file, document) for every mapping document of the rendered manifests FILES."""
    docs = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for d in yaml.safe_load_all(fh):
                if isinstance(d, dict):
                    docs.append((f, d))
    return docs


def load_compose(path):
    """The output of `docker-compose config` at PATH, as a mapping."""
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def compose_words(value):
    """A compose service's command or entrypoint as a list of words (a string split as a shell does)."""
    value = value or []
    return shlex.split(value) if isinstance(value, str) else value


def compose_environment(service, unset):
    """A compose service's environment as a mapping; a bare NAME of the list form maps to UNSET."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(e.split("=", 1) if "=" in e else (e, unset) for e in env)
    return env


def finish(tool, errors, checked, nothing_checked, ok_message):
    """The end of a check of CHECKED things (none is the error NOTHING_CHECKED): one line per error
    on stderr (exit status 1), or OK_MESSAGE (0)."""
    if checked == 0:
        errors.append(nothing_checked)
    for e in errors:
        print(f"{tool}: {e}", file=sys.stderr)
    if not errors:
        print(f"{tool}: {ok_message}")
    return 1 if errors else 0
