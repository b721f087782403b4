#!/usr/bin/python3
"""Strict field check of Kubernetes manifests against the official API models.

Usage: k8s_strict.py [--partial] FILE.yaml...   ('-' reads stdin)

Every document's apiVersion/kind is looked up in the Kubernetes Python client (Debian package
python3-kubernetes, whose models are generated from the Kubernetes OpenAPI spec), and every field,
at every depth, must be a field of that model with the right shape (object, list, map or scalar):
a misspelled or misplaced field fails, as `kubectl apply --validate=strict` would. Value types,
required fields and enums are checked by validate-k8s.js (JSON schema); --partial marks strategic
merge patches, which are checked here only. Exit status 1 when any document has an error.
"""
import re
import sys

import yaml
from kubernetes import client

MODELS = client.models
PRIMITIVES = {"str", "int", "float", "bool", "date", "datetime", "object"}


def model_for(api_version, kind):
    version = api_version.split("/")[-1]
    name = version[:1].upper() + version[1:] + kind
    return getattr(MODELS, name, None)


def check(value, type_name, path, errors):
    if value is None:
        return
    if type_name == "object":  # IntOrString, RawExtension: anything goes
        return
    if type_name in PRIMITIVES:
        if isinstance(value, (dict, list)):
            errors.append(f"{path}: expected a {type_name}, got a {type(value).__name__}")
        return
    m = re.fullmatch(r"list\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list, got {type(value).__name__}")
            return
        for i, item in enumerate(value):
            check(item, m.group(1), f"{path}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if m:
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a map, got {type(value).__name__}")
            return
        for key, item in value.items():
            check(item, m.group(1), f"{path}.{key}", errors)
        return
    model = getattr(MODELS, type_name, None)
    if model is None:
        errors.append(f"{path}: unknown model type {type_name}")
        return
    if not isinstance(value, dict):
        errors.append(f"{path}: expected an object ({type_name}), got {type(value).__name__}")
        return
    fields = {json_name: attr for attr, json_name in model.attribute_map.items()}
    for key, item in value.items():
        if key not in fields:
            close = [f for f in fields if f.lower() == str(key).lower()]
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            errors.append(f"{path}: unknown field '{key}' in {type_name}{hint}")
            continue
        check(item, model.openapi_types[fields[key]], f"{path}.{key}", errors)


def main(argv):
    partial = "--partial" in argv
    files = [a for a in argv if a != "--partial"]
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    checked = 0
    for name in files:
        text = sys.stdin.read() if name == "-" else open(name, encoding="utf-8").read()
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError as e:
            print(f"{name}: not YAML: {e}")
            failed += 1
            continue
        for i, doc in enumerate(docs):
            where = f"{name}#{i}"
            if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
                print(f"{where}: not a Kubernetes object (apiVersion and kind are required)")
                failed += 1
                continue
            model = model_for(doc["apiVersion"], doc["kind"])
            if model is None:
                print(f"{where}: unknown apiVersion/kind {doc['apiVersion']} {doc['kind']}")
                failed += 1
                continue
            errors = []
            check(doc, model.__name__, doc["kind"], errors)
            meta = doc.get("metadata") or {}
            if not partial and not meta.get("name"):
                errors.append(f"{doc['kind']}.metadata.name: required")
            for e in errors:
                print(f"{where} ({doc['kind']}/{meta.get('name', '?')}): {e}")
            failed += bool(errors)
            checked += 1
    print(f"k8s_strict: {checked} object(s) checked, {failed} with errors")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
