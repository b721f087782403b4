#!/usr/bin/python3
"""Structural check of a kustomize tree, and the list of files to validate.

Usage: kustomize_files.py [--placeholders] DIR...   (each DIR holds a kustomization.yaml)

Every entry of resources, bases, patchesStrategicMerge, patches[].path and configMapGenerator /
secretGenerator files must exist (a directory entry must hold a kustomization.yaml, checked in
turn); every YAML file next to a kustomization.yaml must be used by it. Prints one line per
manifest file: "full PATH" (a resource: whole objects) or "partial PATH" (a strategic merge
patch). Exit status 1 when something is missing or unused. This complements `kubectl kustomize`,
which renders the tree (and is the only check of how patches merge).

--placeholders: a secretGenerator file that does not exist (key material, never committed: the
CURVE keys of shadowsync keygen) is created with placeholder text instead of being an error, so
that the tree renders. Use it on a scratch copy of the tree only (scripts/validate-deploy.sh).
"""
import os
import sys

import yaml

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def find_kustomization(d):
    for n in KUSTOMIZATION_NAMES:
        if os.path.isfile(os.path.join(d, n)):
            return os.path.join(d, n)
    return None


def walk(d, out, errors, seen):
    d = os.path.normpath(d)
    if d in seen:
        return
    seen.add(d)
    kfile = find_kustomization(d)
    if not kfile:
        errors.append(f"{d}: no kustomization.yaml")
        return
    with open(kfile, encoding="utf-8") as f:
        k = yaml.safe_load(f) or {}
    if not isinstance(k, dict):
        errors.append(f"{kfile}: not a mapping")
        return
    known = {"apiVersion", "kind", "resources", "bases", "patchesStrategicMerge", "patches",
             "images", "namespace", "namePrefix", "nameSuffix", "commonLabels", "labels",
             "commonAnnotations", "configMapGenerator", "secretGenerator", "generatorOptions",
             "replicas", "components", "patchesJson6902"}
    for key in k:
        if key not in known:
            errors.append(f"{kfile}: unknown kustomization field '{key}'")
    used = set()

    def entry(rel, role):
        p = os.path.normpath(os.path.join(d, rel))
        if os.path.isdir(p):
            walk(p, out, errors, seen)
        elif os.path.isfile(p):
            used.add(p)
            out.append((role, p))
        else:
            errors.append(f"{kfile}: {rel} does not exist")

    for rel in (k.get("resources") or []) + (k.get("bases") or []) + (k.get("components") or []):
        entry(rel, "full")
    for rel in k.get("patchesStrategicMerge") or []:
        entry(rel, "partial")
    for p in k.get("patches") or []:
        if isinstance(p, dict) and "path" in p:
            entry(p["path"], "partial")
    for kind in ("configMapGenerator", "secretGenerator"):
        for gen in k.get(kind) or []:
            for f in gen.get("files") or []:
                rel = f.split("=", 1)[-1]
                p = os.path.normpath(os.path.join(d, rel))
                if not os.path.isfile(p):
                    if PLACEHOLDERS and kind == "secretGenerator":
                        os.makedirs(os.path.dirname(p), exist_ok=True)
                        with open(p, "w", encoding="utf-8") as fh:
                            fh.write("# placeholder for validation: not a key\n")
                    else:
                        errors.append(f"{kfile}: generator file {rel} does not exist")
                used.add(p)
    for n in sorted(os.listdir(d)):
        p = os.path.normpath(os.path.join(d, n))
        if n.endswith((".yaml", ".yml")) and p != os.path.normpath(kfile) and p not in used:
            errors.append(f"{p}: not referenced by {kfile}")


PLACEHOLDERS = False


def main(argv):
    global PLACEHOLDERS
    if argv[:1] == ["--placeholders"]:
        PLACEHOLDERS = True
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out, errors, seen = [], [], set()
    for d in argv:
        walk(d, out, errors, seen)
    done = set()
    for role, p in out:
        if (role, p) not in done:
            done.add((role, p))
            print(role, p)
    for e in errors:
        print(f"kustomize_files: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
