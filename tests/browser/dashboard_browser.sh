#!/usr/bin/env bash
# The coordinator's dashboard in a real browser: a `shadowsync local` job with --ops-listen on
# loopback, its page opened in headless Chromium (Debian's package, driven by playwright-core,
# pinned in package-lock.json here) while it trains and after it ends (dashboard_test.js says what
# is checked). Also checks that `local` prints the dashboard's address, and that the finished
# page's test NE, train NE and examples are the job's result line's (what bench/ scripts plot).
#
# usage: dashboard_browser.sh SHADOWSYNC_BINARY SCREENSHOT.png
# Skipped (exit 77, with the reason) where no browser can run: no chromium, no node/npm, the npm
# packages not installable (the registry is needed once), or Chromium does not start. With
# SS_BROWSER_REQUIRE=1 (scripts/run-tests.sh, which installs Chromium through setup.sh
# --dashboard) each of these fails the test instead. SS_CHROMIUM: another browser binary.
set -euo pipefail
# No silent exit: a failing command says where.
trap 'echo "dashboard_browser: FAILED at line $LINENO: $BASH_COMMAND" >&2' ERR
bin=$(readlink -f "$1")
screenshot=$(readlink -f "$2")
here=$(cd "$(dirname "$0")" && pwd)
chromium=${SS_CHROMIUM:-/usr/bin/chromium}
skip() {
  if [[ "${SS_BROWSER_REQUIRE:-0}" == 1 ]]; then echo "dashboard_browser: FAILED (SS_BROWSER_REQUIRE=1): $*" >&2; exit 1; fi
  echo "dashboard_browser: SKIPPED: $* (scripts/setup.sh --dashboard installs Chromium)" >&2
  exit 77
}
[[ -x "$chromium" ]] || skip "no browser at $chromium"
command -v node >/dev/null 2>&1 || skip "node not found"
command -v npm >/dev/null 2>&1 || skip "npm not found"

# playwright-core, pinned by the lock file, installed once per lock file (no browser download).
tools=${SS_BROWSER_TOOLS:-$HOME/.cache/shadowsync/browser-test}
lock_sum=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [[ "$(cat "$tools/.lock-sha256" 2>/dev/null || true)" != "$lock_sum" || ! -d "$tools/node_modules/playwright-core" ]]; then
  mkdir -p "$tools"
  cp "$here/package.json" "$here/package-lock.json" "$tools/"
  echo "dashboard_browser: npm ci into $tools"
  (cd "$tools" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    skip "npm ci failed (the npm registry is needed once)"
  echo "$lock_sum" >"$tools/.lock-sha256"
fi
export NODE_PATH="$tools/node_modules"

work=$(mktemp -d /tmp/ss-dashboard.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; [[ -n "${SS_KEEP:-}" ]] || rm -rf "$work"' EXIT
cd "$work"
# A job of several seconds on two cores: long enough to watch it train, with validation scored while
# it trains (a validation curve) and a test score at the end. (No --state-dir: its final snapshot
# would add seconds and nothing the page does not show already.)
"$bin" gen-data --rows "${SS_DASHBOARD_ROWS:-250000}" --test-rows 5000 --out data >gen.out 2>&1 ||
  { cat gen.out >&2; exit 1; }
# The log exists before the job starts: the background job opens it in its own time, and a first
# look before that would fail the script (it did, once, on a loaded machine).
: >job.err
"$bin" local --train data/train.tsv --test data/test.tsv --validation data/test.tsv --eval-every 60000 \
  --trainers 2 --sync s-easgd --heartbeat-interval 0.25 --progressive-window 20000 \
  --ops-listen 127.0.0.1:0 --ops-linger 60 --log-level info >job.out 2>job.err &
job=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's#.*: dashboard at http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' job.err)
  [[ -n "$port" ]] && break
  kill -0 $job 2>/dev/null || break
  sleep 0.05
done
[[ -n "$port" ]] || { cat job.err >&2; echo "dashboard_browser: FAILED: local did not print the dashboard's address" >&2; exit 1; }
echo "dashboard_browser: dashboard at http://127.0.0.1:$port/"
rc=0
node "$here/dashboard_test.js" "http://127.0.0.1:$port/" "$screenshot" | tee page.log || rc=${PIPESTATUS[0]}
if [[ $rc == 77 ]]; then skip "Chromium does not start here"; fi
if [[ $rc != 0 ]]; then tail -20 job.err >&2; exit $rc; fi
# The job ended ok while the page watched, and lingers: a signal ends the wait at once.
grep -q '"ok":true' job.out || { tail -5 job.out job.err >&2; echo "dashboard_browser: FAILED: no ok result line" >&2; exit 1; }
# The finished page shows the numbers of the job's result line, the line bench/ scripts read and
# plot: the same test NE, train NE and examples.
for field in test_ne train_ne examples; do
  line=$(grep "^{" job.out | tail -1 | grep -o "\"$field\":[^,}]*" | head -1 | cut -d: -f2)
  case $field in
    test_ne) shown=$(grep -o "final: test NE [0-9.e+-]*" page.log | awk '{print $4}') ;;
    train_ne) shown=$(grep -o "train NE [0-9.e+-]*" page.log | tail -1 | awk '{print $3}') ;;
    examples) shown=$(grep -o ", [0-9]* examples;" page.log | tail -1 | tr -dc 0-9) ;;
  esac
  awk -v a="$line" -v b="$shown" 'BEGIN { exit !(a != "" && b != "" && (a - b) * (a - b) <= 1e-10 * (a * a + 1)) }' ||
    { echo "dashboard_browser: FAILED: the page shows $field ${shown:-nothing}, the result line says ${line:-nothing}" >&2; exit 1; }
done
kill -INT $job
wait $job || { echo "dashboard_browser: FAILED: local exited $? after the linger was interrupted" >&2; exit 1; }
echo "dashboard_browser: passed"
