#!/usr/bin/env bash
# The chaos run: one long job on the namespace cluster (tests/integration/netns_lib.sh: every
# service on a "host" of its own, a network namespace with its own address, host name and hosts
# file, on one bridge) while a seeded schedule injects faults of every kind into every kind of
# service, against a failure-free run of the same job (same data, same settings, same hosts) made
# first by the same script.
#
# The cluster is docs/cluster.md's (coordinator, 2 shards, 2 readers, 2 trainers without --name,
# --threads 4), with a sync server (--sync-servers 2; background sync, S-EASGD by --sync auto) and
# what restarts need: the coordinator keeps snapshots (--snapshot-dir, every --snapshot-interval
# 30 s), shards their rows (--data-dir; a shared directory, as a volume that follows a moved
# shard); CURVE keys with roles (`shadowsync keygen --cluster`), a short --member-timeout (3 s),
# ops ports on the coordinator and the readers. Every host shares the working directory.
#
# Faults (each with its length drawn in --fault-seconds, a quiet gap drawn in --gap before it):
#   kill       SIGKILL, then the same service started again on the same host after LENGTH s
#   pause      SIGSTOP, SIGCONT LENGTH s later
#   partition  the host's link cut (its port on the bridge down), healed LENGTH s later
#   slow       the host's link shaped (tc tbf, both ways) to RATE for LENGTH s
#   move       SIGKILL, then the service started on its other host (HOST-b, or back) after LENGTH
#              s: a new host name and address. For the coordinator, whose address the members
#              dial by name (tcp://coord:5555), the name follows it (every host's hosts file maps
#              coord to the new address, as a DNS name follows a rescheduled service)
# The schedule (bench/soak/chaos_report.py schedule) is drawn from --seed: in blocks of 25, every fault
# kind meets every service kind once, and every 5 faults in a row hold each fault kind and each
# service kind once. Faults are injected one after another while the job trains, until fewer than
# 30 s of training are left (estimated from the last 30 s); each is printed as it runs, with a
# progress line every minute. A service that exits non-zero by itself is recorded as a crash (a
# finding) and started again, as an orchestrator would.
#
# Measured (bench/soak/chaos_report.py says how): faults survived, examples/s as a share of the
# failure-free run's, the longest stall (no commits), the NE change, rows committed (each once).
# Targets: every row committed exactly once, NE within 1%, at least 90% of the examples/s.
# Output: a summary and one JSON line; bench/soak/results/chaos-STAMP.{txt,json,png} (or --out DIR).
#
# usage: bench/soak/chaos_run.sh [options]          (root: network namespaces)
#   --bin PATH          the shadowsync binary (copied first); default build/services/cli/shadowsync
#   --minutes M         length of the failure-free job (default 20): rows = M x 60 x --rate
#   --rate R            the failure-free examples/s expected here (default 28000: 20 minutes are
#                       33.6M rows, 3.5 GB of gzip data)
#   --rows N            training rows (instead of --minutes x --rate)
#   --faults N          faults at least (default 30; fewer is reported as a missed target)
#   --seed S            the schedule's seed (default: drawn, printed)
#   --gap A-B           seconds between a fault's heal and the next fault (default 20-40)
#   --fault-seconds A-B a fault's length (default 2-8)
#   --first-after S     seconds from the first commit to the first fault's gap (default 10)
#   --member-timeout S  the coordinator's --member-timeout (default 3)
#   --only chaos|free   run one job only (development; the report needs both)
#   --out DIR           where results go (default bench/soak/results); --tag T names them chaos-T
#   --data DIR          data cache (default /tmp/ss-chaos-data; gzip, about 105 MB per million rows)
#   --keep              keep the working directory (logs; always kept when a check failed)
set -euo pipefail
# shellcheck source=bench/lib/bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/bench.sh"
root=$bench_root
py=/usr/bin/python3
report=$root/bench/soak/chaos_report.py
bin=$(bench_bin)
minutes=20
rate=28000
rows=""
want_faults=30
seed=""
gap=20-40
fault_seconds=2-8
first_after=10
mt=3
only=""
out_dir=$root/bench/soak/results
tag=""
data_root=/tmp/ss-chaos-data
keep=0
test_rows=100000
rows_per_file=1000000
while (($#)); do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --faults) want_faults=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --gap) gap=$2; shift 2 ;;
    --fault-seconds) fault_seconds=$2; shift 2 ;;
    --first-after) first_after=$2; shift 2 ;;
    --member-timeout) mt=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --data) data_root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) bench_usage "$0"; exit 0 ;;
    *) echo "chaos_run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $bin ]] || { echo "chaos_run.sh: no shadowsync binary at $bin (give --bin)" >&2; exit 2; }
[[ -n $seed ]] || seed=$((RANDOM * 32768 + RANDOM))
[[ -n $rows ]] || rows=$(awk -v m="$minutes" -v r="$rate" 'BEGIN { printf "%d", m * 60 * r / 1000 * 1000 }')
# shellcheck source=tests/integration/netns_lib.sh disable=SC2154
source "$root/tests/integration/netns_lib.sh"
nb_available || { echo "chaos_run.sh: network namespaces cannot be made here: $nb_why" >&2; exit 2; }
command -v curl >/dev/null || { echo "chaos_run.sh: no curl" >&2; exit 2; }
$py -c 'import matplotlib' 2>/dev/null || { echo "chaos_run.sh: no matplotlib for $py (scripts/setup.sh --bench, or apt-get install python3-matplotlib)" >&2; exit 2; }

work=$(mktemp -d /tmp/ss-chaos.XXXXXX)
poller_pid=""
cleanup() {
  local rc=$?
  [[ -n $poller_pid ]] && kill "$poller_pid" 2>/dev/null
  nb_down
  if ((rc == 0)) && ((keep == 0)); then rm -rf "$work"; else echo "chaos_run.sh: logs in $work" >&2; fi
}
trap cleanup EXIT
trap 'echo "chaos_run.sh: interrupted"; exit 130' INT
trap 'echo "chaos_run.sh: terminated"; exit 143' TERM

now() { echo "$EPOCHREALTIME"; }
say() { echo "$(date +%T) $*"; }

# ---- The binary (a copy: the build may replace it) on PATH, so that commands read as the doc's.
mkdir -p "$work/bin"
cp "$bin" "$work/bin/shadowsync"
export PATH="$work/bin:$PATH"

# ---- Data: one pass over generated rows (several epochs of a smaller set overfit: test NE gets
# worse from the second epoch on), in gzip files of about a million rows, cached between runs.
files=$(((rows + rows_per_file - 1) / rows_per_file))
((files % 2 == 0)) || files=$((files + 1)) # reader i of 2 reads files i, i+2, ...
data=$data_root/rows-$rows-files-$files
if [[ ! -f $data/teacher.json || ! -f $data/reader-rows ]]; then
  rm -rf "$data"
  mkdir -p "$data_root"
  say "generating $rows rows in $files gzip files into $data"
  shadowsync gen-data --out "$data" --rows "$rows" --test-rows "$test_rows" --files "$files" --gzip >"$work/gen-data.out" 2>&1 ||
    { cat "$work/gen-data.out"; exit 1; }
  # Each reader's rows (its files'), counted once.
  r0=0 r1=0 i=0
  for f in "$data"/train-*.tsv.gz; do
    n=$(zcat "$f" | wc -l)
    if ((i % 2 == 0)); then r0=$((r0 + n)); else r1=$((r1 + n)); fi
    i=$((i + 1))
  done
  echo "$r0 $r1" >"$data/reader-rows"
fi
read -r reader_rows0 reader_rows1 <"$data/reader-rows"
((reader_rows0 + reader_rows1 == rows)) || { echo "chaos_run.sh: $data holds $reader_rows0 + $reader_rows1 rows, not $rows" >&2; exit 1; }
train_list=$(printf '%s,' "$data"/train-*.tsv.gz)
train_list=${train_list%,}
test_file=$(ls "$data"/test.tsv*)

# ---- Hosts: each service on its own host, and a second host for each (moves); an ops host polls.
coord_host=coord
services=(coordinator shard-0 shard-1 reader-0 reader-1 sync-1 trainer-0 trainer-1)
declare -A home=([coordinator]=$coord_host)
for s in "${services[@]:1}"; do home[$s]=$s; done
hosts=()
for s in "${services[@]}"; do hosts+=("${home[$s]}" "${home[$s]}-b"); done
hosts+=(ops)
for h in "${hosts[@]}"; do nb_add_host "$h"; done
nb_up
cd "$work"
shadowsync keygen --cluster --out keys --members "$(IFS=,; echo "${services[*]}"),admin" >keygen.out 2>&1 || { cat keygen.out; exit 1; }

# nb_alias NAME HOST: NAME resolves to HOST's address on every host, from now on (each hosts file
# rewritten in place: `ip netns exec` bind-mounts it over /etc/hosts, so running processes see
# the change at their next lookup).
nb_alias() {
  local name=$1 host=$2 h f
  for h in "${nb_hosts[@]}"; do
    f=/etc/netns/${nb_ns[$h]}/hosts
    awk -v n="$name" -v ip="${nb_ip[$host]}" '{ out = $1; k = 0; for (i = 2; i <= NF; i++) if ($i != n) { out = out " " $i; k++ } }
      k > 0 { print out } END { print ip " " n }' "$f" >"$f.new"
    cat "$f.new" >"$f"
    rm -f "$f.new"
  done
}

# ---- The services' commands: docs/cluster.md's, plus what the run needs (see the header).
coord_ep=tcp://$coord_host:5555
ops_port=9100
reader_ops_port=9101
snapshot_interval=30
settings="--member-timeout $mt --snapshot-interval $snapshot_interval --sync-servers 2 (sync auto: s-easgd), trainers --threads 4, defaults otherwise"
declare -A cmd=()
set_commands() { # set_commands JOBDIR
  local j=$1
  cmd[coordinator]="shadowsync coordinator --listen tcp://0.0.0.0:5555 --shards 2 --readers 2 --train $train_list --test $test_file --member-timeout $mt --ops-listen 0.0.0.0:$ops_port --sync-servers 2 --snapshot-dir $j/snapshots --snapshot-interval $snapshot_interval --progress-interval 10"
  cmd[shard-0]="shadowsync shard --index 0 --coordinator $coord_ep --listen tcp://0.0.0.0:5556 --data-dir $j/shard-0.data"
  cmd[shard-1]="shadowsync shard --index 1 --coordinator $coord_ep --listen tcp://0.0.0.0:5556 --data-dir $j/shard-1.data"
  cmd[reader-0]="shadowsync reader --index 0 --coordinator $coord_ep --listen tcp://0.0.0.0:5557 --ops-listen 0.0.0.0:$reader_ops_port"
  cmd[reader-1]="shadowsync reader --index 1 --coordinator $coord_ep --listen tcp://0.0.0.0:5557 --ops-listen 0.0.0.0:$reader_ops_port"
  cmd[sync-1]="shadowsync sync-server --index 1 --coordinator $coord_ep --listen tcp://0.0.0.0:5558"
  cmd[trainer-0]="shadowsync trainer --coordinator $coord_ep --threads 4"
  cmd[trainer-1]="shadowsync trainer --coordinator $coord_ep --threads 4"
}

# ---- A job's services: the current process of each, every process's exit.
job=""
declare -A pid=() host=() inc=() expect=()
exits=() # "service incarnation host rc how"
start_svc() { # start_svc NAME HOST
  local name=$1 h=$2
  local -a words
  inc[$name]=$((${inc[$name]:-0} + 1))
  host[$name]=$h
  read -ra words <<<"${cmd[$name]}"
  nb_start "$job/$name.${inc[$name]}" "$h" "$job/logs/$name.${inc[$name]}.log" env SHADOWSYNC_CURVE_SERVER_KEY=keys/server.key \
    "SHADOWSYNC_CURVE_CLIENT_KEY=keys/$name.key" SHADOWSYNC_CURVE_AUTHORIZED_KEYS=keys/authorized_keys "${words[@]}"
  pid[$name]=${nb_pid[$job/$name.${inc[$name]}]}
  expect[$name]=run
  echo "$h" >"$job/where/$name"
  echo "$(now) start $name ${inc[$name]} $h ${pid[$name]}" >>"$job/events.log"
}
# reap NAME HOW: waits for NAME's current process (already ended or killed) and records its exit.
reap() {
  local name=$1 how=$2 rc=0
  wait "${pid[$name]}" 2>/dev/null || rc=$?
  exits+=("$name ${inc[$name]} ${host[$name]} $rc $how")
  echo "$(now) exit $name ${inc[$name]} $rc $how" >>"$job/events.log"
}
alive() { kill -0 "${pid[$1]}" 2>/dev/null; }

# Progress, every 0.25 s from the ops host (chaos_report.py poll: the coordinator's count and
# state, each reader's own count, on whichever host it runs now), at nice -10 so that its samples
# stay 0.25 s apart on this shared machine (it takes a few percent of a core).
start_poller() {
  nb_start "$job/poller" ops "$job/poller.err" nice -n -10 "$py" "$report" poll --job "$job" \
    --coordinator "$coord_host:$ops_port" --reader-port "$reader_ops_port"
  poller_pid=${nb_pid[$job/poller]}
}

# committed: the readers' highest counts so far, summed, and the time of the last rise:
# "SUM LAST_RISE_TIME".
committed() {
  awk -v a="$reader_rows0" -v b="$reader_rows1" '
    { if ($4 != "-" && $4 + 0 > m0) m0 = ($4 + 0 > a ? a : $4 + 0)
      if ($5 != "-" && $5 + 0 > m1) m1 = ($5 + 0 > b ? b : $5 + 0)
      if (m0 + m1 > s) { s = m0 + m1; last = $1 } }
    END { printf "%d %s\n", s, (last == "" ? 0 : last) }' "$job/poll.log" 2>/dev/null || echo "0 0"
}
# rate_last S: committed/s over the last S seconds of polls.
rate_last() {
  awk -v a="$reader_rows0" -v b="$reader_rows1" -v w="$1" '
    { if ($4 != "-" && $4 + 0 > m0) m0 = ($4 + 0 > a ? a : $4 + 0)
      if ($5 != "-" && $5 + 0 > m1) m1 = ($5 + 0 > b ? b : $5 + 0)
      t[n] = $1; s[n] = m0 + m1; n++ }
    END { if (n < 2) { print 0; exit }
      for (i = n - 1; i > 0 && t[n - 1] - t[i - 1] <= w; i--) ;
      dt = t[n - 1] - t[i]; printf "%d\n", (dt > 0 ? (s[n - 1] - s[i]) / dt : 0) }' "$job/poll.log" 2>/dev/null || echo 0
}
# sample_cpu: "time busy steal service.incarnation=jiffies ..." into cpu.log: the machine's busy
# CPU (user, nice, system, irq, softirq; steal apart) and each current process's (utime + stime),
# so that the report can tell the job's CPU from everything else's (this machine is shared).
sample_cpu() {
  local line s f
  line="$(now) $(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat)"
  for s in "${services[@]}"; do
    f=/proc/${pid[$s]}/stat
    [[ -r $f ]] || continue
    line+=" $s.${inc[$s]}=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "$f" 2>/dev/null || echo 0)"
  done
  echo "$line" >>"$job/cpu.log"
}
coordinator_done() { grep -qh '^{"command":"cluster"' "$job"/logs/coordinator.*.log 2>/dev/null; }
fmtn() { printf "%'d" "$1"; }

# check_crashes: a service whose process ended by itself while the job runs: recorded, and started
# again on its host (as an orchestrator would). Members exit 0 once the job is done.
check_crashes() {
  local s rc
  for s in "${services[@]}"; do
    [[ ${expect[$s]} == run ]] || continue
    alive "$s" && continue
    rc=0
    wait "${pid[$s]}" 2>/dev/null || rc=$?
    exits+=("$s ${inc[$s]} ${host[$s]} $rc ended")
    echo "$(now) exit $s ${inc[$s]} $rc ended" >>"$job/events.log"
    if coordinator_done || { ((rc == 0)) && [[ $s != coordinator ]]; }; then
      expect[$s]=done
      continue
    fi
    echo "$(now) crash $s ${inc[$s]} on ${host[$s]} exited $rc by itself" >>"$job/events.log"
    say "  CRASH: $s (#${inc[$s]} on ${host[$s]}) exited $rc by itself; starting it again (log $job/logs/$s.${inc[$s]}.log)"
    sleep 1
    start_svc "$s" "${host[$s]}"
  done
}

# fault ID KIND SERVICE SECONDS RATE: one fault, from its start to its heal (or restart).
fault() {
  local id=$1 kind=$2 s=$3 secs=$4 rate=$5 h=${host[$3]} extra=- to c
  read -r c _ < <(committed)
  case $kind in
    move) if [[ $h == *-b ]]; then to=${h%-b}; else to=$h-b; fi; extra=$to ;;
    slow) extra=$rate ;;
  esac
  echo "$(now) fault $id $kind $s $h $secs $extra" >>"$job/events.log"
  local what
  case $kind in
    kill) what="SIGKILL to $s on $h (pid ${pid[$s]}), started again there after ${secs}s" ;;
    pause) what="SIGSTOP to $s on $h (pid ${pid[$s]}), SIGCONT after ${secs}s" ;;
    partition) what="$h's link cut for ${secs}s" ;;
    slow) what="$h's link shaped to $rate for ${secs}s" ;;
    move) what="SIGKILL to $s on $h (pid ${pid[$s]}), started on $to after ${secs}s" ;;
  esac
  say "  fault $id $kind $s: $what; committed $(fmtn "$c") ($(awk -v c="$c" -v r="$rows" 'BEGIN { printf "%.1f", 100 * c / r }')%)"
  if ! alive "$s"; then
    echo "$(now) skipped $id $s was not running" >>"$job/events.log"
    say "  fault $id: $s was not running (see above)"
    return
  fi
  case $kind in
    kill | move)
      expect[$s]=killed
      sample_cpu
      kill -KILL "${pid[$s]}"
      reap "$s" killed
      local t_down
      t_down=$(now)
      if [[ $kind == move && $s == coordinator ]]; then nb_alias "$coord_host" "$to"; fi
      sleep "$(awk -v s="$secs" -v t="$t_down" -v n="$(now)" 'BEGIN { d = s - (n - t); printf "%.2f", (d > 0 ? d : 0) }')"
      start_svc "$s" "${to:-$h}"
      ;;
    pause)
      kill -STOP "${pid[$s]}"
      sleep "$secs"
      kill -CONT "${pid[$s]}"
      ;;
    partition)
      nb_cut "$h"
      sleep "$secs"
      nb_heal "$h"
      ;;
    slow)
      nb_shape "$h" "$rate"
      sleep "$secs"
      nb_unshape "$h"
      ;;
  esac
  echo "$(now) heal $id" >>"$job/events.log"
}

# run_job NAME WITH_FAULTS: the cluster from scratch on the home hosts, faults while it trains
# (WITH_FAULTS=1), until every process exited; writes NAME/{meta.json,poll.log,events.log,
# result.json,exits.tsv} and the logs.
run_job() {
  local name=$1 with_faults=$2
  job=$work/$name
  mkdir -p "$job/logs" "$job/where"
  : >"$job/events.log"
  : >"$job/poll.log"
  : >"$job/cpu.log"
  pid=() host=() inc=() expect=() exits=()
  nb_alias "$coord_host" "$coord_host"
  set_commands "$job"
  local t_start expected deadline
  t_start=$(now)
  expected=$((rows / rate))
  deadline=$((SECONDS + 3 * expected + 600))
  say "$name: $rows rows, expected about ${expected}s of training at $rate examples/s$( ((with_faults)) && echo ", faults from seed $seed")"
  start_svc coordinator "$coord_host"
  start_poller
  local s
  for s in "${services[@]:1}"; do start_svc "$s" "${home[$s]}"; done
  local next=1 next_at="" last_progress=$SECONDS c last_rise t_first="" r coord_gone=""
  while ((SECONDS < deadline)); do
    check_crashes
    sample_cpu
    local any=0
    for s in "${services[@]}"; do [[ ${expect[$s]} == run ]] && any=1; done
    ((any)) || break
    # Once the coordinator ended the job, members have --member-timeout + 20 s to learn it and exit.
    if [[ ${expect[coordinator]} == done ]]; then
      [[ -n $coord_gone ]] || coord_gone=$SECONDS
      if ((SECONDS > coord_gone + ${mt%.*} + 20)); then
        say "$name: members still running $((${mt%.*} + 20))s after the coordinator ended the job"
        break
      fi
    fi
    read -r c last_rise < <(committed)
    if [[ -z $t_first ]] && ((c > 0)); then
      t_first=$(now)
      say "$name: first commit; training"
      next_at=$(awk -v t="$t_first" -v a="$first_after" 'BEGIN { printf "%.3f", t + a }')
    fi
    if ((SECONDS - last_progress >= 60)) && [[ -n $t_first ]]; then
      last_progress=$SECONDS
      say "$name: $(fmtn "$c") committed ($(awk -v c="$c" -v r="$rows" 'BEGIN { printf "%.1f", 100 * c / r }')%), $(fmtn "$(rate_last 60)") examples/s over the last minute$( ((with_faults)) && echo "; faults so far: $((next - 1))")"
    fi
    if ((with_faults)) && [[ -n $t_first ]] && ((next <= n_faults_total)) && ((c < rows)) && ! coordinator_done; then
      local id kind svc secs gapv rt
      read -r id kind svc secs gapv rt <<<"${sched[next - 1]}"
      local due
      due=$(awk -v t="$next_at" -v g="$gapv" 'BEGIN { printf "%.3f", t + g }')
      if awk -v n="$(now)" -v d="$due" 'BEGIN { exit !(n >= d) }'; then
        # Enough training left for this fault and its recovery? (the last 30 s's rate)
        r=$(rate_last 30)
        if ((r > 0)) && awk -v c="$c" -v n="$rows" -v r="$r" -v s="$secs" 'BEGIN { exit !((n - c) / r < s + 30) }'; then
          say "$name: $(fmtn $((rows - c))) rows left, about $(((rows - c) / r))s at $(fmtn "$r")/s: no more faults"
          n_faults_total=$((next - 1))
        else
          fault "$id" "$kind" "$svc" "$secs" "$rt"
          next=$((next + 1))
          next_at=$(now)
        fi
      fi
    fi
    sleep 0.5
  done
  # Past the deadline: what runs still is killed and reported.
  for s in "${services[@]}"; do
    if [[ ${expect[$s]} == run ]]; then
      if alive "$s"; then
        kill -KILL "${pid[$s]}" 2>/dev/null || true
        reap "$s" hung
        say "$name: $s (#${inc[$s]} on ${host[$s]}) still running at the end: killed"
      fi
    fi
  done
  kill "$poller_pid" 2>/dev/null || true
  wait "$poller_pid" 2>/dev/null || true
  poller_pid=""
  grep -h '^{"command":"cluster"' "$job"/logs/coordinator.*.log | tail -1 >"$job/result.json" || true
  printf '%s\n' "${exits[@]}" >"$job/exits.tsv"
  $py - "$job/meta.json" <<PY
import json, sys
json.dump({"name": "$name", "rows": $rows, "reader_rows": [$reader_rows0, $reader_rows1], "seed": $seed,
           "faults_wanted": $want_faults, "minutes_wanted": $minutes, "files": $files, "test_rows": $test_rows,
           "started": $t_start, "ended": $(now), "date": "$(date +%Y-%m-%d)",
           "host_text": "$host_text", "settings": "$settings",
           "cluster": "coordinator, 2 shards, 2 readers, 1 sync server, 2 trainers (--threads 4), each on a host (network namespace) of its own, CURVE"},
          open(sys.argv[1], "w"))
PY
  # Disk: the shards' rows and the snapshots are not kept.
  rm -rf "$job"/shard-*.data "$job/snapshots"
  local res
  res=$(cat "$job/result.json")
  say "$name: done: $(grep -o '"ok":[a-z]*' <<<"$res" | head -1), committed $(grep -o '"examples_committed":[0-9]*' <<<"$res" | cut -d: -f2), test NE $(grep -o '"test_ne":[0-9.]*' <<<"$res" | cut -d: -f2)"
}

host_text="this project's 2-vCPU Debian 12 VM ($(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo))"
mapfile -t sched < <($py "$report" schedule --seed "$seed" --count 400 --gap "$gap" --seconds "$fault_seconds")
n_faults_total=${#sched[@]}
say "chaos run in $work: $rows rows ($files files), seed $seed, at least $want_faults faults (gap ${gap}s, length ${fault_seconds}s), --member-timeout $mt"
say "the schedule's first $want_faults faults: $(printf '%s; ' "${sched[@]:0:want_faults}" | awk '{ gsub(/ -;/, ";"); print }')"
if [[ $only != chaos ]]; then run_job free 0; fi
if [[ $only != free ]]; then run_job chaos 1; fi
[[ -n $only ]] && { keep=1; exit 0; }
stamp=${tag:-$(date +%Y%m%d-%H%M)}
mkdir -p "$out_dir"
rc=0
$py "$report" report --work "$work" --out "$out_dir/chaos-$stamp" || rc=$?
# The logs of a failed run stay; of a passing one, the event and poll logs go with the results.
((rc == 0)) || keep=1
say "results in $out_dir/chaos-$stamp.{txt,json,png}"
exit $rc
