# shellcheck shell=bash
# A test bed of several "hosts" on one machine, sourced by netns_cluster.sh (after
# `set -euo pipefail`). Each host is a network namespace of its own with one veth whose other end
# is a port of a bridge (br0) in a hub namespace; every host has an address in $nb_subnet.0/24 and
# a host name of its own (processes run in a UTS namespace whose host name is set), and an
# /etc/netns/NS/hosts file (which `ip netns exec` mounts over /etc/hosts) that maps every host
# name of the bed to its address. Links are cut by taking the host's port on the bridge down (the
# host's own side loses its carrier; TCP connections survive, as across a broken switch port)
# and shaped with tc tbf on both sides of the veth. Nothing outside the bed is touched: the root
# namespace's addresses, routes and firewall stay as they are.
#
#   nb_available                  0 when namespaces, veths, bridges, UTS namespaces and tbf can be made
#                                 here; otherwise 1 with the reason in $nb_why
#   nb_add_host HOST              registers HOST (before nb_up); addresses in the order of the calls
#   nb_up                         makes the hub, the bridge, every host's namespace, veth, address and
#                                 hosts file
#   nb_start NAME HOST LOG CMD..  runs CMD on HOST (its namespace, its host name; the working
#                                 directory is the caller's), stdout and stderr to LOG; its pid in
#                                 ${nb_pid[NAME]}
#   nb_exec HOST CMD...           runs CMD on HOST in the foreground
#   nb_cut HOST / nb_heal HOST    the host's link down / up
#   nb_shape HOST RATE            tbf at RATE (e.g. 100mbit) on both directions of the host's link
#   nb_unshape HOST
#   nb_down                       stops every process in the bed's namespaces (SIGTERM, then SIGKILL
#                                 after 3 s), deletes the namespaces (the veths and the bridge go
#                                 with them) and the /etc/netns files; idempotent, for traps
# A bed's names carry the pid of the script that made it (ssn<PID>-...), so leftovers of a run
# that was killed outright (no trap ran) are recognized and removed by the next nb_up.

nb_subnet=${nb_subnet:-10.213.0}
nb_tag="ssn$$"
nb_hub="$nb_tag-hub"
nb_hosts=()
declare -A nb_ip=() nb_ns=() nb_port=() nb_pid=()
nb_made=false
nb_run_netns_before=false
[[ -d /run/netns ]] && mountpoint -q /run/netns && nb_run_netns_before=true
nb_etc_netns_before=false
[[ -d /etc/netns ]] && nb_etc_netns_before=true
# shellcheck disable=SC2034 # nb_why is read by the sourcing script
nb_why=""

# shellcheck disable=SC2034 # nb_why is read by the sourcing script
nb_available() {
  local probe="$nb_tag-probe" probe2="$nb_tag-probe2"
  if ((EUID != 0)); then
    nb_why="not root (uid $EUID): network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN"
    return 1
  fi
  local tool
  for tool in ip tc unshare hostname; do
    command -v "$tool" >/dev/null 2>&1 || { nb_why="no '$tool' command"; return 1; }
  done
  local out
  if ! out=$(ip netns add "$probe" 2>&1); then
    nb_why="ip netns add failed: $out"
    return 1
  fi
  local ok=true
  if ! out=$(ip netns add "$probe2" 2>&1); then
    nb_why="ip netns add failed: $out"
    ok=false
  elif ! out=$(ip -n "$probe" link add br0 type bridge 2>&1); then
    nb_why="cannot make a bridge in a namespace: $out"
    ok=false
  elif ! out=$(ip link add p0 netns "$probe" type veth peer name eth0 netns "$probe2" 2>&1); then
    nb_why="cannot make a veth pair between namespaces: $out"
    ok=false
  elif ! out=$(tc -n "$probe" qdisc add dev p0 root tbf rate 100mbit burst 256kb latency 50ms 2>&1); then
    nb_why="tc cannot add a tbf qdisc: $out"
    ok=false
  elif ! out=$(ip netns exec "$probe2" unshare --uts sh -c 'hostname nb-probe && [ "$(hostname)" = nb-probe ]' 2>&1); then
    nb_why="cannot set a host name in a UTS namespace (unshare --uts): $out"
    ok=false
  fi
  ip netns del "$probe2" 2>/dev/null || true
  ip netns del "$probe" 2>/dev/null || true
  $ok
}

nb_add_host() {
  local n=$((${#nb_hosts[@]} + 10))
  ((n < 250)) || { echo "netns_lib: too many hosts" >&2; return 1; }
  nb_hosts+=("$1")
  nb_ip[$1]="$nb_subnet.$n"
  nb_ns[$1]="$nb_tag-$1"
  nb_port[$1]="p$n" # the host's port on the bridge, in the hub namespace
}

# Namespaces and /etc/netns directories of beds whose script is gone.
nb_remove_stale() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^ssn[0-9]*-' || true); do
    pid=${ns#ssn}
    pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null && continue
    echo "netns_lib: removing $ns, left by a run (pid $pid) that is gone"
    nb_kill_ns "$ns"
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  for ns in /etc/netns/ssn[0-9]*-*; do
    [[ -e $ns ]] || continue
    pid=${ns#/etc/netns/ssn}
    pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || rm -rf "$ns"
  done
}

nb_up() {
  nb_remove_stale
  nb_made=true
  ip netns add "$nb_hub"
  ip -n "$nb_hub" link set lo up
  ip -n "$nb_hub" link add br0 type bridge
  ip -n "$nb_hub" link set br0 up
  local h hosts_file
  hosts_file=$(mktemp)
  {
    echo "127.0.0.1 localhost"
    for h in "${nb_hosts[@]}"; do echo "${nb_ip[$h]} $h"; done
  } >"$hosts_file"
  for h in "${nb_hosts[@]}"; do
    ip netns add "${nb_ns[$h]}"
    ip link add "${nb_port[$h]}" netns "$nb_hub" type veth peer name eth0 netns "${nb_ns[$h]}"
    ip -n "$nb_hub" link set "${nb_port[$h]}" master br0
    ip -n "$nb_hub" link set "${nb_port[$h]}" up
    ip -n "${nb_ns[$h]}" link set lo up
    ip -n "${nb_ns[$h]}" addr add "${nb_ip[$h]}/24" dev eth0
    ip -n "${nb_ns[$h]}" link set eth0 up
    mkdir -p "/etc/netns/${nb_ns[$h]}"
    cp "$hosts_file" "/etc/netns/${nb_ns[$h]}/hosts"
  done
  rm -f "$hosts_file"
}

nb_start() {
  local name=$1 host=$2 log=$3
  shift 3
  ip netns exec "${nb_ns[$host]}" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" "$@" >"$log" 2>&1 &
  nb_pid[$name]=$!
}

nb_exec() {
  local host=$1
  shift
  ip netns exec "${nb_ns[$host]}" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

nb_cut() { ip -n "$nb_hub" link set "${nb_port[$1]}" down; }
nb_heal() { ip -n "$nb_hub" link set "${nb_port[$1]}" up; }

nb_shape() {
  local rate=$2
  tc -n "$nb_hub" qdisc replace dev "${nb_port[$1]}" root tbf rate "$rate" burst 256kb latency 50ms
  tc -n "${nb_ns[$1]}" qdisc replace dev eth0 root tbf rate "$rate" burst 256kb latency 50ms
}

nb_unshape() {
  tc -n "$nb_hub" qdisc del dev "${nb_port[$1]}" root 2>/dev/null || true
  tc -n "${nb_ns[$1]}" qdisc del dev eth0 root 2>/dev/null || true
}

# nb_kill_ns NS: every process in namespace NS (all of them started by the bed), SIGTERM, then
# SIGKILL for those still there 3 s later.
nb_kill_ns() {
  local pids
  pids=$(ip netns pids "$1" 2>/dev/null || true)
  [[ -n $pids ]] || return 0
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 30); do
    pids=$(ip netns pids "$1" 2>/dev/null || true)
    [[ -n $pids ]] || return 0
    sleep 0.1
  done
  kill -KILL $pids 2>/dev/null || true
}

nb_down() {
  $nb_made || return 0
  nb_made=false
  local h name
  for name in "${!nb_pid[@]}"; do kill -TERM "${nb_pid[$name]}" 2>/dev/null || true; done
  for h in "${nb_hosts[@]}"; do nb_kill_ns "${nb_ns[$h]}"; done
  for name in "${!nb_pid[@]}"; do kill -KILL "${nb_pid[$name]}" 2>/dev/null || true; done
  for h in "${nb_hosts[@]}"; do
    ip netns del "${nb_ns[$h]}" 2>/dev/null || true
    rm -rf "/etc/netns/${nb_ns[$h]}"
  done
  ip netns del "$nb_hub" 2>/dev/null || true
  $nb_etc_netns_before || rmdir /etc/netns 2>/dev/null || true
  # /run/netns was mounted by the first `ip netns add`: unmounted again when this bed made it and
  # no namespace is left in it.
  if ! $nb_run_netns_before && mountpoint -q /run/netns 2>/dev/null && [[ -z "$(ls -A /run/netns 2>/dev/null)" ]]; then
    umount /run/netns 2>/dev/null || true
    rmdir /run/netns 2>/dev/null || true
  fi
}
