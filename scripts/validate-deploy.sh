#!/usr/bin/env bash
# Validates the deployment files with real tools and schemas (the CI check of docker/ and deploy/):
#
#   1. docker/compose.yaml: `docker-compose config` (Debian's docker-compose 1.29, or the
#      `docker compose` v2 plugin) checks it against the Compose file schema;
#   2. every kustomization under deploy/: tests/deploy/kustomize_files.py checks that every file it
#      names exists and every YAML file is used, and `kubectl kustomize` renders it (Debian 12's
#      kubernetes-client 1.20 embeds kustomize v2; newer kubectl works too);
#   3. every manifest file, and every rendered kustomization, against the Kubernetes API schemas:
#      tests/deploy/validate-k8s.js (npm kubernetes-models: the official OpenAPI schemas compiled
#      to JSON-schema validators: types, required fields, enums, formats) and
#      tests/deploy/k8s_strict.py (python3-kubernetes models: unknown or misplaced fields);
#   4. CURVE everywhere (tests/deploy/curve_check.py): every compose service and every container of
#      every rendered workload has the three --curve-* options (SHADOWSYNC_CURVE_* variables) set
#      to its own keys from secrets (compose secrets; Secret volumes mounted read-only with a mode
#      the key loader accepts, fsGroup for non-root pods), and an overlay that generates the
#      Secrets really has them;
#   5. a distinct identity for every member pod (tests/deploy/identity_check.py): in a workload of
#      more than one pod no fixed --name / SHADOWSYNC_NAME (trainers: the pod name from the
#      downward API, or none) and no fixed --index (the StatefulSet ordinal or the Indexed Job's
#      completion index); no name or index held by two compose services or two workloads.
# The kustomize trees are checked in a scratch copy without their git-ignored curve-keys/
# directories: the key files a secretGenerator names are placeholders there, so the trees render
# without real keys and no key is read or copied.
#
#   scripts/validate-deploy.sh              validate
#   scripts/validate-deploy.sh --self-test  validate, then prove that each validator rejects
#                                           deliberately broken copies (what ctest runs)
#
# Debian 12 packages: docker-compose kubernetes-client python3-kubernetes python3-yaml nodejs npm.
# The npm packages (tests/deploy/package-lock.json) are installed once with `npm ci` into
# $SS_DEPLOY_TOOLS (default ~/.cache/shadowsync/deploy-validate); that needs the npm registry the
# first time only. A missing tool makes the script exit 77 (ctest: skipped), or 1 with
# SS_DEPLOY_REQUIRE_TOOLS=1 (set it in CI).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SELF_TEST=0
for arg in "$@"; do
  case "$arg" in
    --self-test) SELF_TEST=1 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "validate-deploy: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
cd "$ROOT"
PY=/usr/bin/python3
TOOLS=${SS_DEPLOY_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/shadowsync/deploy-validate}
DRIVER="$ROOT/tests/deploy"

missing() {
  echo "validate-deploy: $1 (Debian 12: apt-get install $2)" >&2
  if [ "${SS_DEPLOY_REQUIRE_TOOLS:-0}" = 1 ]; then exit 1; fi
  echo "validate-deploy: SKIPPED (set SS_DEPLOY_REQUIRE_TOOLS=1 to make this an error)" >&2
  exit 77
}

# --- tools ---------------------------------------------------------------------------------------
if command -v docker-compose >/dev/null 2>&1; then
  COMPOSE=(docker-compose)
elif docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
else
  missing "neither docker-compose nor 'docker compose' found" docker-compose
fi
KUBECTL=${KUBECTL:-kubectl}
command -v "$KUBECTL" >/dev/null 2>&1 || missing "kubectl not found (for kubectl kustomize)" kubernetes-client
if ! { [ -x "$PY" ] && "$PY" -c 'import yaml, kubernetes' 2>/dev/null; }; then
  missing "$PY cannot import yaml and kubernetes" "python3-yaml python3-kubernetes"
fi
command -v node >/dev/null 2>&1 || missing "node not found" nodejs
command -v npm >/dev/null 2>&1 || missing "npm not found" npm

# npm packages, pinned by the lock file; reinstalled when the lock file changes.
lock_sum=$(sha256sum "$DRIVER/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$TOOLS/.lock-sha256" 2>/dev/null || true)" != "$lock_sum" ] || [ ! -d "$TOOLS/node_modules/kubernetes-models" ]; then
  mkdir -p "$TOOLS"
  cp "$DRIVER/package.json" "$DRIVER/package-lock.json" "$TOOLS/"
  echo "validate-deploy: npm ci into $TOOLS"
  if ! (cd "$TOOLS" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    echo "validate-deploy: npm ci failed (the npm registry is needed once)" >&2
    if [ "${SS_DEPLOY_REQUIRE_TOOLS:-0}" = 1 ]; then exit 1; fi
    exit 77
  fi
  echo "$lock_sum" > "$TOOLS/.lock-sha256"
fi
export NODE_PATH="$TOOLS/node_modules"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-validate.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

schema() { node "$DRIVER/validate-k8s.js" "$@"; }
strict() { "$PY" "$DRIVER/k8s_strict.py" "$@"; }
curve() { "$PY" "$DRIVER/curve_check.py" "$@"; }
identity() { "$PY" "$DRIVER/identity_check.py" "$@"; }
kustomize() { "$KUBECTL" kustomize "$1" 2> "$WORK/kustomize.err" \
                || { grep -v "^# Warning: '.*' is deprecated" "$WORK/kustomize.err" >&2; return 1; }; }
compose_config() { "${COMPOSE[@]}" -f "$1" config -q; }
compose_curve() { "${COMPOSE[@]}" -f "$1" config > "$WORK/compose-config.yaml" && curve --compose "$WORK/compose-config.yaml"; }
compose_identity() { "${COMPOSE[@]}" -f "$1" config > "$WORK/compose-identity.yaml" && identity --compose "$WORK/compose-identity.yaml"; }

FAILED=0
step() { printf '== %s\n' "$*"; }
fail() { echo "validate-deploy: FAILED: $*" >&2; FAILED=1; }

# --- 1. compose ------------------------------------------------------------------------------------
step "compose: ${COMPOSE[*]} config docker/compose.yaml"
compose_config docker/compose.yaml || fail "docker/compose.yaml"
step "compose: CURVE on every service"
compose_curve docker/compose.yaml || fail "CURVE in docker/compose.yaml"
step "compose: a name and index of its own for every member"
compose_identity docker/compose.yaml || fail "member identities in docker/compose.yaml"

# --- 2 and 3. kustomize trees and manifests ------------------------------------------------------------
TREE="$WORK/tree"
mkdir -p "$TREE"
tar -C "$ROOT" --exclude=curve-keys -cf - deploy | tar -C "$TREE" -xf -
pushd "$TREE" > /dev/null
mapfile -t KDIRS < <(find deploy -name kustomization.yaml -printf '%h\n' | sort)
[ ${#KDIRS[@]} -gt 0 ] || fail "no kustomization.yaml under deploy/"
step "kustomize trees: ${KDIRS[*]} (generated key files: placeholders)"
"$PY" "$DRIVER/kustomize_files.py" --placeholders "${KDIRS[@]}" > "$WORK/files" || fail "kustomize file references"
mapfile -t FULL < <(awk '$1 == "full" {print $2}' "$WORK/files")
mapfile -t PARTIAL < <(awk '$1 == "partial" {print $2}' "$WORK/files")

step "manifests (${#FULL[@]} files): Kubernetes schemas and strict fields"
if [ ${#FULL[@]} -gt 0 ]; then
  schema "${FULL[@]}" || fail "schema validation of ${FULL[*]}"
  strict "${FULL[@]}" || fail "strict field check of ${FULL[*]}"
fi
step "patches (${#PARTIAL[@]} files): schemas (partial) and strict fields"
if [ ${#PARTIAL[@]} -gt 0 ]; then
  schema --partial "${PARTIAL[@]}" || fail "schema validation of ${PARTIAL[*]}"
  strict --partial "${PARTIAL[@]}" || fail "strict field check of ${PARTIAL[*]}"
fi
for d in "${KDIRS[@]}"; do
  step "rendered: $KUBECTL kustomize $d"
  out="$WORK/rendered-$(echo "$d" | tr / _).yaml"
  if kustomize "$d" > "$out"; then
    schema "$out" || fail "schema validation of the rendered $d"
    strict "$out" || fail "strict field check of the rendered $d"
    # A kustomization that generates Secrets must hold every Secret its workloads mount.
    generated=()
    grep -q '^secretGenerator:' "$d/kustomization.yaml" && generated=(--secrets-present)
    curve "${generated[@]}" "$out" || fail "CURVE keys of the rendered $d"
    identity "$out" || fail "member identities of the rendered $d"
  else
    fail "kubectl kustomize $d"
  fi
done
popd > /dev/null

if [ "$FAILED" != 0 ]; then
  echo "validate-deploy: FAILED" >&2
  exit 1
fi
echo "validate-deploy: compose file and ${#KDIRS[@]} kustomization(s) valid"
[ "$SELF_TEST" = 1 ] || exit 0

# --- self-test: every validator must reject a broken copy ---------------------------------------
step "self-test: broken copies must be rejected"
ST=0
expect_reject() {  # NAME COMMAND...
  local name=$1; shift
  if "$@" > "$WORK/reject.log" 2>&1; then
    echo "self-test: NOT rejected: $name" >&2; sed 's/^/    /' "$WORK/reject.log" >&2; ST=1
  else
    echo "self-test: rejected as expected: $name: $( (grep -iE 'error|invalid|unknown|must|not exist' "$WORK/reject.log" || cat "$WORK/reject.log") | head -1)"
  fi
}
mutate() {  # SRC DST PYTHON-EXPR-ON-s (a string replacement that must apply)
  "$PY" - "$1" "$2" "$3" <<'EOF'
import sys
src, dst, expr = sys.argv[1:4]
s = open(src, encoding="utf-8").read()
t = eval(expr)
assert t != s, f"mutation {expr!r} did not change {src}"
open(dst, "w", encoding="utf-8").write(t)
EOF
}
B="$WORK/broken"; mkdir -p "$B"

mutate docker/compose.yaml "$B/compose-field.yaml" \
  's.replace("    restart: \"no\"\n", "    restart: \"no\"\n    restart_policy: always\n", 1)'
expect_reject "compose: unknown service field" compose_config "$B/compose-field.yaml"
mutate docker/compose.yaml "$B/compose-type.yaml" 's.replace("stop_grace_period: 60s", "stop_grace_period: [60s]", 1)'
expect_reject "compose: wrong type" compose_config "$B/compose-type.yaml"

mutate deploy/base/shards.yaml "$B/field.yaml" 's.replace("imagePullPolicy:", "imagePulPolicy:", 1)'
expect_reject "manifest: misspelled field (strict)" strict "$B/field.yaml"
mutate deploy/base/shards.yaml "$B/place.yaml" 's.replace("      terminationGracePeriodSeconds:", "      replicas: 3\n      terminationGracePeriodSeconds:", 1)'
expect_reject "manifest: field in the wrong object (strict)" strict "$B/place.yaml"
mutate deploy/base/readers.yaml "$B/type.yaml" 's.replace("containerPort: 5557", "containerPort: reader-port", 1)'
expect_reject "manifest: wrong type (schema)" schema "$B/type.yaml"
mutate deploy/base/shards.yaml "$B/enum.yaml" 's.replace("podManagementPolicy: Parallel", "podManagementPolicy: AllAtOnce", 1)'
expect_reject "manifest: value not in enum (schema)" schema "$B/enum.yaml"
mutate deploy/base/shards.yaml "$B/required.yaml" 's.replace("  serviceName: shard\n", "", 1)'
expect_reject "manifest: missing required field (schema)" schema "$B/required.yaml"
mutate deploy/overlays/example/small-resources.yaml "$B/patch.yaml" 's.replace("requests:", "request:", 1)'
expect_reject "overlay patch: misspelled field (strict)" strict --partial "$B/patch.yaml"

mutate docker/compose.yaml "$B/compose-nokey.yaml" 's.replace("      - {source: trainer-1-key, target: client.key}\n", "", 1)'
expect_reject "compose: a service without its client key secret (curve)" compose_curve "$B/compose-nokey.yaml"
mutate docker/compose.yaml "$B/compose-shared.yaml" 's.replace("{source: trainer-1-key, target: client.key}", "{source: trainer-0-key, target: client.key}", 1)'
expect_reject "compose: two services share a client key (curve)" compose_curve "$B/compose-shared.yaml"
mutate docker/compose.yaml "$B/compose-noenv.yaml" 's.replace("  SHADOWSYNC_CURVE_AUTHORIZED_KEYS: /run/secrets/authorized_keys\n", "", 1)'
expect_reject "compose: no --curve-authorized-keys (curve)" compose_curve "$B/compose-noenv.yaml"

mutate deploy/base/shards.yaml "$B/nomount.yaml" 's.replace("            - name: curve-member\n              mountPath: /etc/shadowsync-curve/member\n              readOnly: true\n", "", 1)'
expect_reject "manifest: CURVE key volume not mounted (curve)" curve "$B/nomount.yaml"
mutate deploy/base/readers.yaml "$B/noflag.yaml" 's.replace("            - name: SHADOWSYNC_CURVE_CLIENT_KEY\n              value: /etc/shadowsync-curve/member/client.key\n", "", 1)'
expect_reject "manifest: no --curve-client-key (curve)" curve "$B/noflag.yaml"
mutate deploy/base/coordinator.yaml "$B/mode.yaml" 's.replace("defaultMode: 288", "defaultMode: 420", 1)'
expect_reject "manifest: CURVE Secret readable by others, mode 0644 (curve)" curve "$B/mode.yaml"
mutate deploy/base/trainers.yaml "$B/nofsgroup.yaml" 's.replace("        fsGroup: 10001\n", "", 1)'
expect_reject "manifest: non-root pod without fsGroup cannot read the keys (curve)" curve "$B/nofsgroup.yaml"
cp -r "$TREE/deploy" "$B/deploy-nosecret"
mutate "$TREE/deploy/overlays/example/kustomization.yaml" "$B/deploy-nosecret/overlays/example/kustomization.yaml" \
  's.replace("  - name: shadowsync-curve-trainer\n    files:\n      - client.key=curve-keys/trainer.key\n", "", 1)'
kustomize "$B/deploy-nosecret/overlays/example" > "$B/nosecret.yaml" || { echo "self-test: cannot render the overlay without a Secret" >&2; ST=1; }
expect_reject "overlay: a mounted CURVE Secret is not generated (curve)" curve --secrets-present "$B/nosecret.yaml"

# Identities: every pod of a workload of several pods needs a name and an index of its own.
expect_accept() {  # NAME COMMAND...: a variant the check must let through
  local name=$1; shift
  if "$@" > "$WORK/accept.log" 2>&1; then
    echo "self-test: accepted as expected: $name"
  else
    echo "self-test: NOT accepted: $name" >&2; sed 's/^/    /' "$WORK/accept.log" >&2; ST=1
  fi
}
POD_NAME_ENV='"            - name: SHADOWSYNC_NAME\n              valueFrom:\n                fieldRef:\n                  fieldPath: metadata.name\n"'
mutate deploy/base/trainers.yaml "$B/name-env.yaml" \
  "s.replace($POD_NAME_ENV, \"            - name: SHADOWSYNC_NAME\n              value: trainer\n\", 1)"
expect_reject "manifest: every trainer pod named 'trainer' by SHADOWSYNC_NAME (identity)" identity "$B/name-env.yaml"
mutate deploy/base/trainers.yaml "$B/name-flag.yaml" 's.replace("            - trainer\n", "            - trainer\n            - --name=trainer\n", 1)'
expect_reject "manifest: every trainer pod named by --name=trainer (identity)" identity "$B/name-flag.yaml"
mutate deploy/base/trainers.yaml "$B/name-ns.yaml" 's.replace("fieldPath: metadata.name", "fieldPath: metadata.namespace", 1)'
expect_reject "manifest: trainer name from a downward API field the same in every pod (identity)" identity "$B/name-ns.yaml"
mutate deploy/base/shards.yaml "$B/index-fixed.yaml" 's.replace("--index=\"${HOSTNAME##*-}\"", "--index=0", 1)'
expect_reject "manifest: every shard pod claims --index=0 (identity)" identity "$B/index-fixed.yaml"
mutate deploy/base/shards.yaml "$B/index-deployment.yaml" 's.replace("kind: StatefulSet", "kind: Deployment", 1)'
expect_reject "manifest: shard index from a Deployment's pod name, not an ordinal (identity)" identity "$B/index-deployment.yaml"
mutate deploy/base/readers.yaml "$B/index-notindexed.yaml" 's.replace("  completionMode: Indexed\n", "", 1)'
expect_reject "manifest: reader Job not Indexed, JOB_COMPLETION_INDEX unset (identity)" identity "$B/index-notindexed.yaml"
mutate deploy/base/shards.yaml "$B/index-twice.yaml" \
  's + "---\n" + s[s.index("apiVersion: apps/v1"):].replace("  name: shard\n", "  name: shard-extra\n", 1)'
expect_reject "manifest: two StatefulSets hold the same shard ordinals (identity)" identity "$B/index-twice.yaml"
cp -r "$TREE/deploy" "$B/deploy-ininame"
mutate "$TREE/deploy/base/trainers.yaml" "$B/deploy-ininame/base/trainers.yaml" "s.replace($POD_NAME_ENV, \"\", 1)"
mutate "$TREE/deploy/overlays/example/config.yaml" "$B/deploy-ininame/overlays/example/config.yaml" \
  's.replace("    [trainer]\n", "    [trainer]\n    name = trainer\n", 1)'
kustomize "$B/deploy-ininame/overlays/example" > "$B/ininame.yaml" 2>/dev/null || { echo "self-test: cannot render the overlay with a name in its config" >&2; ST=1; }
expect_reject "overlay: a fixed trainer name in the ConfigMap's [trainer] (identity)" identity "$B/ininame.yaml"
mutate docker/compose.yaml "$B/compose-samename.yaml" 's.replace("[trainer, --threads=1,", "[trainer, --name=trainer, --threads=1,")'
expect_reject "compose: two trainers named 'trainer' (identity)" compose_identity "$B/compose-samename.yaml"
mutate docker/compose.yaml "$B/compose-sameindex.yaml" 's.replace("[shard, --index=1,", "[shard, --index=0,", 1)'
expect_reject "compose: two shard services with --index=0 (identity)" compose_identity "$B/compose-sameindex.yaml"
mutate docker/compose.yaml "$B/compose-replicas.yaml" 's.replace("  reader-0:\n    <<: *service\n", "  reader-0:\n    <<: *service\n    deploy: {replicas: 2}\n", 1)'
expect_reject "compose: a reader service of 2 replicas with one --index (identity)" compose_identity "$B/compose-replicas.yaml"
mutate deploy/base/trainers.yaml "$B/name-none.yaml" "s.replace($POD_NAME_ENV, \"\", 1)"
expect_accept "manifest: trainers without a name (each makes its own)" identity "$B/name-none.yaml"
mutate deploy/base/trainers.yaml "$B/name-var.yaml" \
  "s.replace($POD_NAME_ENV, $POD_NAME_ENV.replace(\"SHADOWSYNC_NAME\", \"POD_NAME\"), 1).replace(\"            - trainer\n\", \"            - trainer\n            - --name=trainer-\$(POD_NAME)\n\", 1)"
expect_accept "manifest: trainer --name=trainer-\$(POD_NAME) of the downward API" identity "$B/name-var.yaml"
mutate deploy/base/shards.yaml "$B/index-label.yaml" \
  's.replace("--index=\"${HOSTNAME##*-}\"", "--index=\"${SHARD_INDEX}\"", 1).replace("            - name: POD_NAMESPACE\n", "            - name: SHARD_INDEX\n              valueFrom:\n                fieldRef:\n                  fieldPath: metadata.labels['"'"'apps.kubernetes.io/pod-index'"'"']\n            - name: POD_NAMESPACE\n", 1)'
expect_accept "manifest: shard index from the StatefulSet pod-index label" identity "$B/index-label.yaml"

cp -r "$TREE/deploy" "$B/deploy"
mutate deploy/base/kustomization.yaml "$B/deploy/base/kustomization.yaml" 's.replace("  - trainers.yaml\n", "  - trainer.yaml\n", 1)'
expect_reject "kustomization: missing resource file" "$PY" "$DRIVER/kustomize_files.py" "$B/deploy/base"
expect_reject "kustomization: missing resource file (kubectl kustomize)" kustomize "$B/deploy/base"

[ "$ST" = 0 ] || { echo "validate-deploy: self-test FAILED" >&2; exit 1; }
echo "validate-deploy: self-test passed (every broken copy was rejected, every valid variant accepted)"
