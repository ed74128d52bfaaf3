#!/usr/bin/env bash
# A BMv2 switch running nothing yet (the controller pushes switchml.p4 over P4Runtime) and N hosts,
# each in its own network namespace, one veth to one switch port each. Needs root (ip netns).
# The end-to-end tests use exactly these commands; docs/control-plane.md shows them by hand.
#
#   p4/bmv2-net.sh up NAME N [--grpc ADDR] [--mgmt] [--owner PID]
#       namespaces NAME-sw (simple_switch_grpc) and NAME-h1 .. NAME-hN.
#       Host i: interface sml0 = BMv2 port i, IPv4 10.0.0.i/24, MAC 02:00:00:00:00:<i>, and a static
#       neighbour entry for the switch's address 10.0.0.254 (MAC 02:00:00:00:00:fe): the switch only
#       aggregates and answers no ARP. IPv6 is off, so the switch sees SwitchML traffic only.
#       --grpc ADDR  P4Runtime address of simple_switch_grpc: 127.0.0.1:PORT inside NAME-sw (default
#                    127.0.0.1:9559), or unix:/PATH, reachable from every namespace through the file.
#       --mgmt       a management network besides the switch, for everything that is not SwitchML
#                    (e.g. Spark's RPC): bridge in NAME-sw with 192.168.77.254/24, host i 192.168.77.i
#                    on interface mgmt0.
#       --owner PID  the process the topology belongs to (e.g. a test JVM): `gc` removes it once PID is gone.
#       Prints the host table (for SwitchController / bin/switchml-controller --hosts) on stdout.
#   p4/bmv2-net.sh hosts N          the host table of hosts 1..N
#   p4/bmv2-net.sh loss NAME PCT    every host's sml0 drops PCT % of the UDP datagrams it sends and
#                                   receives (nftables netdev egress/ingress, counted); 0 removes the rules
#   p4/bmv2-net.sh loss-counters NAME   "hI in DROPPED out DROPPED" per host
#   p4/bmv2-net.sh down NAME        stops every process in the namespaces and deletes them
#   p4/bmv2-net.sh gc               `down` for every topology whose --owner process is gone (a killed run)
#
# simple_switch_grpc's log: ${STATE_DIR:-/tmp/switchml-bmv2}/NAME/switch.log. BMv2 is found on PATH or
# as SIMPLE_SWITCH_GRPC. Its Thrift server (0.0.0.0:9090, not configurable) lives inside NAME-sw.
set -euo pipefail

state_root="${STATE_DIR:-/tmp/switchml-bmv2}"
SWITCH_IP=10.0.0.254
SWITCH_MAC=02:00:00:00:00:fe

die() { echo "bmv2-net: $*" >&2; exit 1; }
mac_of() { printf '02:00:00:00:00:%02x' "$1"; }

hosts_table() {
    echo "# IPv4 switch-port MAC (p4/bmv2-net.sh)"
    for ((i = 1; i <= $1; i++)); do echo "10.0.0.$i $i $(mac_of "$i")"; done
}

# Every process in our namespaces (they are ours: nothing else runs there), then the namespaces.
down() {
    local name="$1" ns pids
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^${name}-(sw|h[0-9]+)$" || true); do
        pids="$(ip netns pids "$ns" 2>/dev/null || true)"
        if [[ -n "$pids" ]]; then
            kill $pids 2>/dev/null || true
            for _ in $(seq 50); do
                pids="$(ip netns pids "$ns" 2>/dev/null || true)"
                [[ -z "$pids" ]] && break
                sleep 0.1
            done
            [[ -n "$pids" ]] && kill -9 $pids 2>/dev/null || true
        fi
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "${state_root:?}/$name"
}

up() {
    local name="$1" n="$2"; shift 2
    local grpc="127.0.0.1:9559" mgmt=0 owner=""
    while (($#)); do
        case "$1" in
            --grpc) grpc="$2"; shift 2 ;;
            --mgmt) mgmt=1; shift ;;
            --owner) owner="$2"; shift 2 ;;
            *) die "unknown option $1" ;;
        esac
    done
    [[ "$name" =~ ^[a-z][a-z0-9]{0,9}$ ]] || die "NAME must be 1-10 lower-case letters/digits, got '$name'"
    ((n >= 1 && n <= 250)) || die "N must be 1..250"
    local ss="${SIMPLE_SWITCH_GRPC:-$(command -v simple_switch_grpc || true)}"
    [[ -n "$ss" && -x "$ss" ]] || die "simple_switch_grpc not found (p4/README.md, 'Getting the tools')"
    [[ $EUID -eq 0 ]] || die "needs root (ip netns)"

    down "$name"   # leftovers of a killed run
    local dir="$state_root/$name" sw="$name-sw"
    mkdir -p "$dir"
    [[ -n "$owner" ]] && echo "$owner" >"$dir/owner"
    ip netns add "$sw"
    ip -n "$sw" link set lo up
    ip netns exec "$sw" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    if ((mgmt)); then
        ip -n "$sw" link add br0 type bridge
        ip -n "$sw" addr add 192.168.77.254/24 dev br0
        ip -n "$sw" link set br0 up
    fi
    local ports=()
    for ((i = 1; i <= n; i++)); do
        local h="$name-h$i"
        ip netns add "$h"
        ip -n "$h" link set lo up
        ip netns exec "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
        # Created inside the namespaces, so no name ever appears in the host's own namespace.
        ip link add "p$i" netns "$sw" type veth peer name sml0 netns "$h"
        ip -n "$h" link set sml0 address "$(mac_of "$i")"
        ip -n "$h" addr add "10.0.0.$i/24" dev sml0
        ip -n "$h" link set sml0 up
        ip -n "$h" neigh replace "$SWITCH_IP" lladdr "$SWITCH_MAC" dev sml0 nud permanent
        ip -n "$sw" link set "p$i" up
        ports+=(-i "$i@p$i")
        if ((mgmt)); then
            ip link add "m$i" netns "$sw" type veth peer name mgmt0 netns "$h"
            ip -n "$sw" link set "m$i" master br0
            ip -n "$sw" link set "m$i" up
            ip -n "$h" addr add "192.168.77.$i/24" dev mgmt0
            ip -n "$h" link set mgmt0 up
        fi
    done

    if [[ "$grpc" == unix:* ]]; then rm -f "${grpc#unix:}"; fi
    ip netns exec "$sw" "$ss" --device-id 0 "${ports[@]}" --no-p4 -- --grpc-server-addr "$grpc" \
        >"$dir/switch.log" 2>&1 </dev/null &
    echo $! >"$dir/switch.pid"
    # Ready when the P4Runtime server listens (bounded).
    local ok=0
    for _ in $(seq 300); do
        kill -0 "$(cat "$dir/switch.pid")" 2>/dev/null || { cat "$dir/switch.log" >&2; die "simple_switch_grpc exited"; }
        if [[ "$grpc" == unix:* ]]; then
            [[ -S "${grpc#unix:}" ]] && ok=1
        elif ip netns exec "$sw" ss -ltnH "sport = :${grpc##*:}" | grep -q LISTEN; then
            ok=1
        fi
        ((ok)) && break
        sleep 0.1
    done
    ((ok)) || { cat "$dir/switch.log" >&2; die "simple_switch_grpc did not listen on $grpc within 30 s"; }
    echo "# bmv2 $name: P4Runtime $grpc, $n ports, switch $SWITCH_IP $SWITCH_MAC, log $dir/switch.log" >&2
    hosts_table "$n"
}

gc() {
    local d owner
    for d in "$state_root"/*/; do
        [[ -f "$d/owner" ]] || continue
        owner="$(cat "$d/owner")"
        if ! kill -0 "$owner" 2>/dev/null; then
            echo "bmv2-net: removing $(basename "$d") (owner $owner is gone)" >&2
            down "$(basename "$d")"
        fi
    done
}

loss() {
    local name="$1" pct="$2" ns
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^${name}-h[0-9]+$"); do
        ip netns exec "$ns" nft delete table netdev switchml_loss 2>/dev/null || true
        if ((pct > 0)); then
            # At the device (netdev ingress/egress of sml0), not in the IP stack's input/output hooks: a
            # datagram dropped on output there would fail the sender's sendmsg (EPERM), which a sender
            # may retry, so it would not be a loss on the wire.
            ip netns exec "$ns" nft -f - <<EOF
table netdev switchml_loss {
    chain in  { type filter hook ingress device sml0 priority 0; ip protocol udp numgen random mod 100 < $pct counter drop; }
    chain out { type filter hook egress device sml0 priority 0; ip protocol udp numgen random mod 100 < $pct counter drop; }
}
EOF
        fi
    done
}

loss_counters() {
    local name="$1" ns
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^${name}-h[0-9]+$" | sort -V); do
        local t in out
        t="$(ip netns exec "$ns" nft list table netdev switchml_loss 2>/dev/null || true)"
        in="$(awk '/chain in/{c=1} /chain out/{c=0} c && /counter packets/{for(i=1;i<=NF;i++) if($i=="packets") print $(i+1)}' <<<"$t")"
        out="$(awk '/chain out/{c=1} c && /counter packets/{for(i=1;i<=NF;i++) if($i=="packets") print $(i+1)}' <<<"$t")"
        echo "${ns#"$name"-} in ${in:-0} out ${out:-0}"
    done
}

cmd="${1:-}"
case "$cmd" in
    up) (($# >= 3)) || die "usage: $0 up NAME N [--grpc ADDR] [--mgmt]"; shift; up "$@" ;;
    down) (($# == 2)) || die "usage: $0 down NAME"; down "$2" ;;
    gc) gc ;;
    hosts) (($# == 2)) || die "usage: $0 hosts N"; hosts_table "$2" ;;
    loss) (($# == 3)) || die "usage: $0 loss NAME PCT"; loss "$2" "$3" ;;
    loss-counters) (($# == 2)) || die "usage: $0 loss-counters NAME"; loss_counters "$2" ;;
    *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
