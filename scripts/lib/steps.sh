# Sourced by the test scripts: timed steps, and build output a log can hold.
#
#   step NAME COMMAND...   runs COMMAND, printing "== [+T s] NAME" before and "... done in N s"
#                          (or "FAILED (exit C)") after; T counts from the first step
#   steps_summary          prints every step's time, in the script that began the first step
#                          (each script calls it on exit; the others print nothing)
#   thin_build CMD...      runs a build; on a terminal as it is, otherwise keeping every line but
#                          ninja's own progress lines, of which every 25th and the last stay, with
#                          the build's elapsed seconds in them
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

thin_build() {
  if [ -t 1 ]; then
    "$@"
    return
  fi
  NINJA_STATUS='[%f/%t %es] ' "$@" 2>&1 | awk '
    /^\[[0-9]+\/[0-9]+ [0-9.]+s\] / {
      split(substr($1, 2), a, "/")
      if (a[1] == a[2] || a[1] % 25 == 0) print
      fflush()
      next
    }
    { print; fflush() }'
}

# thin_tests CMD...: runs ctest; on a terminal as it is, otherwise without its "Start" lines and
# the lines of tests that passed in under 20 s, of which every 50th stays as a count (with the
# step's elapsed seconds) to show progress.
thin_tests() {
  if [ -t 1 ]; then
    "$@"
    return
  fi
  local begin
  begin=$(date +%s)
  "$@" 2>&1 | awk -v begin="$begin" '
    /^ +Start +[0-9]+: / { next }
    / Test +#[0-9]+: .* Passed +[0-9.]+ sec$/ {
      secs = $(NF - 1) + 0
      n++
      if (secs >= 20) print
      else if (n % 50 == 0) { "date +%s" | getline now; close("date +%s"); print "   ... " $1 " (+" now - begin " s)" }
      fflush()
      next
    }
    { print; fflush() }'
}
