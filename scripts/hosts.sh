#!/bin/bash
# Separate test hosts on one machine: a Muster cluster of a controller host,
# a login host and N compute hosts, each its own network, UTS and mount
# namespace (its own hostname, /etc/hosts, /tmp and spool), joined by a
# bridge that lives in a namespace of its own, so the machine's own network
# is never touched and every address used exists only inside these
# namespaces. Job output goes to a directory every host sees, as a
# cluster's shared filesystem. Needs root (namespaces, veth, bridge).
#
#   scripts/hosts.sh up N        controller "ctl", "login", compute "cn1".."cnN";
#                                starts musterd on ctl and an agent on every
#                                other host (on login it serves only the
#                                commands' credentials)
#   scripts/hosts.sh exec HOST CMD...   runs CMD on HOST (with MUSTER_CONF set)
#   scripts/hosts.sh down        stops everything and removes what up made
#   scripts/hosts.sh list        the hosts and their addresses
#   scripts/hosts.sh pids HOST   the processes running on HOST
#   scripts/hosts.sh cut HOST    cuts HOST's link (its veth on the bridge goes
#                                down: nothing gets in or out, no connection
#                                is told); heal HOST brings it back
#
# MUSTER_HOSTS_AUTH=slurm (the default: a shared slurm.key) or munge (a
# munged on every host, all with one munge.key, each on its own socket in
# the host's /tmp) picks AuthType.
# MUSTER_HOSTS_SLURMD_TIMEOUT (default 30) is the cluster's SlurmdTimeout,
# MUSTER_HOSTS_CRED_EXPIRE (default Slurm's 120) its AuthInfo=cred_expire
# (a requeued job waits that long and a second before it starts again).
# Jobs are confined to their GPUs (cgroup.conf ConstrainDevices=yes).
# MUSTER_HOSTS_DIR (default /var/tmp/muster-hosts) holds the cluster; it may
# not be under /tmp, which each host replaces with its own. MUSTER_HOSTS_NET
# (default 10.231.7) is the /24 the hosts live in; MUSTER_BIN (default
# build/bin) the binaries. Several clusters can coexist with different dirs
# and nets. cn1 hosts two nodes (node01, node02), every other compute host
# one (MUSTER_HOSTS_NODES=K: every compute host K); each node has 4 CPUs
# (MUSTER_HOSTS_CPUS=N: N), 4000 MB and 2 emulated GPUs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${MUSTER_HOSTS_DIR:-/var/tmp/muster-hosts}
net=${MUSTER_HOSTS_NET:-10.231.7}
bin=${MUSTER_BIN:-$root/build/bin}
auth=${MUSTER_HOSTS_AUTH:-slurm}
export MUSTER_HOSTS_DIR=$dir MUSTER_HOSTS_NET=$net MUSTER_BIN=$bin MUSTER_HOSTS_AUTH=$auth
# Names of the namespaces and links derive from the directory, so two
# clusters never collide.
tag=mh$(echo -n "$dir" | md5sum | cut -c1-6)

die() { echo "hosts.sh: $*" >&2; exit 1; }
need_tools() {
  local pkgs=()
  command -v ip >/dev/null || pkgs+=(iproute2)
  command -v nsenter >/dev/null || pkgs+=(util-linux)
  if ((${#pkgs[@]})); then
    echo "hosts.sh: installing ${pkgs[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
  fi
}

hosts() { cat "$dir/hosts.list"; }
addr_of() { awk -v h="$1" '$2 == h {print $1}' "$dir/hosts.list"; }

# Runs a command inside HOST's namespaces.
in_host() {
  local h=$1; shift
  nsenter --net="/run/netns/$tag-$h" --uts="$dir/ns/$h.uts" --mount="$dir/ns/$h.mnt" -- "$@"
}

make_host() {
  local h=$1 ip=$2 i=$3
  mkdir -p "$dir/$h/tmp" "$dir/$h/spool" "$dir/ctl"
  chmod 1777 "$dir/$h/tmp"
  ip netns add "$tag-$h"
  ip link add "$tag-$i" type veth peer name eth0 netns "$tag-$h"
  ip link set "$tag-$i" netns "$tag-sw"
  ip -n "$tag-sw" link set "$tag-$i" master br0 up
  ip -n "$tag-$h" link set lo up
  ip -n "$tag-$h" addr add "$ip/24" dev eth0
  ip -n "$tag-$h" link set eth0 up
  touch "$dir/ns/$h.uts" "$dir/ns/$h.mnt"
  # The UTS and mount namespaces are kept by bind mounts of their files;
  # inside, the host gets its name, the cluster's /etc/hosts and its own
  # /tmp, and every host but ctl an empty directory where the controller's
  # state is (its unix sockets included: only TCP reaches musterd there).
  local hide=""
  [[ "$h" != ctl ]] && hide="&& mount -t tmpfs -o size=1m,mode=0755 none '$dir/ctl'"
  unshare --uts="$dir/ns/$h.uts" --mount="$dir/ns/$h.mnt" --propagation private \
    sh -c "hostname $h && mount --bind '$dir/etc-hosts' /etc/hosts && mount --bind '$dir/$h/tmp' /tmp $hide"
}

write_config() {
  local n=$1
  mkdir -p "$dir/conf" "$dir/shared" "$dir/ctl/state"
  chmod 1777 "$dir/shared"
  if [[ $auth == munge ]]; then
    head -c 1024 /dev/urandom > "$dir/conf/munge.key"
    chmod 0400 "$dir/conf/munge.key"
  else
    head -c 32 /dev/urandom > "$dir/conf/slurm.key"
    chmod 0600 "$dir/conf/slurm.key"
  fi
  {
    echo "# Written by scripts/hosts.sh: a cluster of separate test hosts."
    echo "ClusterName=hosts"
    echo "SlurmctldHost=ctl($net.1)"
    echo "SlurmctldPort=6817"
    echo "SlurmctldParameters=enable_configless"
    if [[ $auth == munge ]]; then
      echo "AuthType=auth/munge"
      echo "AuthInfo=socket=/tmp/munge.socket"
    else
      echo "AuthType=auth/slurm"
      if [[ -n "${MUSTER_HOSTS_CRED_EXPIRE:-}" ]]; then
        echo "AuthInfo=cred_expire=$MUSTER_HOSTS_CRED_EXPIRE"
      fi
    fi
    echo "StateSaveLocation=$dir/ctl/state"
    echo "SlurmdSpoolDir=$dir/%n/spool"
    echo "SlurmdTimeout=${MUSTER_HOSTS_SLURMD_TIMEOUT:-30}"
    echo "KillWait=5"
    echo "GresTypes=gpu"
    local nodes=() i=1 c
    for ((c = 1; c <= n; c++)); do
      local count=${MUSTER_HOSTS_NODES:-1}
      [[ -z "${MUSTER_HOSTS_NODES:-}" ]] && ((c == 1)) && count=2
      for ((k = 0; k < count; k++)); do
        local name
        name=$(printf "node%02d" "$i")
        echo "NodeName=$name NodeHostname=cn$c NodeAddr=$net.$((10 + c)) CPUs=${MUSTER_HOSTS_CPUS:-4} RealMemory=4000 Gres=gpu:2"
        nodes+=("$name")
        i=$((i + 1))
      done
    done
    echo "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } > "$dir/conf/muster.conf"
  echo "ConstrainDevices=yes" > "$dir/conf/cgroup.conf"
}

# The bridge end of HOST's veth: its place in hosts.list names it.
link_of() {
  local i
  i=$(awk -v h="$1" '$2 == h {print NR - 1}' "$dir/hosts.list")
  [[ -n "$i" ]] || die "no host '$1' in $dir"
  echo "$tag-$i"
}

wait_for() {
  local what=$1; shift
  for _ in $(seq 200); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  die "timed out waiting for $what"
}

up() {
  local n=${1:-}
  [[ "$n" =~ ^[1-9][0-9]?$ ]] || die "up: give the number of compute hosts (1-99), not '${n}'"
  [[ $auth == slurm || $auth == munge ]] || die "MUSTER_HOSTS_AUTH=$auth: expected slurm or munge"
  [[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, veth, bridge)"
  case "$dir/" in /tmp/*) die "MUSTER_HOSTS_DIR=$dir is under /tmp, which each host replaces";; esac
  [[ -e "$dir/hosts.list" ]] && die "$dir already holds a cluster; run 'down' first"
  [[ -x "$bin/musterd" && -x "$bin/muster-agent" ]] || die "no musterd/muster-agent in $bin (build first)"
  bin_real=$(readlink -f "$bin")
  case "$bin_real/" in
    /tmp/*) die "the programs in $bin are under /tmp, which each host replaces with its own: build outside /tmp (or set MUSTER_BIN to a copy elsewhere)";;
  esac
  need_tools
  mkdir -p "$dir/ns"
  # The namespace files are bind-mounted here: the directory must be a
  # private mount for that.
  mount --bind "$dir/ns" "$dir/ns"
  mount --make-private "$dir/ns"
  {
    echo "$net.1 ctl"
    echo "$net.2 login"
    for ((c = 1; c <= n; c++)); do echo "$net.$((10 + c)) cn$c"; done
  } > "$dir/hosts.list"
  { echo "127.0.0.1 localhost"; cat "$dir/hosts.list"; } > "$dir/etc-hosts"
  ip netns add "$tag-sw"
  ip -n "$tag-sw" link add br0 type bridge
  ip -n "$tag-sw" link set br0 up
  local i=0
  while read -r ip h; do
    make_host "$h" "$ip" "$i"
    i=$((i + 1))
  done < "$dir/hosts.list"
  write_config "$n"
  # Node names resolve to their host's address, as a site's name service
  # has them: MASTER_ADDR=$(scontrol show hostnames ... | head -n1) then
  # reaches the first node from every task.
  sed -n 's/^NodeName=\([^ ]*\) .*NodeAddr=\([^ ]*\).*/\2 \1/p' "$dir/conf/muster.conf" \
    >> "$dir/etc-hosts"
  export MUSTER_CONF=$dir/conf/muster.conf
  if [[ $auth == munge ]]; then
    local h
    for h in $(awk '{print $2}' "$dir/hosts.list"); do
      # munged refuses to run as root unless forced; its socket is in the
      # host's own /tmp, so each host reaches only its own.
      in_host "$h" munged --force --socket=/tmp/munge.socket --key-file="$dir/conf/munge.key" \
        --pid-file=/tmp/munged.pid --log-file="$dir/$h/munged.log" --seed-file="$dir/$h/munged.seed"
    done
  fi
  in_host ctl setsid "$bin/musterd" --conf "$MUSTER_CONF" > "$dir/ctl/musterd.log" 2>&1 < /dev/null &
  wait_for "musterd on ctl" in_host ctl test -S "$dir/ctl/state/musterd.sock"
  # An agent on every host but the controller's: the compute hosts' serve
  # their nodes, the login host's only the commands' credentials.
  for h in login $(seq -f "cn%g" 1 "$n"); do
    in_host "$h" setsid "$bin/muster-agent" --conf "$MUSTER_CONF" \
      > "$dir/$h/agent.log" 2>&1 < /dev/null &
  done
  wait_for "the login host's credential service" test -S "$dir/login/spool/login/auth.sock"
  local nodes
  nodes=$(grep -c '^NodeName=' "$MUSTER_CONF")
  wait_for "$nodes nodes to register" bash -c \
    "[[ \$('$0' exec ctl '$bin/sinfo' -h -N -o %t | grep -c idle) -eq $nodes ]]"
  echo "hosts.sh: up: controller ctl ($net.1), login ($net.2), compute cn1..cn$n ($nodes nodes)"
  echo "  configuration:  $MUSTER_CONF  (auth/$auth, key $dir/conf/$([[ $auth == munge ]] && echo munge || echo slurm).key)"
  echo "  shared output:  $dir/shared"
  echo "  logs:           $dir/ctl/musterd.log, $dir/cnN/agent.log"
  echo "  run a command:  MUSTER_HOSTS_DIR=$dir $0 exec login sbatch -D $dir/shared --wrap hostname"
  echo "  remove it all:  MUSTER_HOSTS_DIR=$dir $0 down"
}

down() {
  [[ -e "$dir/hosts.list" || -d "$dir/ns" ]] || { echo "hosts.sh: nothing to remove in $dir"; return 0; }
  local h
  for h in $(awk '{print $2}' "$dir/hosts.list" 2>/dev/null); do
    # Everything that runs in the host's network namespace, jobs included.
    local pids
    pids=$(ip netns pids "$tag-$h" 2>/dev/null || true)
    [[ -n "$pids" ]] && kill -TERM $pids 2>/dev/null || true
  done
  sleep 0.5
  for h in $(awk '{print $2}' "$dir/hosts.list" 2>/dev/null); do
    local pids
    pids=$(ip netns pids "$tag-$h" 2>/dev/null || true)
    [[ -n "$pids" ]] && kill -KILL $pids 2>/dev/null || true
    umount "$dir/ns/$h.uts" "$dir/ns/$h.mnt" 2>/dev/null || true
    ip netns del "$tag-$h" 2>/dev/null || true
  done
  ip netns del "$tag-sw" 2>/dev/null || true
  umount "$dir/ns" 2>/dev/null || true
  rm -rf "$dir"
  echo "hosts.sh: down: removed $dir and its namespaces"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  list) cat "$dir/hosts.list" ;;
  pids) ip netns pids "$tag-${2:?pids: give a host}" ;;
  cut) ip -n "$tag-sw" link set "$(link_of "${2:?cut: give a host}")" down ;;
  heal) ip -n "$tag-sw" link set "$(link_of "${2:?heal: give a host}")" up ;;
  exec)
    shift
    h=${1:-}
    [[ -n "$h" ]] && grep -q " $h\$" "$dir/hosts.list" 2>/dev/null || die "exec: no host '$h' in $dir"
    shift
    [[ $# -gt 0 ]] || die "exec: give a command to run on $h"
    export MUSTER_CONF=$dir/conf/muster.conf PATH=$bin:$PATH
    in_host "$h" "$@"
    ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
esac
