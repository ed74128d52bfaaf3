#!/usr/bin/env bash
# SwitchML across the emulated rack (docs/testbed.md): the standalone switch in rk-sw, the coordinator
# (asks the switch's job service for the job, over TLS with the rack's token) in rk-drv, one RackAllReduce worker JVM in each of rk-w1..rk-wN.
#
#   run-switchml.sh N ELEMENTS REPS
#
# Needs root and a rack that is up with at least N workers (rack.sh up --workers N). Prints every worker's
# line and a summary line (summary.awk); stops everything it started, also on failure or Ctrl-C.
# Exit codes: 0 ok, 1 a result was not exact or a process failed, 2 usage or no rack.
# Environment: JAVA, WORKER_HEAP (-Xmx of each worker, default 1g), SWITCH_HEAP (bin/switchml-switch),
# TIMEOUT_S (bound of every wait, default 120), K and POOL (the job's k and pool size; default
# RackAllReduce's), SWITCH_HOST (the host that runs the switch: sw, default, or a worker such as w1 for
# the parameter-server placement, where the other workers reach it over that worker's one link; or bmv2:
# BMv2 with switchml.p4 in rk-sw on the workers' P4 links, which needs rack.sh up --p4-links, p4c and
# simple_switch_grpc, and defaults to K=64, POOL=16, RETRANSMIT_MS=200), RETRANSMIT_MS (the workers' first
# retransmission timeout), WARMUPS (untimed allreduces before the timed ones, at least; default 1),
# WARMUP_MAX_S (untimed allreduces go on while a worker's JIT is busy, for at most this long; default 60,
# 0 for exactly WARMUPS), SHARDED=1 (no switch in rk-sw: every worker JVM hosts a switch shard that owns a
# part of the vector, SHARD_LANES lanes each, default 1), EXTRA_HOSTS=K (with SHARDED=1: also a standalone
# switch in each of rk-x1..rk-xK, which the rack needs: rack.sh up --extra-hosts K, each owning a part so
# that every link carries the same load), MVN, MVN_OPTS_EXTRA (default -o: build offline).
set -euo pipefail

readonly prog="run-switchml.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
readonly here
readonly rack="$here/rack.sh"
readonly driver_addr="10.77.0.2"
readonly service_port=9560
readonly rendezvous_port=7070
readonly timeout_s="${TIMEOUT_S:-120}"

# shellcheck source=run-args.sh
source "$here/run-args.sh"

switch_host="${SWITCH_HOST:-sw}"
switch_host="${switch_host#rk-}"

export MVN_OPTS_EXTRA="${MVN_OPTS_EXTRA--o}"
# shellcheck source=../../bin/common.sh
source "$here/../../bin/common.sh"
ensure_built "$prog"
classpath="$examples_jar:$(cat "$root/examples/target/runtime.classpath")"
# The coordinator's session with the job service logs through SLF4J: Spark's, with its log4j binding.
for j in "$spark_dist"/jars/{slf4j-api,log4j-slf4j2-impl,log4j-api,log4j-core}-*.jar; do
    classpath="$classpath:$j"
done

logs="$(mktemp -d)"
# shellcheck source=lib.sh
source "$here/lib.sh"
worker_options=()
coordinator_options=()
design=switchml
sharded="${SHARDED:-0}"
extra_hosts="${EXTRA_HOSTS:-0}"
[[ $extra_hosts =~ ^[0-8]$ ]] || { echo "$prog: EXTRA_HOSTS must be 0..8, got '$extra_hosts'" >&2; exit 2; }
if ((extra_hosts > 0 && sharded != 1)); then
    echo "$prog: EXTRA_HOSTS needs SHARDED=1" >&2
    exit 2
fi
if [[ $sharded == 1 ]]; then
    design=switchml-sharded
    worker_options+=(--shard-lanes "${SHARD_LANES:-1}")
    coordinator_options+=(--sharded)
    for ((x = 1; x <= extra_hosts; x++)); do
        if [[ -z "$(host_addr "x$x")" ]]; then
            echo "$prog: no extra host rk-x$x in the rack: bring it up with rack.sh up --extra-hosts $extra_hosts" >&2
            exit 2
        fi
        start_switch "x$x" "$service_port" "x$x"
        coordinator_options+=(--extra-shard "$(host_addr "x$x"):$service_port" --cpu-pid "$switch_pid")
    done
    switch_dataplane=""
    switch_host=""
elif [[ $switch_host == bmv2 ]]; then
    # BMv2's switchml.p4 adds 64 lanes a packet; its single-threaded pipeline queues a larger pool for longer
    # than the default first timeout (docs/benchmarks.md, "BMv2").
    K="${K:-64}" POOL="${POOL:-16}" RETRANSMIT_MS="${RETRANSMIT_MS:-200}"
    switch_host=sw
    start_bmv2 "$workers" "$service_port"
else
    if [[ -z "$(host_addr "$switch_host")" ]]; then
        echo "$prog: SWITCH_HOST '$switch_host' is no host of the rack ($rack hosts lists them)" >&2
        exit 2
    fi
    start_switch "$switch_host" "$service_port"
    coordinator_options+=(--cpu-pid "$switch_pid")
fi
switch_addr="$(host_addr "${switch_host:-sw}")"
[[ -z ${RETRANSMIT_MS:-} ]] || worker_options+=(--retransmit-timeout-ms "$RETRANSMIT_MS")

java_cmd=("${JAVA:-java}" -Xmx"${WORKER_HEAP:-1g}" -cp "$classpath" org.switchml.examples.RackAllReduce
          --timeout-s "$timeout_s")
job_options=(--warm-up "${WARMUPS:-1}" --warm-up-max-s "${WARMUP_MAX_S:-60}")
[[ -z ${K:-} ]] || job_options+=(--k "$K")
[[ -z ${POOL:-} ]] || job_options+=(--pool "$POOL")
token_options=()
[[ ! -f $logs/trust.pem ]] || token_options=(--token-file "$logs/token" --tls-trust "$logs/trust.pem")
"$rack" exec drv "${java_cmd[@]}" --role coordinator --workers "$workers" "${job_options[@]}" \
    --listen "$driver_addr:$rendezvous_port" --job-service "$switch_addr:$service_port" \
    "${token_options[@]}" "${coordinator_options[@]}" >"$logs/coordinator.log" 2>&1 &
coordinator=$!
pids+=("$coordinator")
wait_for_line "$logs/coordinator.log" "listening" "$coordinator" "the coordinator in rk-drv"

workers_pids=()
for ((i = 1; i <= workers; i++)); do
    bind=()
    # On BMv2's ports a worker sends from its P4 link's address, the one the controller's host table knows.
    [[ ! -f $logs/p4-hosts ]] || bind=(--bind "$(awk -v i="$i" '$2 == i { print $1 }' "$logs/p4-hosts")")
    switch_option=()
    [[ -z $switch_dataplane ]] || switch_option=(--switch "$switch_dataplane")
    "$rack" exec "w$i" "${java_cmd[@]}" --role worker --rank $((i - 1)) \
        --coordinator "$driver_addr:$rendezvous_port" "${switch_option[@]}" "${bind[@]}" \
        "${worker_options[@]}" --elements "$elements" --reps "$reps" >"$logs/w$i.log" 2>&1 &
    pids+=($!)
    workers_pids+=($!)
done

failed=0
for ((i = 1; i <= workers; i++)); do
    if ! wait "${workers_pids[i - 1]}"; then
        failed=1
        echo "$prog: worker rk-w$i failed:" >&2
        grep -v '^rank=' "$logs/w$i.log" >&2 || true
    fi
done
if ! wait "$coordinator"; then
    failed=1
    echo "$prog: the coordinator failed:" >&2
    cat "$logs/coordinator.log" >&2
fi

if [[ -n $switch_host ]]; then
    echo "# switch in rk-$switch_host: $(grep -E 'dataplane|jobs' "$logs/switch.log" | head -1)"
else
    echo "# switch shards in rk-w1..rk-w$workers$( ((extra_hosts)) && echo " and rk-x1..rk-x$extra_hosts")"
fi
grep -E '^rack-allreduce: (installed|warm-up|[0-9]+ warm-up calls|cpu)' "$logs/coordinator.log" | sed 's/^/# /' || true
for ((i = 1; i <= workers; i++)); do
    grep '^rank=' "$logs/w$i.log" | sed "s/^/rk-w$i /" || true
done
summary=0
# The switches' CPU over the timed calls (the coordinator read it from /proc) counts beside the workers'.
{ cat "$logs"/w*.log; awk '/^rack-allreduce: cpu pid=/ { for (i = 1; i <= NF; i++) if ($i ~ /^seconds=/) print "cpu_other=" substr($i, 9) }' \
    "$logs/coordinator.log"; } | awk -v design="$design" -v workers="$workers" \
    -v load="$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)" -f "$here/summary.awk" || summary=1
exit $((failed | summary))
