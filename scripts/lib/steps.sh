# Sourced by the test scripts: timed steps, and build output a log can hold.
#
#   step NAME COMMAND...   runs COMMAND, printing "== [+T s] NAME" before and "... done in N s"
#                          (or "FAILED (exit C)") after; T counts from the first step
#   steps_summary          prints every step's time, in the script that began the first step
#                          (each script calls it on exit; the others print nothing)
#   thin_build CMD...      runs a build; on a terminal as it is, otherwise keeping every line but
#                          ninja's own progress lines, of which every 25th and the last stay, with
#                          the build's elapsed seconds in them
#   thin_tests CMD...      runs ctest; on a terminal as it is, otherwise without its "Start" lines
#                          and the lines of tests that passed in under 20 s, of which every 50th
#                          stays as a count (with the step's elapsed seconds) to show progress
#
# Why: CI keeps only the tail of a run's output, and a run stopped at its time limit must still
# say which step it was in and what each earlier step took.

# SS_STEPS_START: when the first step began (run-tests.sh exports it to the scripts it calls).
# SS_STEPS_LOG: the file every step's time goes to, so that the summary has the steps of the
# scripts it called too.
steps_start=${SS_STEPS_START:-$(date +%s)}
export SS_STEPS_START=$steps_start
steps_own_log=0
if [ -z "${SS_STEPS_LOG:-}" ]; then
  SS_STEPS_LOG=$(mktemp "${TMPDIR:-/tmp}/ss-steps.XXXXXX")
  export SS_STEPS_LOG
  steps_own_log=1
fi

step() {
  local name=$1 begin rc
  shift
  begin=$(date +%s)
  echo "== [+$((begin - steps_start)) s] $name"
  set +e
  "$@"
  rc=$?
  set -e
  local took=$(($(date +%s) - begin))
  if [ "$rc" -eq 0 ]; then
    echo "== [+$(($(date +%s) - steps_start)) s] $name: done in $took s"
    printf '%6d s  %s\n' "$took" "$name" >>"$SS_STEPS_LOG"
  else
    echo "== [+$(($(date +%s) - steps_start)) s] $name: FAILED (exit $rc) after $took s"
    printf '%6d s  %s (FAILED, exit %d)\n' "$took" "$name" "$rc" >>"$SS_STEPS_LOG"
  fi
  return "$rc"
}

steps_summary() {
  [ "$steps_own_log" = 1 ] || return 0
  [ -s "$SS_STEPS_LOG" ] || { rm -f "$SS_STEPS_LOG"; return 0; }
  echo "== steps (total $(($(date +%s) - steps_start)) s):"
  sed 's/^/   /' "$SS_STEPS_LOG"
  rm -f "$SS_STEPS_LOG"
}

# (Line by line in bash: Debian's awk, mawk, reads a pipe in blocks, which held a log's lines back
# for many minutes.)
thin_build() {
  if [ -t 1 ]; then
    "$@"
    return
  fi
  local line re='^\[([0-9]+)/([0-9]+) [0-9.]+s\] '
  NINJA_STATUS='[%f/%t %es] ' "$@" 2>&1 | while IFS= read -r line; do
    if [[ $line =~ $re ]]; then
      ((BASH_REMATCH[1] == BASH_REMATCH[2] || BASH_REMATCH[1] % 25 == 0)) || continue
    fi
    printf '%s\n' "$line"
  done
}

thin_tests() {
  if [ -t 1 ]; then
    "$@"
    return
  fi
  local line begin passed=0 start_re='^ +Start +[0-9]+: ' \
    pass_re='^ *([0-9]+/[0-9]+) +Test +#[0-9]+: .* Passed +([0-9]+)\.[0-9]+ sec$'
  begin=$(date +%s)
  "$@" 2>&1 | while IFS= read -r line; do
    [[ $line =~ $start_re ]] && continue
    if [[ $line =~ $pass_re ]]; then
      passed=$((passed + 1))
      if ((BASH_REMATCH[2] >= 20)); then
        printf '%s\n' "$line"
      elif ((passed % 50 == 0)); then
        printf '   ... %s (+%d s)\n' "${BASH_REMATCH[1]}" $(($(date +%s) - begin))
      fi
      continue
    fi
    printf '%s\n' "$line"
  done
}
