#!/usr/bin/env bash
# A cluster of several hosts on one machine: every service runs in a network namespace of its own
# (netns_lib.sh: one veth each on a bridge in a hub namespace this test makes and removes, an
# address of its own in 10.213.0.0/24, a host name of its own, an /etc/netns hosts file naming
# every host), started with the commands of docs/cluster.md's "Starting services by hand", read
# from the doc itself (a test that the doc's commands work across hosts: they dial
# tcp://coord:5555, bind tcp://0.0.0.0:PORT and advertise their host name), with CURVE keys with
# roles (`shadowsync keygen --cluster`, each service's given as SHADOWSYNC_CURVE_* variables), and
# only what a test needs on top: on the coordinator a short --member-timeout and its ops port (its
# /api/status is polled from a host of its own, "ops"), per scenario --sync-servers 2 (and a sync
# server started like the doc's members), --export, or --sync none; on the readers an ops port
# (each one's committed count); on the moved shard a --data-dir. The data is what the doc names
# (data/g/train-0000{0,1}-of-00002.tsv, data/g/test.tsv), from `shadowsync gen-data`, 600,000
# rows: about 22 s of training here, enough for each job's faults to land one after another while
# it trains (a fault costs 3-8 s of training; on 500,000 rows a job's last training fault once
# outlasted its training). Every host shares this test's working directory, as
# a shared volume would.
#
# Scenarios (each job under a hard deadline, below --batch-lease's 120 s):
#   baseline   the doc's cluster as written: 2 shards, 2 readers, 2 trainers without --name
#   shaped     every link limited to 100 Mbit/s each way (tc tbf)
#   move       shard-0 and trainer-0 killed (SIGKILL) and started again on other hosts (a new
#              host name and address, as a rescheduled pod); the shard's --data-dir is a shared
#              directory, as its volume would follow it
#   same-name  two trainers started at once with the same --name (beside the doc's trainer):
#              exactly one is refused at registration, naming both, and exits non-zero; the other
#              and the job go on
#   cut-short, cut-long, cut-long-s
#              each kind's link cut (its port on the bridge down) for less than --member-timeout
#              (short) and for more (long) while training, one after another, each once the
#              previous one's commits resumed; then a long cut in a later phase, so that every kind
#              meets one (draining, scoring, the final export)
#   grow       shard-2 started on a host of its own while training: the coordinator (--grow-shards)
#              grows the job to 3 shards; then `shadowsync reshard --shards 2` from the ops host
#              (the admin key) shrinks it back, and shard-2 leaves (exit 0)
#   cut:HOST:short|long:training|draining|scoring|export   one such cut, in a job of its own
# What every job must show: every process exits 0 (but those killed or refused on purpose), the
# coordinator's result line has "ok":true, every row committed exactly once (examples_committed
# equals the data's rows), and test NE within the fault matrix's bound of the undisturbed runs
# (docs/durability.md: at most 1% above the worse of them; 3% with a shard killed outright; with a
# coordinator or sync server cut off (a slice holder), no worse than a run without sync, or 1%;
# 3% where no such run was made). Per fault:
#   while training: the stall after the heal (or the restart): the longest time without a new
#     highest committed count, over the coordinator's examples_committed and each reader's own
#     count (polled every 0.25 s), from the heal until the next fault or the end of training; at
#     most --member-timeout + 5 s. A "+" marks a stall still going when its window ended.
#   in a later phase: how long after the heal the job moved on to its next phase; at most
#     --member-timeout + 5 s plus that phase's length in an undisturbed job.
#   a cut longer than --member-timeout must have made the coordinator drop a member (else the case
#     proves nothing); drops after shorter cuts are reported (TCP's retransmission backoff can
#     keep a 1.5 s cut's link silent for longer than 3 s).
#
# usage: netns_cluster.sh SHADOWSYNC_BINARY
#   SS_NETNS_CASES      default (what CI runs: baseline baseline2 shaped move same-name cut-short
#                       cut-long cut-long-s, about 5 minutes here), full (every scenario: also a
#                       run without sync, and each cut in a job of its own, about 15 minutes), or
#                       a list of scenario names
#   SS_NETNS_REQUIRE=1  where namespaces cannot be made, fail (exit 1) instead of skipping (77)
#   SS_NETNS_ROWS       training rows (default 600000); SS_NETNS_TEST_ROWS (default 20000)
#   SS_NETNS_MEMBER_TIMEOUT  the coordinator's --member-timeout (default 3)
#   SS_NETNS_DEADLINE   seconds a job may take (default 100)
#   SS_NETNS_KEEP=1     keep the working directory (always kept when a check failed)
#   SS_NETNS_NAME_TRAINERS=1  adds --name trainer-K to the doc's trainer command (for a build
#                       whose unnamed trainers collide; the test says so; never in CI)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_bin=$(readlink -f "${1:?usage: netns_cluster.sh SHADOWSYNC_BINARY}")
doc=${SS_NETNS_DOC:-$here/../../docs/cluster.md}
# shellcheck source=netns_lib.sh
source "$here/netns_lib.sh"

if ! nb_available; then
  if [[ ${SS_NETNS_REQUIRE:-0} == 1 ]]; then
    echo "netns_cluster: FAIL: network namespaces cannot be made here, and SS_NETNS_REQUIRE=1: $nb_why"
    exit 1
  fi
  echo "netns_cluster: SKIP: network namespaces cannot be made here: $nb_why"
  exit 77
fi

command -v curl >/dev/null || { echo "netns_cluster: FAIL: no curl (the test polls the services' ops ports with it)"; exit 1; }

rows=${SS_NETNS_ROWS:-600000}
test_rows=${SS_NETNS_TEST_ROWS:-20000}
mt=${SS_NETNS_MEMBER_TIMEOUT:-3}
job_deadline=${SS_NETNS_DEADLINE:-100}
start_deadline=30 # seconds from a job's start to its first commit
short_cut=$(awk -v m="$mt" 'BEGIN { printf "%.1f", m / 2 }')  # less than --member-timeout
long_cut=$(awk -v m="$mt" 'BEGIN { printf "%.1f", m + 1.5 }') # the member is dropped, then back
stall_bound=$(awk -v m="$mt" 'BEGIN { print m + 5 }')
settle=1           # seconds, once commits resumed after a heal, before the next fault
job_dir_placeholder=JOB/model.ssm
ops_port=9100      # the coordinator's ops endpoint, polled from the ops host
reader_ops_port=9101 # the readers' (their committed counts)

work=$(mktemp -d /tmp/ss-netns.XXXXXX)
failures=0
poller_pid=""
watcher_pid=""
cleanup() {
  local rc=$?
  [[ -n $watcher_pid ]] && kill "$watcher_pid" 2>/dev/null
  nb_down
  if ((failures == 0 && rc == 0)) && [[ ${SS_NETNS_KEEP:-0} != 1 ]]; then
    rm -rf "$work"
  else
    echo "netns_cluster: logs in $work"
  fi
}
trap cleanup EXIT
trap 'echo "netns_cluster: interrupted"; exit 130' INT
trap 'echo "netns_cluster: terminated"; exit 143' TERM
cd "$work"

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
field() { grep -o "\"$2\":[^,}]*" "$1" 2>/dev/null | head -1 | cut -d: -f2 || true; }
text_field() { grep -o "\"$2\":\"[^\"]*\"" "$1" 2>/dev/null | head -1 | cut -d: -f2- || true; }
# tail_log FILE [N]: a log's last N lines (but the coordinator's progress lines), indented, for a
# failure's evidence.
tail_log() {
  echo "    --- tail of ${1#"$work"/}:"
  grep -v '^\[[0-9:]*\] info [0-9]* examples[ ,]' "$1" 2>/dev/null | tail -n "${2:-8}" | cut -c1-400 | sed 's/^/    | /' || true
}

# window_log FILE FROM TO [N]: FILE's lines stamped from FROM to TO (epoch seconds; the logs stamp
# [HH:MM:SS]), at most N, but the coordinator's progress lines: what a service said during a stall.
window_log() {
  local from to
  from=$(date -d "@${2%.*}" +%T)
  to=$(date -d "@$((${3%.*} + 1))" +%T)
  echo "    --- ${1#"$work"/} from $from to $to:"
  awk -v a="[$from]" -v b="[$to]" 'substr($0, 1, 10) >= a && substr($0, 1, 10) <= b' "$1" 2>/dev/null |
    grep -v '^\[[0-9:]*\] info [0-9]* examples[ ,]' | head -n "${4:-8}" | cut -c1-400 | sed 's/^/    | /' || true
  return 0
}

# ---- The binary: a copy, since the build may replace it while this runs; `shadowsync` on PATH,
# so that the doc's commands run as they are written.
mkdir -p bin
cp "$src_bin" bin/shadowsync
export PATH="$work/bin:$PATH"
echo "netns_cluster in $work: $(stat -c '%y' "$src_bin" | cut -d. -f1) binary, $rows rows, --member-timeout $mt"

# ---- The doc's commands: the sh block of "Starting services by hand", continuation lines joined
# and comments dropped; one command per service kind (and index).
declare -A doc_cmd=()
doc_error() { echo "netns_cluster: FAIL: docs/cluster.md's \"Starting services by hand\": $*"; exit 1; }
flag_value() { # flag_value LINE FLAG: the value after FLAG in LINE
  local -a w
  read -ra w <<<"$1"
  local i
  for ((i = 0; i < ${#w[@]} - 1; i++)); do [[ ${w[i]} == "$2" ]] && { echo "${w[i + 1]}"; return; }; done
  echo ""
}
[[ -f $doc ]] || doc_error "no such file: $doc"
doc_block=$(awk '/^## Starting services by hand/ { s = 1; next } s && /^## / { exit }
  s && /^```sh/ { b = 1; next } b && /^```/ { exit } b { print }' "$doc")
[[ -n $doc_block ]] || doc_error "no sh block found"
while read -r line; do
  read -ra w <<<"$line"
  [[ ${w[0]} == shadowsync ]] || doc_error "a command that does not start with 'shadowsync': $line"
  case ${w[1]} in
    coordinator | trainer) key=${w[1]} ;;
    shard | reader)
      idx=$(flag_value "$line" --index)
      [[ $idx =~ ^[0-9]+$ ]] || doc_error "a ${w[1]} without --index: $line"
      key=${w[1]}-$idx
      ;;
    *) doc_error "a command this test does not know: $line" ;;
  esac
  [[ -z ${doc_cmd[$key]:-} ]] || doc_error "two commands for $key"
  doc_cmd[$key]=$line
done < <(sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' <<<"$doc_block" | sed -e 's/[[:space:]]#.*$//' -e 's/[[:space:]]*$//' | grep -v '^[[:space:]]*$')
for key in coordinator shard-0 shard-1 reader-0 reader-1 trainer; do
  [[ -n ${doc_cmd[$key]:-} ]] || doc_error "no command for $key (this test runs 2 shards, 2 readers, 2 trainers)"
done
[[ $(flag_value "${doc_cmd[coordinator]}" --shards) == 2 && $(flag_value "${doc_cmd[coordinator]}" --readers) == 2 ]] ||
  doc_error "the coordinator's --shards and --readers are not 2 and 2: ${doc_cmd[coordinator]}"
coord_ep=$(flag_value "${doc_cmd[shard-0]}" --coordinator)
[[ $coord_ep =~ ^tcp://([a-zA-Z][-a-zA-Z0-9]*):([0-9]+)$ ]] || doc_error "the members' --coordinator is not tcp://HOST:PORT: $coord_ep"
coord_host=${BASH_REMATCH[1]}
for key in shard-1 reader-0 reader-1 trainer; do
  [[ $(flag_value "${doc_cmd[$key]}" --coordinator) == "$coord_ep" ]] || doc_error "$key does not dial $coord_ep like shard-0"
done
echo "  the doc's commands (coordinator at $coord_ep):"
for key in coordinator shard-0 shard-1 reader-0 reader-1 trainer; do echo "    ${doc_cmd[$key]}"; done
trainer_cmd=${doc_cmd[trainer]}
if [[ ${SS_NETNS_NAME_TRAINERS:-0} == 1 ]]; then
  echo "  NOTE: SS_NETNS_NAME_TRAINERS=1: trainers get --name trainer-K, which the doc's command has not (a stopgap)"
fi

# ---- The data the doc names, small: gen-data into the directory of its training files.
IFS=, read -ra train_files <<<"$(flag_value "${doc_cmd[coordinator]}" --train)"
test_file=$(flag_value "${doc_cmd[coordinator]}" --test)
data_dir=$(dirname "${train_files[0]}")
shadowsync gen-data --out "$data_dir" --rows "$rows" --test-rows "$test_rows" --files "${#train_files[@]}" >gen-data.out 2>&1 ||
  { cat gen-data.out; doc_error "gen-data failed"; }
for f in "${train_files[@]}" "$test_file"; do
  [[ -s $f ]] || doc_error "$f, which the doc's coordinator reads, is not what gen-data --out $data_dir --files ${#train_files[@]} writes: $(ls "$data_dir")"
done
# Reader i of 2 reads file i (of 2): its rows, for its own committed count.
reader_rows=("$(wc -l <"${train_files[0]}")" "$(wc -l <"${train_files[1]}")")
((reader_rows[0] + reader_rows[1] == rows)) ||
  doc_error "the training files hold ${reader_rows[0]} + ${reader_rows[1]} lines, not $rows (a header line?)"

# ---- The hosts: each a namespace with its own address and host name.
hosts=("$coord_host" shard-0 shard-1 reader-0 reader-1 trainer-0 trainer-1 sync-1 ops shard-0-b trainer-0-b twin-a twin-b shard-2)
for h in "${hosts[@]}"; do nb_add_host "$h"; done
nb_up
echo "  hosts on bridge br0 (namespace ${nb_hub}): $(for h in "${hosts[@]}"; do printf '%s=%s ' "$h" "${nb_ip[$h]}"; done)"

# ---- CURVE keys with roles: one client pair per service (a rescheduled service keeps its key,
# as a mounted secret does); the test's status polls use none (the ops port is plain HTTP).
members=coordinator,shard-0,shard-1,shard-2,reader-0,reader-1,trainer-0,trainer-1,sync-1,twin-a,twin-b,admin
shadowsync keygen --cluster --out keys --members "$members" >keygen.out 2>&1 || { cat keygen.out; exit 1; }
grep -q "name=coordinator role=coordinator" keys/authorized_keys || fail "keygen: the coordinator's key has no role=coordinator"
grep -q "name=admin role=admin" keys/authorized_keys || fail "keygen: admin has no role=admin"

# =====================================================================================
# A job: its services, the poller, the phase watcher, its plan of faults, and its checks.
# =====================================================================================
declare -A svc_pid=() svc_host=() svc_rc=() svc_expect=()
svc_names=()
job=""

# start_service NAME HOST KEY CMDLINE [EXTRA ARGS...]: the command line as the doc writes it
# (shadowsync from PATH), plus EXTRA, on HOST, with the CURVE key KEY.
start_service() {
  local name=$1 host=$2 key=$3 line=$4
  shift 4
  local -a words
  read -ra words <<<"$line"
  echo "$(now) start $name $host ${words[*]} $*" >>"$job/events.log"
  nb_start "$job/$name" "$host" "$job/$name.log" env SHADOWSYNC_CURVE_SERVER_KEY=keys/server.key \
    "SHADOWSYNC_CURVE_CLIENT_KEY=keys/$key.key" SHADOWSYNC_CURVE_AUTHORIZED_KEYS=keys/authorized_keys "${words[@]}" "$@"
  svc_pid[$name]=${nb_pid[$job/$name]}
  svc_host[$name]=$host
  svc_expect[$name]=${svc_expect[$name]:-0}
  svc_names+=("$name")
  echo "$host: ${words[*]} $*" >>"$job/commands.txt"
}

# Progress, every 0.25 s from the ops host: the coordinator's /api/status (its examples_committed,
# summed over the readers' reports, and the job's state) and each reader's own committed count
# (its /metrics), which shows a reader whose commits stall while the other's go on. Lines of
# "time committed state reader-0 reader-1", "-" where a service did not answer.
start_poller() {
  nb_start "$job/poller" ops "$job/poller.err" bash -c '
    metric() { grep -o "^shadowsync_service_committed_examples{[^}]*} [0-9.e+]*" <<<"$1" | head -1 | awk "{ printf \"%d\", \$2 }"; }
    while :; do
      s=$(curl -s -m 1 "http://$1:$2/api/status" 2>/dev/null || true)
      r0=$(curl -s -m 1 "http://reader-0:$3/metrics" 2>/dev/null || true)
      r1=$(curl -s -m 1 "http://reader-1:$3/metrics" 2>/dev/null || true)
      c=$(grep -o "\"examples_committed\":[0-9]*" <<<"$s" | head -1 | cut -d: -f2)
      st=$(grep -o "\"state\":\"[a-z]*\"" <<<"$s" | head -1 | cut -d\" -f4)
      c0=$(metric "$r0")
      c1=$(metric "$r1")
      echo "$EPOCHREALTIME ${c:--} ${st:--} ${c0:--} ${c1:--}" >>"$4"
      sleep 0.25
    done' poller "$coord_host" "$ops_port" "$reader_ops_port" "$job/poll.log"
  poller_pid=${nb_pid[$job/poller]}
}

# The coordinator's log marks of the job's phases, with the time they were first seen: a
# background loop while the job runs, and once more when it is over.
phase_marks=("running:job waiting -> running" "draining:job running -> draining" "scoring:scoring [0-9]* test file"
  "export:writing the model to" 'result:^{"command":"cluster"')
watch_marks_once() {
  local m
  for m in "${phase_marks[@]}"; do
    grep -q " phase ${m%%:*}\$" "$job/events.log" && continue
    grep -q "${m#*:}" "$job/coordinator.log" 2>/dev/null && echo "$(now) phase ${m%%:*}" >>"$job/events.log"
  done
  return 0
}
start_watcher() {
  (while :; do
    watch_marks_once
    sleep 0.1
  done) &
  watcher_pid=$!
}

# The highest committed counts polled so far: "coordinator reader-0 reader-1" (0 for none yet).
maxima() {
  awk '{ for (k = 2; k <= 5; k++) if (k != 3 && $k != "-" && $k + 0 > m[k]) m[k] = $k + 0 }
    END { printf "%d %d %d\n", m[2], m[4], m[5] }' "$job/poll.log" 2>/dev/null || echo "0 0 0"
}
max_committed() { local g _; read -r g _ < <(maxima); echo "$g"; }
seen_phase() { grep -q " phase $1\$" "$job/events.log" 2>/dev/null; }
# never_started: nothing committed $start_deadline s after the job's start (it hangs).
never_started() { ((SECONDS > job_started + start_deadline)) && (($(max_committed) == 0)); }
coordinator_alive() { kill -0 "${svc_pid[coordinator]}" 2>/dev/null; }

# wait_trigger TRIGGER DEADLINE: c<P> (P% of the rows committed, while training), next (at once,
# while training), or a phase (draining, scoring, export: once it began, before the next one).
# False when the job never got there, or was past it.
phases=(running draining scoring export result)
wait_trigger() {
  local trigger=$1 deadline=$2
  while ((SECONDS < deadline)) && coordinator_alive && ! never_started; do
    case $trigger in
      next | c[0-9]*)
        (($(max_committed) >= rows)) && return 1
        seen_phase draining && return 1
        [[ $trigger == next ]] && return 0
        (($(max_committed) >= rows * ${trigger#c} / 100)) && return 0
        ;;
      *)
        if seen_phase "$trigger"; then
          local p later=false
          for p in "${phases[@]}"; do
            $later && seen_phase "$p" && return 1
            [[ $p == "$trigger" ]] && later=true
          done
          return 0
        fi
        ;;
    esac
    sleep 0.05
  done
  return 1
}

# after_heal HEAL_TIME: until every count that was not complete at the heal (the coordinator's,
# each reader's) passed its value then, and $settle s more went by (to see that commits keep
# going); or the job ended. Commits that do not resume are waited for up to twice the stall bound,
# so that the stall measured is the fault's own, not cut short by the next fault.
after_heal() {
  local healed=$1 g0 a0 b0 resumed=""
  read -r g0 a0 b0 < <(maxima)
  while coordinator_alive; do
    local g a b t
    read -r g a b < <(maxima)
    ((g >= rows)) && return # training is over (a fault in a later phase): nothing to wait for
    t=$(since "$healed")
    if [[ -z $resumed ]] && { ((g0 >= rows)) || ((g > g0)); } &&
      { ((a0 >= reader_rows[0])) || ((a > a0)); } && { ((b0 >= reader_rows[1])) || ((b > b0)); }; then
      resumed=$t
    fi
    [[ -n $resumed ]] && awk -v t="$t" -v r="$resumed" -v s="$settle" 'BEGIN { exit !(t >= r + s) }' && return
    awk -v t="$t" -v b="$stall_bound" 'BEGIN { exit !(t > 2 * b + 2) }' && return
    sleep 0.1
  done
}

# run_plan STEPS...: each step TRIGGER:ACTION:TARGET:ARG, one after another:
#   cut:HOST:SECONDS        HOST's link down for SECONDS, then up again
#   move:NAME:NEWHOST       SIGKILL to service NAME, and its command started again on NEWHOST (the
#                           "heal" is the restart)
#   start:shard-N:HOST      a new shard N started on HOST: the doc's shard-1 command with --index N
#                           and a --data-dir (a StatefulSet scaled up); the "heal" is its start
#   reshard:COUNT:HOST      `shadowsync reshard --shards COUNT` run on HOST with the admin key, asked
#                           again while another change is under way (for at most 30 s); the "heal"
#                           is its acceptance
# Each fault is written to events.log as "TIME fault ID WHAT" and "TIME heal ID".
run_plan() {
  local step n=0 deadline=$((job_started + job_deadline)) log_lines=0
  for step in "$@"; do
    n=$((n + 1))
    local trigger action target arg
    IFS=: read -r trigger action target arg <<<"$step"
    local id="f$n" desc
    case $action in
      cut) desc="cut $target ${arg}s at $trigger" ;;
      move) desc="move $target to $arg at $trigger" ;;
      start) desc="start $target on $arg at $trigger" ;;
      reshard) desc="reshard to $target shards from $arg at $trigger" ;;
      *) fail "run_plan: unknown action $action" && continue ;;
    esac
    if ! wait_trigger "$trigger" "$deadline"; then
      if never_started; then
        fail "$job: $action $target at '$trigger' not done: the job never started training"
      else
        fail "$job: $action $target at '$trigger' not done: the job was past that phase, or ended (too few rows for the plan, or the job failed; last status: $(tail -1 "$job/poll.log"))"
      fi
      echo "$(now) skipped $id $desc" >>"$job/events.log"
      continue
    fi
    local before healed
    before=$(max_committed)
    case $action in
      cut)
        echo "$(now) fault $id $desc" >>"$job/events.log"
        echo "  $job: $(date +%T) $target's link cut for ${arg}s (at $trigger, $before committed)"
        log_lines=$(wc -l <"$job/coordinator.log")
        nb_cut "$target"
        sleep "$arg"
        nb_heal "$target"
        ;;
      move)
        echo "$(now) fault $id $desc" >>"$job/events.log"
        local old=${svc_pid[$target]} line=${svc_line[$target]} key=${svc_key[$target]}
        echo "  $job: $(date +%T) SIGKILL to $target on ${svc_host[$target]} (pid $old), then started on $arg (at $trigger, $before committed)"
        kill -KILL "$old" 2>/dev/null || fail "$job: $target was not running when it was to be killed"
        { wait "$old"; } 2>/dev/null || true
        svc_expect[$target]=killed
        sleep 1 # the orchestrator notices and reschedules
        local -a extra=()
        read -ra extra <<<"${svc_extra[$target]:-}"
        svc_line[$target.b]=$line
        start_service "$target.b" "$arg" "$key" "$line" "${extra[@]}"
        ;;
      start)
        echo "$(now) fault $id $desc" >>"$job/events.log"
        echo "  $job: $(date +%T) $target started on $arg (at $trigger, $before committed)"
        local line=${doc_cmd[shard-1]/--index 1/--index ${target#shard-}}
        svc_line[$target]=$line
        svc_key[$target]=$target
        svc_extra[$target]="--data-dir $job/$target.data"
        start_service "$target" "$arg" "$target" "$line" --data-dir "$job/$target.data"
        ;;
      reshard)
        echo "$(now) fault $id $desc" >>"$job/events.log"
        echo "  $job: $(date +%T) shadowsync reshard --shards $target on $arg (at $trigger, $before committed)"
        local until=$((SECONDS + 30)) asked=false
        while ((SECONDS < until)); do
          if ip netns exec "${nb_ns[$arg]}" env SHADOWSYNC_CURVE_SERVER_KEY=keys/server.key \
            SHADOWSYNC_CURVE_CLIENT_KEY=keys/admin.key shadowsync reshard --coordinator "$coord_ep" \
            --shards "$target" --timeout 5 >"$job/$id.reshard" 2>&1; then
            asked=true
            break
          fi
          grep -q "under way" "$job/$id.reshard" || break
          sleep 0.5
        done
        $asked || fail "$job: the reshard to $target shards was refused: $(tail -1 "$job/$id.reshard")"
        ;;
    esac
    healed=$(now)
    echo "$healed heal $id" >>"$job/events.log"
    after_heal "$healed"
    if [[ $action == cut ]]; then
      # What the coordinator saw: members dropped (missed heartbeats) during the cut; a cut longer
      # than --member-timeout that dropped nobody proves nothing.
      local drops
      drops=$(tail -n +$((log_lines + 1)) "$job/coordinator.log" | grep -c "missed heartbeats for" || true)
      echo "$(now) dropped $id $drops" >>"$job/events.log"
      if awk -v c="$arg" -v m="$mt" 'BEGIN { exit !(c > m) }' && ((drops == 0)); then
        fail "$job: $target's link was cut for ${arg}s, longer than --member-timeout ${mt}s, and the coordinator dropped no member (the case proves nothing)"
      fi
    fi
  done
}

# The progress series of poll.log: column, name and total (the coordinator's count of every row;
# each reader's of the rows of its file).
series_awk='
  function stall(col, total, h, end,    i, m, last, gap) {
    m = 0
    for (i = 0; i < n && t[i] <= h; i++) if (v[i, col] != "-" && v[i, col] + 0 > m) m = v[i, col] + 0
    if (m >= total) return -1
    last = h; gap = 0
    for (; i < n && t[i] <= end; i++) {
      if (v[i, col] == "-" || v[i, col] + 0 <= m) continue
      if (t[i] - last > gap) gap = t[i] - last
      last = t[i]; m = v[i, col] + 0
      if (m >= total) break
    }
    if (m < total && end - last > gap) { gap = end - last; open_end = 1 }
    return gap
  }
  # The worst series: "SECONDS NAME", SECONDS ending in + when its count had not moved again by
  # the end of the window (the stall lasted at least that long).
  function worst(h, end,    k, g, best, who, open) {
    best = -1; who = ""; open = 0
    for (k = 1; k <= 3; k++) {
      open_end = 0
      g = stall(col[k], tot[k], h, end)
      if (g > best) { best = g; who = nm[k]; open = open_end }
    }
    if (best < 0) return "-"
    return sprintf("%.1f%s %s", best, open ? "+" : "", who)
  }
  BEGIN { col[1] = 2; nm[1] = "coordinator"; tot[1] = rows; col[2] = 4; nm[2] = "reader-0"; tot[2] = r0
          col[3] = 5; nm[3] = "reader-1"; tot[3] = r1 }'

# stall_of FAULT_ID: "SECONDS SERIES": from the fault's heal until the next fault or the end of
# training, the longest time without a new highest committed count, over the coordinator's count
# and each reader's (a reader done with its rows no longer counts); "-" when training was over at
# the heal. Samples that failed (a link cut) count as no progress.
stall_of() {
  awk -v id="$1" -v rows="$rows" -v r0="${reader_rows[0]}" -v r1="${reader_rows[1]}" "$series_awk"'
    FILENAME ~ /events/ {
      if ($2 == "heal" && $3 == id) h = $1
      else if ($2 == "fault" && h != "" && e == "") e = $1
      else if ($2 == "phase" && $3 == "result" && r == "") r = $1
      next
    }
    { t[n] = $1; for (k = 2; k <= 5; k++) v[n, k] = $k; n++ }
    END {
      if (h == "") { print "-"; exit }
      print worst(h, (e != "") ? e : (r != "" ? r : t[n - 1]))
    }' "$job/events.log" "$job/poll.log"
}

# The longest time without a new highest count while the job trained (the undisturbed jobs).
longest_stall() {
  awk -v rows="$rows" -v r0="${reader_rows[0]}" -v r1="${reader_rows[1]}" "$series_awk"'
    { t[n] = $1; for (k = 2; k <= 5; k++) v[n, k] = $k; n++ }
    END {
      # From the first commit on.
      for (i = 0; i < n; i++) if (v[i, 2] != "-" && v[i, 2] + 0 > 0) break
      if (i >= n) { print "-"; exit }
      print worst(t[i], t[n - 1])
    }' "$job/poll.log"
}

# moved_on FAULT_ID PHASE [EVENTS]: "SECONDS NEXT": from the fault's heal to the mark of the
# phase that followed PHASE (draining -> scoring -> export -> result); negative when the job moved
# on while the link was still cut. "-" when it never did.
moved_on() {
  awk -v id="$1" -v p="$2" '
    BEGIN { split("running draining scoring export result", order, " "); for (i in order) rank[order[i]] = i }
    $2 == "heal" && $3 == id { h = $1 }
    $2 == "phase" && rank[$3] > rank[p] && n == "" { n = $3; t = $1 }
    END { if (h == "" || n == "") print "-"; else printf "%.1f %s\n", t - h, n }' "${3:-$job/events.log}"
}
# phase_length JOB PHASE: how long PHASE lasted in JOB (an undisturbed one), or nothing.
phase_length() {
  [[ -f $1/events.log ]] || return 0
  awk -v p="$2" '
    BEGIN { split("running draining scoring export result", order, " "); for (i in order) rank[order[i]] = i }
    $2 == "phase" && $3 == p { s = $1 }
    $2 == "phase" && s != "" && rank[$3] > rank[p] && e == "" { e = $1 }
    END { if (s != "" && e != "") printf "%.1f\n", e - s }' "$1/events.log"
}
declare -A base_len=() # the later phases' length in an undisturbed job: draining, scoring (baseline), export (move)

declare -A svc_line=() svc_key=() svc_extra=()
# start_cluster [--sync-servers] [--trainers NAMES] [COORDINATOR EXTRAS...]: the doc's cluster.
start_cluster() {
  local with_sync=false shard_extra=""
  local -a trainers=(trainer-0 trainer-1)
  while (($#)); do
    case $1 in
      --sync-server) with_sync=true; shift ;;
      --shard-data) shard_extra=yes; shift ;;
      --trainers) IFS=, read -ra trainers <<<"$2"; shift 2 ;;
      *) break ;;
    esac
  done
  local -a coord_extra=(--member-timeout "$mt" --ops-listen "0.0.0.0:$ops_port" "$@")
  $with_sync && coord_extra+=(--sync-servers 2)
  svc_line[coordinator]=${doc_cmd[coordinator]}
  svc_key[coordinator]=coordinator
  start_service coordinator "$coord_host" coordinator "${doc_cmd[coordinator]}" "${coord_extra[@]}"
  start_poller
  start_watcher
  local i
  for i in 0 1; do
    svc_line[shard-$i]=${doc_cmd[shard-$i]}
    svc_key[shard-$i]=shard-$i
    if [[ -n $shard_extra ]]; then
      # A volume of its own that follows the shard to another host (here, a shared directory).
      svc_extra[shard-$i]="--data-dir $job/shard-$i.data"
      start_service "shard-$i" "shard-$i" "shard-$i" "${doc_cmd[shard-$i]}" --data-dir "$job/shard-$i.data"
    else
      start_service "shard-$i" "shard-$i" "shard-$i" "${doc_cmd[shard-$i]}"
    fi
  done
  for i in 0 1; do
    svc_line[reader-$i]=${doc_cmd[reader-$i]}
    svc_key[reader-$i]=reader-$i
    # Its committed count on its ops port, for the test's poller.
    start_service "reader-$i" "reader-$i" "reader-$i" "${doc_cmd[reader-$i]}" --ops-listen "0.0.0.0:$reader_ops_port"
  done
  if $with_sync; then
    # Not in the doc's block: a sync server as docs/sync.md starts one, like the doc's members.
    svc_line[sync-1]="shadowsync sync-server --index 1 --coordinator $coord_ep --listen tcp://0.0.0.0:5558"
    svc_key[sync-1]=sync-1
    start_service sync-1 sync-1 sync-1 "${svc_line[sync-1]}"
  fi
  local t k=0
  for t in "${trainers[@]}"; do
    local line=$trainer_cmd
    [[ ${SS_NETNS_NAME_TRAINERS:-0} == 1 && $t == trainer-* ]] && line="$line --name $t"
    svc_line[$t]=$line
    svc_key[$t]=$t
    start_service "$t" "$t" "$t" "$line"
    k=$((k + 1))
  done
}

# peers_of HOST: the hosts and ports HOST has TCP connections to (a trainer that never dialed a
# reader never started its feeder).
peers_of() {
  local peers
  peers=$(ip netns exec "${nb_ns[$1]}" ss -tnH state established 2>/dev/null | awk '{ print $4 }' | sort -u) || true
  local p out="" h
  for p in $peers; do
    for h in "${hosts[@]}"; do [[ ${p%:*} == "${nb_ip[$h]}" ]] && p="$h:${p##*:}"; done
    out+=" $p"
  done
  echo "${out:- none}"
}

# wait_job: until every service exited, or the deadline; what is left then is killed and reported.
wait_job() {
  local deadline=$((job_started + job_deadline)) name left=hung coordinator_gone=""
  while ((SECONDS < deadline)); do
    if never_started; then
      left=stopped
      local idle="" t
      for t in "${svc_names[@]}"; do
        [[ $t == trainer* || $t == twin* ]] && ! grep -q "training with" "$job/$t.log" && idle+=" $t"
      done
      fail "$job: nothing committed ${start_deadline}s after the start (last status: $(tail -1 "$job/poll.log")); stopped. Trainers that never began training (no 'training with N workers' line):${idle:- none}"
      for t in "${svc_names[@]}"; do
        [[ $t == trainer* || $t == twin* ]] || continue
        tail_log "$job/$t.log" 4
        echo "    --- $t's TCP connections: $(peers_of "${svc_host[$t]}")"
      done
      # What the coordinator waits on: its calls to other services, and the trainers' endpoints.
      local st
      st=$(nb_exec ops curl -s -m 2 "http://$coord_host:$ops_port/api/status" 2>/dev/null || true)
      echo "    --- the coordinator's calls: $(grep -oE '"(calls|pending_calls|call_timeouts)":[0-9]+' <<<"$st" | tr '\n' ' ')" \
        "trainer endpoints: $(grep -oE '"role":"trainer","index":-?[0-9]+,"endpoint":"[^"]*"' <<<"$st" |
          sed -e 's/.*"endpoint":"//' -e 's/"$//' | tr '\n' ' ')"
      tail_log "$job/coordinator.log" 6
      break
    fi
    local alive=0
    for name in "${svc_names[@]}"; do kill -0 "${svc_pid[$name]}" 2>/dev/null && alive=$((alive + 1)); done
    ((alive == 0)) && break
    # Once the coordinator is gone (the job ended), the members have --member-timeout + 10 s to
    # learn it and exit; one still running then would run forever.
    if [[ -z $coordinator_gone ]] && ! coordinator_alive; then coordinator_gone=$SECONDS; fi
    if [[ -n $coordinator_gone ]] && ((SECONDS > coordinator_gone + ${mt%.*} + 10)); then
      left=orphaned
      break
    fi
    sleep 0.2
  done
  for name in "${svc_names[@]}"; do
    if kill -0 "${svc_pid[$name]}" 2>/dev/null; then
      svc_rc[$name]=$left
      kill -KILL "${svc_pid[$name]}" 2>/dev/null || true
    fi
    local rc=0
    wait "${svc_pid[$name]}" 2>/dev/null || rc=$?
    [[ ${svc_rc[$name]:-} == "$left" ]] || svc_rc[$name]=$rc
  done
  kill "$watcher_pid" 2>/dev/null || true
  wait "$watcher_pid" 2>/dev/null || true
  watcher_pid=""
  watch_marks_once
  kill "$poller_pid" 2>/dev/null || true
  wait "$poller_pid" 2>/dev/null || true
  poller_pid=""
  grep '^{"command":"cluster"' "$job/coordinator.log" | tail -1 >"$job/result.json" || true
}

# =====================================================================================
# Checks and the report
# =====================================================================================
ref_ne=""    # the worse of the undisturbed runs' test NE
nosync_ne="" # a run without sync, when one ran
summary_json=()
case_failures=0

# check_job NE_BOUND: the checks of every job; prints the job's line.
check_job() {
  local bound=$1 before=$failures name
  for name in "${svc_names[@]}"; do
    local rc=${svc_rc[$name]} expect=${svc_expect[$name]}
    [[ $rc == stopped ]] && continue # the job never started: said once
    case $expect in
      killed | either) ;;
      *)
        if [[ $rc == hung ]]; then
          fail "$job: $name (on ${svc_host[$name]}) was still running at the deadline (${job_deadline}s); killed"
          tail_log "$job/$name.log" 6
        elif [[ $rc == orphaned ]]; then
          fail "$job: $name (on ${svc_host[$name]}) was still running $((${mt%.*} + 10))s after the coordinator exited (it never learned that the job ended); killed"
          tail_log "$job/$name.log" 6
        elif [[ $rc != 0 ]]; then
          fail "$job: $name (on ${svc_host[$name]}) exited $rc"
          tail_log "$job/$name.log" 6
        fi
        ;;
    esac
  done
  local r=$job/result.json ok committed ne
  ok=$(field "$r" ok)
  committed=$(field "$r" examples_committed)
  ne=$(field "$r" test_ne)
  if [[ ! -s $r && ${svc_rc[coordinator]} == stopped ]]; then
    : # the job never started: said already
  elif [[ ! -s $r ]]; then
    fail "$job: the coordinator printed no result line (last status: $(tail -1 "$job/poll.log" 2>/dev/null))"
    tail_log "$job/coordinator.log" 10
  else
    [[ $ok == true ]] || fail "$job: the result says ok $ok: $(text_field "$r" error)"
    [[ $committed == "$rows" ]] || fail "$job: $committed examples committed, expected exactly $rows (each row once)"
    if [[ -n $ref_ne && -n $ne && $ne != null ]]; then
      awk -v a="$ne" -v b="$ref_ne" -v x="$bound" 'BEGIN { exit !(a <= b * x) }' ||
        fail "$job: test NE $ne is more than x$bound the undisturbed runs' $ref_ne"
    elif [[ -z $ne || $ne == null ]]; then
      fail "$job: no test NE in the result"
    fi
  fi
  job_ne=$ne
  job_committed=$committed
}

# num_or_null VALUE: VALUE for JSON, null for "-" or nothing.
num_or_null() { if [[ -z ${1:-} || $1 == - || $1 == null ]]; then echo null; else echo "$1"; fi; }

# report_fault ID: a fault's line. While training: the stall after the heal, at most --member-timeout
# + 5 s. In a later phase (draining, scoring, export), where nothing is committed any more: how long
# after the heal the job moved on to its next phase, at most --member-timeout + 5 s plus the length
# of that phase in an undisturbed job.
report_fault() {
  local id=$1 desc what phase secs series ok=true before=$failures bound=$stall_bound shown
  desc=$(awk -v id="$id" '($2 == "fault" || $2 == "skipped") && $3 == id { $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' "$job/events.log")
  phase=${desc##* at }
  what=$(sed -e 's/^cut \([^ ]*\) \(.*\) at .*/\1 cut \2/' -e 's/^move \([^ ]*\) to \([^ ]*\) at .*/\1 killed, restarted on \2/' <<<"$desc")
  if grep -q " skipped $id " "$job/events.log"; then
    printf '  %-10s %-3s %-42s at %-8s %-58s %s\n' "$job" "$id" "$what" "$phase" "not done (above: why)" FAIL
    summary_json+=("{\"scenario\":\"$job\",\"fault\":\"$what\",\"phase\":\"$phase\",\"ok\":false,\"stall_s\":null}")
    return
  fi
  if [[ $phase =~ ^(draining|scoring|export)$ ]]; then
    read -r secs series <<<"$(moved_on "$id" "$phase")"
    bound=$(awk -v b="$stall_bound" -v l="${base_len[$phase]:-10}" 'BEGIN { print b + l }')
    if [[ $secs == - ]]; then shown="never moved on"
    elif [[ $secs == -* ]]; then shown="moved on to $series ${secs#-}s before the heal"
    else shown="moved on to $series ${secs}s after the heal"; fi
  else
    read -r secs series <<<"$(stall_of "$id")"
    shown="stall ${secs}s ($series)"
  fi
  if [[ $secs == - ]] || ! awk -v s="${secs%+}" -v b="$bound" 'BEGIN { exit !(s <= b) }'; then
    if [[ $phase =~ ^(draining|scoring|export)$ ]]; then
      fail "$job: $what at $phase: the job $shown, over the bound of ${bound}s (--member-timeout + 5 + the phase's undisturbed ${base_len[$phase]:-10}s)"
    else
      fail "$job: $what at $phase: commits ($series's count) stalled ${secs}s after the heal$([[ $secs == *+ ]] && echo " (and had not resumed when the window ended)"), over the bound of ${bound}s (--member-timeout + 5)"
    fi
    # What the services said from the fault until the end of the stall (or the window).
    local host=${what%% *} name from to
    from=$(awk -v id="$id" '$2 == "fault" && $3 == id { print $1 }' "$job/events.log")
    to=$(awk -v id="$id" -v s="${secs%+}" '$2 == "heal" && $3 == id { printf "%.0f", $1 + (s == "-" ? 10 : s) }' "$job/events.log")
    for name in "${svc_names[@]}"; do
      [[ ${svc_host[$name]} == "$host" || $name == "$host"* ]] && window_log "$job/$name.log" "$from" "$to" 8
    done
    [[ $series == reader-* && $host != "$series" ]] && window_log "$job/$series.log" "$from" "$to" 8
    for name in "${svc_names[@]}"; do
      [[ $name == trainer-* && ${svc_host[$name]} != "$host" && $name != "$host"* ]] && window_log "$job/$name.log" "$from" "$to" 6
    done
    window_log "$job/coordinator.log" "$from" "$to" 10
  fi
  ((failures == before)) || ok=false
  local drops
  drops=$(awk -v id="$id" '$2 == "dropped" && $3 == id { print $4 }' "$job/events.log")
  [[ -n $drops ]] && shown+="; $drops dropped"
  printf '  %-10s %-3s %-42s at %-8s %-58s %s\n' "$job" "$id" "$what" "$phase" "$shown (bound ${bound}s)" "$($ok && echo pass || echo FAIL)"
  if [[ $phase =~ ^(draining|scoring|export)$ ]]; then
    summary_json+=("{\"scenario\":\"$job\",\"fault\":\"$what\",\"phase\":\"$phase\",\"ok\":$ok,\"moved_on_after_heal_s\":$(num_or_null "$secs"),\"next_phase\":\"${series:-}\",\"bound_s\":$bound,\"members_dropped\":$(num_or_null "$drops")}")
  else
    summary_json+=("{\"scenario\":\"$job\",\"fault\":\"$what\",\"phase\":\"$phase\",\"ok\":$ok,\"stall_s\":$(num_or_null "${secs%+}"),\"stall_open\":$([[ $secs == *+ ]] && echo true || echo false),\"stall_series\":\"${series:-}\",\"bound_s\":$bound,\"members_dropped\":$(num_or_null "$drops")}")
  fi
}

# run_job NAME WHAT NE_BOUND [start_cluster args] -- [plan steps]
run_job() {
  job=$1
  local what=$2 bound=$3
  shift 3
  local -a cluster_args=()
  while (($#)) && [[ $1 != -- ]]; do
    # --export: the job's model file, written in pages of 500 rows (an export that lasts).
    if [[ $1 == "$job_dir_placeholder" ]]; then cluster_args+=("$job/model.ssm" --export-page-rows 500)
    else cluster_args+=("$1"); fi
    shift
  done
  (($#)) && shift
  mkdir -p "$job"
  : >"$job/events.log"
  : >"$job/poll.log"
  svc_names=()
  svc_pid=() svc_host=() svc_rc=() svc_expect=() svc_line=() svc_key=() svc_extra=()
  local t0=$SECONDS before=$failures
  job_started=$SECONDS
  echo "- $job: $what"
  start_cluster "${cluster_args[@]}"
  job_prestart_hook
  run_plan "$@"
  wait_job
  check_job "$bound"
  job_post_hook
  job_wall=$((SECONDS - t0))
  local id
  for id in $(awk '$2 == "fault" || $2 == "skipped" { print $3 }' "$job/events.log"); do report_fault "$id"; done
  local stall secs series
  stall=$(longest_stall)
  read -r secs series <<<"$stall"
  # Without faults, no stall either.
  if ! grep -q " fault \| skipped " "$job/events.log" && [[ $secs != - ]] &&
    ! awk -v s="${secs%+}" -v b="$stall_bound" 'BEGIN { exit !(s <= b) }'; then
    fail "$job: commits ($series's count) stalled ${secs}s without a fault, over ${stall_bound}s"
    [[ $series == reader-* ]] && tail_log "$job/$series.log" 8
    tail_log "$job/coordinator.log" 8
  fi
  local ok=$((failures == before)) vs=""
  if [[ -n $ref_ne && -n $job_ne && $job_ne != null ]]; then
    vs=$(awk -v a="$job_ne" -v b="$ref_ne" -v x="$bound" 'BEGIN { printf " (%+.2f%% vs %.6f, bound %+.1f%%)", (a / b - 1) * 100, b, (x - 1) * 100 }')
  elif [[ $job == nosync ]]; then
    vs=" (not compared: it is the bound for a slice holder cut off)"
  elif [[ -n $job_ne && $job_ne != null && $job != baseline ]]; then
    vs=" (not compared: no undisturbed run finished)"
  fi
  local longest="-"
  [[ ${secs:--} != - ]] && longest="${secs}s ($series)"
  printf '  %-10s job: %s; committed %s of %s; NE %s%s; longest stall %s; %s examples/s; %ss: %s\n' "$job" "$what" \
    "${job_committed:-?}" "$rows" "${job_ne:-?}" "$vs" "$longest" "$(field "$job/result.json" examples_per_sec | cut -d. -f1)" \
    "$job_wall" "$( ((ok)) && echo pass || echo FAIL)"
  summary_json+=("{\"scenario\":\"$job\",\"what\":\"$what\",\"ok\":$( ((ok)) && echo true || echo false),\"committed\":$(num_or_null "$job_committed"),\"ne\":$(num_or_null "$job_ne"),\"ne_bound\":$bound,\"longest_stall_s\":$(num_or_null "${secs%+}"),\"wall_s\":$job_wall}")
  ((ok)) || case_failures=$((case_failures + 1))
}
job_prestart_hook() { :; }
job_post_hook() { :; }

# =====================================================================================
# The scenarios
# =====================================================================================
ne_bound_for() { # the NE bound for a job whose faults include slice holders away (coordinator, sync server)
  if [[ $1 == slice && -n $nosync_ne ]]; then
    awk -v s="$ref_ne" -v n="$nosync_ne" 'BEGIN { r = n / s; printf "%.4f", (r > 1.01 ? r : 1.01) }'
  elif [[ $1 == slice ]]; then
    echo 1.03 # no run without sync here: the fault matrix measured +1.9% to +2.2% for one
  elif [[ $1 == killed ]]; then
    echo 1.03
  else
    echo 1.01
  fi
}

set_ref() { # the worse of the undisturbed runs so far
  [[ -n $job_ne && $job_ne != null ]] || return 0
  if [[ -z $ref_ne ]] || awk -v a="$job_ne" -v b="$ref_ne" 'BEGIN { exit !(a > b) }'; then ref_ne=$job_ne; fi
}

sc_baseline() {
  run_job baseline "the doc's cluster, undisturbed" 1.01
  set_ref
  local p l
  for p in draining scoring; do
    l=$(phase_length baseline "$p")
    [[ -n $l ]] && base_len[$p]=$l
  done
  return 0
}
sc_baseline2() {
  # Held to 3%, not 1%: two undisturbed runs are two draws, and their gap is the spread itself
  # (1.24% once in CI, 0.8009 and 0.8108; eight runs here 0.8011-0.8056). It still catches a run
  # that trains much worse; the cases after it are held to 1% of the worse of the two. (A learning
  # rate decaying to the end did not narrow the spread: four runs 0.8104-0.8139, and worse.)
  run_job baseline2 "the doc's cluster, undisturbed, again" 1.03
  set_ref
}
sc_nosync() {
  local keep=$ref_ne
  ref_ne="" # not held to the synchronized runs' NE
  run_job nosync "undisturbed, --sync none (the bound for slice holders away)" 1.01 --sync none
  ref_ne=$keep
  if [[ -n $job_ne && $job_ne != null ]]; then nosync_ne=$job_ne; fi
}
sc_shaped() {
  local h
  for h in "${hosts[@]}"; do nb_shape "$h" 100mbit; done
  run_job shaped "every link shaped to 100 Mbit/s (tbf)" 1.01
  for h in "${hosts[@]}"; do nb_unshape "$h"; done
  set_ref
}
# Cuts during training, one kind after another once the previous one's commits resumed: short
# ones in one job, long ones in two (the data path: shard, reader, trainer; the slice holders:
# sync server, coordinator); each job then has a long cut in a later phase, so that every kind
# meets one: a reader (draining) after the short cuts, a sync server (draining) and the
# coordinator (the final export, in pages of 500 rows) after the data path's, a trainer (draining)
# after the slice holders'; a shard's (scoring) is the move job's. (A scoring cut after a draining
# one began late in scoring, or after it: draining lasts 2 s here, scoring under one.)
sc_cut_short() {
  run_job cut-short "each kind cut ${short_cut}s (< --member-timeout) while training; reader-0 draining cut ${long_cut}s" \
    "$(ne_bound_for slice)" --sync-server -- \
    "c3:cut:sync-1:$short_cut" "next:cut:$coord_host:$short_cut" "next:cut:reader-0:$short_cut" \
    "next:cut:trainer-0:$short_cut" "next:cut:shard-1:$short_cut" \
    "draining:cut:reader-0:$long_cut"
}
sc_cut_long_data() {
  run_job cut-long "shard, reader, trainer cut ${long_cut}s (> --member-timeout) while training; sync-1 draining, coordinator export" \
    1.01 --sync-server --export "$job_dir_placeholder" -- \
    "c5:cut:shard-1:$long_cut" "next:cut:reader-0:$long_cut" "next:cut:trainer-0:$long_cut" \
    "draining:cut:sync-1:$long_cut" "export:cut:$coord_host:$long_cut"
}
sc_cut_long_slices() {
  run_job cut-long-s "sync server, coordinator cut ${long_cut}s while training; trainer-0 draining" "$(ne_bound_for slice)" --sync-server -- \
    "c5:cut:sync-1:$long_cut" "next:cut:$coord_host:$long_cut" "draining:cut:trainer-0:$long_cut"
}
# One fault a job (full): HOST LENGTH PHASE.
sc_cut_one() {
  local host=$1 len=$2 phase=$3 secs bound=1.01 trigger=c20 extra=()
  [[ $len == short ]] && secs=$short_cut || secs=$long_cut
  [[ $host == "$coord_host" || $host == sync-1 ]] && bound=$(ne_bound_for slice)
  [[ $phase != training ]] && trigger=$phase
  [[ $phase == export ]] && extra=(--export "$job_dir_placeholder")
  run_job "cut-$host-$len-$phase" "$host cut ${secs}s at $phase" "$bound" --sync-server "${extra[@]}" -- \
    "$trigger:cut:$host:$secs"
}
sc_move() {
  # Its final export, undisturbed, measures how long one lasts here (the bound of a cut during one).
  # The coordinator also publishes (docs/online.md): the moved shard's successor needs a base, and
  # the chain, written on the coordinator's host, ends at the job's final model.
  job_post_hook() {
    local rc=0 manifests
    manifests=$(ls "$job/pub" 2>/dev/null | grep -c 'manifest$' || true)
    ((manifests >= 3)) || fail "$job: $manifests publications in $job/pub, expected a base, deltas and the final model"
    shadowsync predict --publish-dir "$job/pub" --test "$test_file" --threads 1 >"$job/chain.out" 2>&1 || rc=$?
    ((rc == 0)) || { fail "$job: predict --publish-dir failed: $(tail -1 "$job/chain.out")"; return; }
    [[ "$(tail -1 "$job/chain.out" | grep -o '"test_ne":[^,}]*' | cut -d: -f2)" == "$(field "$job/result.json" test_ne)" ]] ||
      fail "$job: the published chain scores $(tail -1 "$job/chain.out" | grep -o '"test_ne":[^,}]*'), the job $(field "$job/result.json" test_ne)"
    echo "  $job: $manifests publications; predict --publish-dir scores as the job ($(field "$job/result.json" test_ne))"
  }
  run_job move "shard-0, trainer-0 killed, restarted on other hosts; the model published; shard-1 scoring cut ${long_cut}s" \
    "$(ne_bound_for killed)" \
    --sync-server --shard-data --export "$job_dir_placeholder" --publish-dir "$work/move/pub" --publish-interval 0.5 -- \
    "c20:move:shard-0:shard-0-b" "next:move:trainer-0:trainer-0-b" "scoring:cut:shard-1:$long_cut"
  job_post_hook() { :; }
  local l
  l=$(phase_length move export)
  [[ -n $l ]] && base_len[export]=$l
  return 0
}
sc_grow() {
  # The shard count changed as an operator changes it across hosts: shard 2 started on a host of
  # its own grows the job to 3 shards (--grow-shards: a StatefulSet scaled up), then
  # `shadowsync reshard` from another host shrinks it back to 2, and shard 2 leaves (exit 0).
  job_post_hook() {
    local change
    for change in "2 -> 3" "3 -> 2"; do
      grep -q "resharded $change shards in" "$job/coordinator.log" ||
        { fail "$job: no reshard $change in the coordinator's log"; tail_log "$job/coordinator.log" 8; continue; }
      echo "  $job: $(grep -o "resharded $change shards in.*" "$job/coordinator.log" | head -1 | cut -c1-200)"
    done
    grep -q "shard-2: the job has 2 shards now: .*leaves the job" "$job/shard-2.log" ||
      fail "$job: shard-2 did not leave the job after the shrink"
  }
  run_job grow "shard-2 started on a host of its own (--grow-shards: 2 -> 3), then reshard --shards 2 from the ops host" \
    "$(ne_bound_for none)" --shard-data --grow-shards -- "c15:start:shard-2:shard-2" "next:reshard:2:ops"
  job_post_hook() { :; }
}
sc_same_name() {
  # The doc's cluster with one trainer of its own, plus two trainers started at once with the
  # same --name on two hosts.
  job_prestart_hook() {
    local t
    for t in twin-a twin-b; do
      svc_line[$t]="$trainer_cmd --name twin"
      svc_key[$t]=$t
      start_service "$t" "$t" "$t" "$trainer_cmd" --name twin
      svc_expect[$t]=either
    done
  }
  job_post_hook() {
    local a=${svc_rc[twin-a]} b=${svc_rc[twin-b]} refused="" kept=""
    # The one kept exits 0 (or was stopped with a job that never started: said already).
    if [[ $a =~ ^(0|stopped)$ && ! $b =~ ^(0|stopped|hung|orphaned)$ ]]; then refused=twin-b kept=twin-a
    elif [[ $b =~ ^(0|stopped)$ && ! $a =~ ^(0|stopped|hung|orphaned)$ ]]; then refused=twin-a kept=twin-b
    fi
    if [[ -z $refused ]]; then
      fail "$job: two trainers named 'twin': expected exactly one refused (non-zero exit) and one exit 0; twin-a exited $a, twin-b $b"
      tail_log "$job/twin-a.log" 6
      tail_log "$job/twin-b.log" 6
      grep -i "twin" "$job/coordinator.log" | tail -5 | sed 's/^/    coordinator| /'
      return
    fi
    # The refusal names both: the name, and both trainers (host name or address).
    local msg
    msg=$(grep -i "twin" "$job/$refused.log" | grep -iE "refus|already|taken|same name|duplicate" | head -3 || true)
    if [[ -z $msg ]]; then
      fail "$job: $refused exited ${svc_rc[$refused]} without a refusal naming 'twin'"
      tail_log "$job/$refused.log" 6
    else
      local h
      for h in twin-a twin-b; do
        grep -qE "$h|${nb_ip[$h]//./\\.}" <<<"$msg" || fail "$job: $refused's refusal does not name $h (${nb_ip[$h]}): $msg"
      done
    fi
    echo "  $job: $refused refused (exit ${svc_rc[$refused]}): $(head -1 <<<"$msg" | cut -c1-300)"
    [[ $(grep -c "registered with the coordinator" "$job/$kept.log" || true) -ge 1 ]] || fail "$job: $kept never registered"
  }
  run_job same-name "two trainers with --name twin at once (and the doc's trainer)" 1.01 --trainers trainer-0
  job_prestart_hook() { :; }
  job_post_hook() { :; }
}

# ---- Which scenarios
# Two undisturbed runs, as the fault matrix has: one run's NE alone is a draw (Hogwild and background
# sync), and undisturbed runs here have differed by 1.0% (0.8017 and 0.8098) and 1.24% (0.8009 and
# 0.8108); the faults are held to the worse of the two.
catalogue_default="baseline baseline2 shaped move same-name grow cut-short cut-long cut-long-s"
full_cuts=""
for h in shard-1 reader-0 trainer-0 sync-1 "$coord_host"; do
  full_cuts+=" cut:$h:short:training cut:$h:long:training"
done
full_cuts+=" cut:trainer-0:long:draining cut:reader-0:long:draining cut:sync-1:long:draining"
full_cuts+=" cut:shard-1:long:scoring cut:$coord_host:long:export cut:shard-0:long:export"
case ${SS_NETNS_CASES:-default} in
  default) cases=$catalogue_default ;;
  full) cases="baseline baseline2 nosync shaped move same-name grow $full_cuts cut-short cut-long cut-long-s" ;;
  *) cases=$SS_NETNS_CASES ;;
esac
# An undisturbed run first, for NE (every case is compared with it).
[[ " $cases " == *" baseline "* ]] || cases="baseline $cases"
t_start=$SECONDS
for c in $cases; do
  case $c in
    baseline) sc_baseline ;;
    baseline2) sc_baseline2 ;;
    nosync) sc_nosync ;;
    shaped) sc_shaped ;;
    cut-short) sc_cut_short ;;
    cut-long) sc_cut_long_data ;;
    cut-long-s) sc_cut_long_slices ;;
    cut:*)
      IFS=: read -r _ h len phase <<<"$c"
      sc_cut_one "$h" "$len" "$phase"
      ;;
    move) sc_move ;;
    same-name) sc_same_name ;;
    grow) sc_grow ;;
    *) fail "unknown scenario $c" ;;
  esac
done
wall=$((SECONDS - t_start))

echo "netns_cluster: $(wc -w <<<"$cases") scenario(s) in ${wall}s; reference NE ${ref_ne:-?}; $failures check(s) failed"
printf '{"test":"netns_cluster","ok":%s,"failures":%d,"seconds":%d,"rows":%d,"member_timeout":%s,"stall_bound_s":%s,"reference_ne":%s,"cases":[%s]}\n' \
  "$( ((failures == 0)) && echo true || echo false)" "$failures" "$wall" "$rows" "$mt" "$stall_bound" "${ref_ne:-null}" \
  "$(IFS=,; echo "${summary_json[*]}")"
((failures == 0)) || exit 1
