# What the integration scripts share; sourced by them after `set -euo pipefail`.
#   in_work_dir BINARY NAME  $bin = the binary's absolute path; $work = a fresh directory
#                            /tmp/ss-NAME.XXXXXX, made current, removed on exit with any child
#                            process still running
#   fail MESSAGE             one failed check, printed and counted in $failures
#   field FILE KEY           the last value of a number or boolean JSON field in FILE
#   text_field FILE KEY      the last value of a string JSON field in FILE, quotes included
failures=0

in_work_dir() {
  bin=$(readlink -f "$1")
  work=$(mktemp -d "/tmp/ss-$2.XXXXXX")
  trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$work"' EXIT
  cd "$work"
}

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { grep -o "\"$2\":[^,}]*" "$1" | tail -1 | cut -d: -f2; }
text_field() { grep -o "\"$2\":\"[^\"]*\"" "$1" | tail -1 | cut -d: -f2- || true; }
