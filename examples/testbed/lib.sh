# shellcheck shell=bash disable=SC2154
# Sourced by the testbed's run-*.sh after run-args.sh or their own argument checks: the processes they
# start, stopped on exit; a bounded wait for a process's "ready" line; the standalone switch with its job
# service on TLS. Expects $prog, $rack (its rack up), $timeout_s and $logs (a directory of this run, removed
# on exit).

pids=()
# shellcheck disable=SC2317 # run by the trap below
stop_all() {
    local pid
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$logs"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# wait_for_line FILE PATTERN PID WHAT: until FILE has a line matching PATTERN, bounded by $timeout_s;
# fails when the process PID ends first.
wait_for_line() {
    local file="$1" pattern="$2" pid="$3" what="$4" waited=0
    until grep -q -- "$pattern" "$file" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            cat "$file" >&2
            echo "$prog: $what ended before it was ready (output above)" >&2
            exit 1
        fi
        if ((waited >= timeout_s * 10)); then
            cat "$file" >&2
            echo "$prog: $what not ready within $timeout_s s (output above)" >&2
            exit 1
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
}

# The rack's hosts and addresses, listed once: host_addr runs in command substitutions, which cannot keep a cache.
rack_hosts="$("$rack" hosts)"

# host_addr HOST: the rack address of HOST (sw, drv, w1 ..), empty when the rack has no such host.
host_addr() {
    awk -v h="rk-${1#rk-}" '$1 == h { print $2 }' <<<"$rack_hosts"
}

# make_cert HOST [NAME]: a certificate for HOST's rack address, made for this run ($logs/NAME.crt.pem and its
# key; NAME defaults to switch), also appended to the trust bundle $logs/trust.pem.
make_cert() {
    local addr name="${2:-switch}"
    addr="$(host_addr "$1")"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=rk-$1" \
        -addext "subjectAltName=IP:$addr" -keyout "$logs/$name.key.pem" -out "$logs/$name.crt.pem" \
        >"$logs/openssl.log" 2>&1
    cat "$logs/$name.crt.pem" >>"$logs/trust.pem"
}

# start_switch HOST SERVICE_PORT [NAME]: bin/switchml-switch in HOST, its dataplane and job service on HOST's
# rack address, the service on TLS with a certificate made for this run and a token ($logs/NAME.crt.pem,
# $logs/token; NAME defaults to switch; its log is $logs/NAME.log). Sets $switch_dataplane (HOST:PORT,PORT...,
# what workers send to) and $switch_pid.
start_switch() {
    local host="$1" port="$2" name="${3:-switch}" addr
    addr="$(host_addr "$host")"
    make_cert "$host" "$name"
    SWITCHML_NO_BUILD=1 "$rack" exec "$host" "$root/bin/switchml-switch" --host "$addr" --service-host "$addr" \
        --service-port "$port" --token-file "$logs/token" --tls-cert "$logs/$name.crt.pem" \
        --tls-key "$logs/$name.key.pem" >"$logs/$name.log" 2>&1 &
    pids+=($!)
    # shellcheck disable=SC2034 # read by the scripts that source this file
    switch_pid=$!
    wait_for_line "$logs/$name.log" "dataplane" "${pids[-1]}" "the switch in rk-$host"
    # "switchml-switch: dataplane HOST:PORT,PORT... jobs ...": the workers need the lane ports.
    # shellcheck disable=SC2034 # read by the scripts that source this file
    switch_dataplane="$(awk '/dataplane/ { for (i = 1; i < NF; i++) if ($i == "dataplane") print $(i + 1); exit }' \
        "$logs/$name.log")"
}

# start_bmv2 N SERVICE_PORT: BMv2 (simple_switch_grpc, on PATH) in rk-sw owning the P4 links of workers 1..N
# (rack.sh up --p4-links), switchml.p4 compiled by p4/compile.sh (p4c on PATH or P4C), and
# bin/switchml-controller beside it: P4Runtime on rk-sw's loopback, the job service on the switch's rack
# address over TLS with a token, as start_switch's. Sets $switch_dataplane. Exits 2 when a tool or the P4
# links are missing.
start_bmv2() {
    local n="$1" port="$2" addr ports=() i
    command -v simple_switch_grpc >/dev/null 2>&1 \
        || { echo "$prog: simple_switch_grpc not found on PATH (p4/README.md, 'Getting the tools')" >&2; exit 2; }
    "$rack" p4-hosts >"$logs/p4-hosts" || exit 2
    for ((i = 1; i <= n; i++)); do
        grep -q " $i " "$logs/p4-hosts" \
            || { echo "$prog: rk-w$i has no P4 link: bring the rack up with --p4-links" >&2; exit 2; }
        ports+=(-i "$i@p4-w$i")
    done
    local code=0
    OUT="$logs/p4" bash "$root/p4/compile.sh" >"$logs/p4c.log" 2>&1 || code=$?
    if ((code != 0)); then
        cat "$logs/p4c.log" >&2
        echo "$prog: p4/compile.sh failed (exit $code)" >&2
        exit $((code == 2 ? 2 : 1))
    fi
    "$rack" exec sw simple_switch_grpc --device-id 0 "${ports[@]}" --no-p4 -- \
        --grpc-server-addr 127.0.0.1:9559 >"$logs/bmv2.log" 2>&1 </dev/null &
    pids+=($!)
    local bmv2=$! waited=0
    until "$rack" exec sw ss -ltnH "sport = :9559" | grep -q LISTEN; do
        kill -0 "$bmv2" 2>/dev/null || { cat "$logs/bmv2.log" >&2; echo "$prog: simple_switch_grpc exited" >&2; exit 1; }
        ((waited < timeout_s * 10)) \
            || { echo "$prog: simple_switch_grpc not listening on 9559 within $timeout_s s" >&2; exit 1; }
        sleep 0.1
        waited=$((waited + 1))
    done
    addr="$(host_addr sw)"
    make_cert sw
    # shellcheck disable=SC2034 # read by the scripts that source this file
    switch_dataplane="$(awk '/^#/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) { print $i; exit } }' \
        "$logs/p4-hosts"):48864"
    SWITCHML_NO_BUILD=1 "$rack" exec sw "$root/bin/switchml-controller" --p4runtime 127.0.0.1:9559 \
        --p4-json "$logs/p4/switchml.json" --hosts "$logs/p4-hosts" --dataplane "$switch_dataplane" \
        --service-host "$addr" --service-port "$port" --token-file "$logs/token" \
        --tls-cert "$logs/switch.crt.pem" --tls-key "$logs/switch.key.pem" >"$logs/switch.log" 2>&1 &
    pids+=($!)
    wait_for_line "$logs/switch.log" " jobs " "${pids[-1]}" "the controller in rk-sw"
}
