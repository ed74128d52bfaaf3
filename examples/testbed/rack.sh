#!/usr/bin/env bash
# An emulated rack in network namespaces: N worker hosts, one driver host and K extra hosts (hosts without
# data, for switch shards), each joined by its own shaped veth link to a switch namespace that bridges the
# links (docs/testbed.md).
#
#   rack.sh up --workers N [--extra-hosts K] [--rate 200mbit] [--mtu 9000] [--loss PCT] [--p4-links]
#   rack.sh down
#   rack.sh exec HOST CMD [ARG...]
#   rack.sh hosts
#   rack.sh p4-hosts
#
# Needs root (ip netns) and the Debian packages iproute2 and, for --loss, nftables. Exit codes: 0 ok,
# 1 the rack could not be built (whatever was made is removed), a rack is already up or no such host,
# 2 usage, not root or a tool missing; exec exits with its command's code.
set -euo pipefail

readonly prog="rack.sh"
readonly prefix="rk-"
readonly switch_ns="${prefix}sw"
readonly driver_ns="${prefix}drv"
readonly max_workers=8
readonly max_extra=8
# One private subnet that exists only inside the rack's namespaces.
readonly subnet="10.77.0"
readonly switch_addr="$subnet.1"
readonly driver_addr="$subnet.2"
readonly bridge="br0"
# --p4-links: a second shaped link from every worker to an unbridged port of the switch namespace, for a P4
# switch (BMv2) that owns those ports; its own subnet, and the switch's dataplane address on it.
readonly p4_subnet="10.78.0"
readonly p4_switch_ip="$p4_subnet.254"
readonly p4_switch_mac="02:00:00:00:00:fe"
# The facts this machine was checked against: with burst 256kb and latency 100ms one TCP stream
# reaches a 200mbit rate; a smaller burst or latency leaves TCP far below it.
readonly min_burst_bytes=$((256 * 1024))
readonly tbf_latency="100ms"
# tbf keeps its burst in 32 bits; 10 ms at 100gbit fits.
readonly max_rate_bits=100000000000

usage_line="usage: $prog up --workers N [--extra-hosts K] [--rate RATE] [--mtu MTU] [--loss PCT] [--p4-links] | down | exec HOST CMD... | hosts | p4-hosts"

usage_error() {
    echo "$prog: $1" >&2
    echo "$usage_line" >&2
    exit 2
}

help() {
    cat <<EOF
$usage_line

  up --workers N   build the rack: hosts ${prefix}w1..${prefix}wN (N = 1..$max_workers) and ${driver_ns}, each linked
                   to the switch namespace $switch_ns, whose bridge has $switch_addr
  --extra-hosts K  also hosts ${prefix}x1..${prefix}xK (K = 0..$max_extra, default 0) with $subnet.(30+I), linked
                   like the workers (no --loss): hosts without data, for switch shards
  --rate RATE      tbf rate on both ends of every link, in bit, kbit, mbit or gbit (default 200mbit)
  --mtu MTU        MTU of both ends of every link and of the bridge, 68..65535 (default 9000)
  --loss PCT       drop PCT percent (0..99.99) of the UDP datagrams in each direction of every
                   worker's link, at random (nftables in the worker); default 0
  --p4-links       also give every worker ${prefix}wI a second link, sml0 with $p4_subnet.I, to port
                   p4-wI of $switch_ns, shaped the same and not on the bridge: the ports a P4 switch
                   (BMv2) owns; the workers reach its dataplane address $p4_switch_ip through them
  down             stop every process in the rack's namespaces and delete them (safe to repeat)
  exec HOST CMD    run CMD in host HOST (${prefix}w1, w1, sw, drv ...)
  hosts            print each host of the rack that is up and its address
  p4-hosts         print the host table of the P4 links (IPv4, switch port, MAC a line), for
                   bin/switchml-controller --hosts

Addresses: $switch_ns $switch_addr, $driver_ns $driver_addr, ${prefix}wI $subnet.(10+I), ${prefix}xI $subnet.(30+I).
EOF
}

require_root() {
    if [[ $EUID -ne 0 ]]; then
        echo "$prog: ip netns needs root: run it as root (e.g. with sudo)" >&2
        exit 2
    fi
}

# require_tool COMMAND DEBIAN_PACKAGE
require_tool() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "$prog: '$1' not found: install the Debian package $2" >&2
        exit 2
    fi
}

# The rack's namespaces that exist now, one a line.
rack_namespaces() {
    ip netns list | awk -v p="$prefix" '
        index($1, p) == 1 && (substr($1, length(p) + 1) ~ /^(sw|drv|w[0-9]+|x[0-9]+)$/) { print $1 }'
}

# Host name as given, or with the rack's prefix added (w1 -> rk-w1).
host_namespace() {
    local host="$1"
    [[ $host == "$prefix"* ]] || host="$prefix$host"
    if ! rack_namespaces | grep -qx -- "$host"; then
        echo "$prog: no host '$1' in the rack (rack.sh hosts lists them)" >&2
        exit 1
    fi
    echo "$host"
}

# Rate in bits per second from tc's notation (200mbit -> 200000000).
rate_bits() {
    local number="${1%%[a-zA-Z]*}" unit="${1##*[0-9]}"
    case "${unit,,}" in
        bit) echo "$number" ;;
        kbit) echo $((number * 1000)) ;;
        mbit) echo $((number * 1000000)) ;;
        gbit) echo $((number * 1000000000)) ;;
    esac
}

# tbf burst in bytes: the checked 256 KiB, or 10 ms of traffic at the rate when that is more, since a
# bucket smaller than what the rate moves between two timer ticks keeps tbf below its rate.
burst_bytes() {
    local per_10ms=$(($(rate_bits "$1") / 8 / 100))
    echo $((per_10ms > min_burst_bytes ? per_10ms : min_burst_bytes))
}

# shape NAMESPACE INTERFACE: tbf at the rack's rate on the interface's egress.
shape() {
    ip -n "$1" link set "$2" mtu "$mtu"
    tc -n "$1" qdisc add dev "$2" root tbf rate "$rate" burst "$burst" latency "$tbf_latency"
}

# link_host NAMESPACE ADDRESS PORT: a veth pair from the host's eth0 to PORT on the switch's bridge.
link_host() {
    local ns="$1" addr="$2" port="$3"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # Both ends are created inside the rack's namespaces: no interface ever appears outside them.
    ip -n "$switch_ns" link add "$port" type veth peer name eth0 netns "$ns"
    shape "$switch_ns" "$port"
    shape "$ns" eth0
    ip -n "$switch_ns" link set "$port" master "$bridge"
    ip -n "$switch_ns" link set "$port" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
}

# p4_link I: worker I's second link, sml0 ($p4_subnet.I, MAC 02:00:00:00:00:I) to the unbridged port p4-wI,
# shaped as the first. The P4 switch answers no ARP, so the worker knows its MAC; no IPv6, so that the
# switch's ports see nothing but what the workers send it.
p4_link() {
    local i="$1" ns="${prefix}w$1"
    ip -n "$switch_ns" link add "p4-w$i" type veth peer name sml0 netns "$ns"
    ip netns exec "$switch_ns" sysctl -qw "net.ipv6.conf.p4-w$i.disable_ipv6=1"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.sml0.disable_ipv6=1
    shape "$switch_ns" "p4-w$i"
    shape "$ns" sml0
    ip -n "$ns" link set sml0 address "$(p4_mac "$i")"
    ip -n "$ns" addr add "$p4_subnet.$i/24" dev sml0
    ip -n "$ns" link set sml0 up
    ip -n "$ns" neigh replace "$p4_switch_ip" lladdr "$p4_switch_mac" dev sml0 nud permanent
    ip -n "$switch_ns" link set "p4-w$i" up
}

p4_mac() {
    printf '02:00:00:00:00:%02x' "$1"
}

# add_loss NAMESPACE: drop loss% of the UDP datagrams received and sent on the host's eth0. The netdev
# hooks leave loopback alone, and a datagram dropped at egress vanishes the way a lost one does (the
# sender sees no error), where a drop in the IP output hook would fail the sender's send call.
add_loss() {
    local ns="$1" threshold
    threshold="$(awk -v p="$loss" 'BEGIN { printf "%d", p * 100 + 0.5 }')"
    ip netns exec "$ns" nft -f - <<EOF
table netdev ${prefix}loss {
    chain ingress {
        type filter hook ingress device "eth0" priority 0;
        meta l4proto udp numgen random mod 10000 < $threshold drop
    }
    chain egress {
        type filter hook egress device "eth0" priority 0;
        meta l4proto udp numgen random mod 10000 < $threshold drop
    }
}
EOF
}

cmd_up() {
    workers=""
    extra=0
    rate="200mbit"
    mtu=9000
    loss=0
    p4_links=0
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --p4-links)
                p4_links=1
                shift
                ;;
            --workers|--extra-hosts|--rate|--mtu|--loss)
                [[ $# -ge 2 ]] || usage_error "$1 needs a value"
                case "$1" in
                    --workers) workers="$2" ;;
                    --extra-hosts) extra="$2" ;;
                    --rate) rate="$2" ;;
                    --mtu) mtu="$2" ;;
                    --loss) loss="$2" ;;
                esac
                shift 2
                ;;
            *) usage_error "unknown argument to up: '$1'" ;;
        esac
    done
    [[ -n $workers ]] || usage_error "up needs --workers N"
    [[ $workers =~ ^[1-9][0-9]*$ && $workers -le $max_workers ]] \
        || usage_error "--workers must be 1..$max_workers, got '$workers'"
    [[ $extra =~ ^[0-9]$ && $extra -le $max_extra ]] || usage_error "--extra-hosts must be 0..$max_extra, got '$extra'"
    [[ $rate =~ ^[1-9][0-9]{0,8}([kKmMgG]?[bB][iI][tT])$ ]] \
        || usage_error "--rate must be a whole number with bit, kbit, mbit or gbit (e.g. 200mbit), got '$rate'"
    [[ $(rate_bits "$rate") -le $max_rate_bits ]] || usage_error "--rate must be at most 100gbit, got '$rate'"
    [[ $mtu =~ ^[1-9][0-9]{1,4}$ && $mtu -ge 68 && $mtu -le 65535 ]] \
        || usage_error "--mtu must be 68..65535, got '$mtu'"
    [[ $loss =~ ^[0-9]{1,2}(\.[0-9]{1,2})?$ ]] \
        || usage_error "--loss must be a percentage 0..99.99 with at most two decimals, got '$loss'"
    burst="$(burst_bytes "$rate")"

    require_root
    require_tool ip iproute2
    require_tool tc iproute2
    if [[ $loss =~ [1-9] ]]; then
        require_tool nft nftables
    fi
    if [[ -n "$(rack_namespaces)" ]]; then
        echo "$prog: a rack is already up ($(rack_namespaces | sort -V | paste -sd ' ')): run '$prog down' first" >&2
        exit 1
    fi

    # From here on, a failure or an interrupt removes whatever was built.
    trap 'echo "$prog: up did not finish: removing what it built" >&2; teardown' EXIT
    trap 'exit 130' INT TERM

    ip netns add "$switch_ns"
    ip -n "$switch_ns" link set lo up
    ip -n "$switch_ns" link add "$bridge" type bridge
    ip -n "$switch_ns" link set "$bridge" mtu "$mtu"
    ip -n "$switch_ns" addr add "$switch_addr/24" dev "$bridge"

    link_host "$driver_ns" "$driver_addr" p-drv
    local i
    for ((i = 1; i <= workers; i++)); do
        link_host "${prefix}w$i" "$subnet.$((10 + i))" "p-w$i"
        if [[ $loss =~ [1-9] ]]; then
            add_loss "${prefix}w$i"
        fi
        if ((p4_links)); then
            p4_link "$i"
        fi
    done
    for ((i = 1; i <= extra; i++)); do
        link_host "${prefix}x$i" "$subnet.$((30 + i))" "p-x$i"
    done
    # Pinned after the ports joined: a bridge otherwise follows its smallest port's MTU.
    ip -n "$switch_ns" link set "$bridge" mtu "$mtu"
    ip -n "$switch_ns" link set "$bridge" up

    trap - EXIT INT TERM
    echo "$prog: rack up: workers $workers$( ((extra)) && echo ", extra hosts $extra"), rate $rate (tbf burst $burst bytes, latency $tbf_latency)," \
        "mtu $mtu, UDP loss ${loss}% each way on every worker link$( ((p4_links)) && echo ", P4 links to p4-w1..p4-w$workers")"
    print_hosts
}

# Stops the processes left in the rack's namespaces, then deletes the namespaces (their veths go with them).
teardown() {
    local ns pids
    for ns in $(rack_namespaces); do
        pids="$(ip netns pids "$ns" 2>/dev/null || true)"
        if [[ -n $pids ]]; then
            # shellcheck disable=SC2086 # one pid a word
            kill -TERM $pids 2>/dev/null || true
        fi
    done
    local waited=0
    for ns in $(rack_namespaces); do
        while [[ -n "$(ip netns pids "$ns" 2>/dev/null || true)" && $waited -lt 50 ]]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        pids="$(ip netns pids "$ns" 2>/dev/null || true)"
        if [[ -n $pids ]]; then
            # shellcheck disable=SC2086 # one pid a word
            kill -KILL $pids 2>/dev/null || true
        fi
        ip netns del "$ns"
    done
}

cmd_down() {
    [[ $# -eq 0 ]] || usage_error "down takes no arguments"
    require_root
    require_tool ip iproute2
    teardown
    echo "$prog: rack down"
}

cmd_exec() {
    [[ $# -ge 2 ]] || usage_error "exec needs a host and a command"
    require_root
    require_tool ip iproute2
    local ns
    ns="$(host_namespace "$1")"
    shift
    exec ip netns exec "$ns" "$@"
}

print_hosts() {
    local ns addr
    for ns in $(rack_namespaces | sort -V); do
        if [[ $ns == "$switch_ns" ]]; then
            addr="$(ip -n "$ns" -4 -o addr show dev "$bridge" | awk '{ split($4, a, "/"); print a[1] }')"
        else
            addr="$(ip -n "$ns" -4 -o addr show dev eth0 | awk '{ split($4, a, "/"); print a[1] }')"
        fi
        echo "$ns $addr"
    done
}

# The host table of the P4 links: one line per worker that has one.
cmd_p4_hosts() {
    [[ $# -eq 0 ]] || usage_error "p4-hosts takes no arguments"
    require_root
    require_tool ip iproute2
    local ns i found=0
    echo "# IPv4 switch-port MAC (examples/testbed/rack.sh p4-hosts; the switch is $p4_switch_ip $p4_switch_mac)"
    for ns in $(rack_namespaces | sort -V); do
        [[ $ns == "${prefix}w"* ]] || continue
        i="${ns#"${prefix}w"}"
        if ip -n "$ns" link show sml0 >/dev/null 2>&1; then
            echo "$p4_subnet.$i $i $(p4_mac "$i")"
            found=1
        fi
    done
    if ((!found)); then
        echo "$prog: no rack with P4 links is up: run '$prog up --workers N --p4-links' first" >&2
        exit 1
    fi
}

cmd_hosts() {
    [[ $# -eq 0 ]] || usage_error "hosts takes no arguments"
    require_root
    require_tool ip iproute2
    print_hosts
}

[[ $# -ge 1 ]] || usage_error "a command is needed"
command="$1"
shift
case "$command" in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    exec) cmd_exec "$@" ;;
    hosts) cmd_hosts "$@" ;;
    p4-hosts) cmd_p4_hosts "$@" ;;
    help|-h|--help) help ;;
    *) usage_error "unknown command '$command'" ;;
esac
