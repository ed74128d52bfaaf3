#!/usr/bin/env bash
# Smoke test of the emulated rack (docs/testbed.md), run by .ci/run after the Maven tests and by hand:
# builds a 2-worker rack (with its P4 links), checks one exact SwitchML allreduce (switch in rk-sw), that a
# larger one retransmits at most 1 % of its packets on the loss-free links, one exact allreduce on switch
# shards in the workers, one exact Spark aggregation on shards in the executors (a standalone Spark cluster
# across the rack), and one exact MPI ring allreduce through it, and, when p4c and simple_switch_grpc are on
# PATH, one exact allreduce through BMv2 on the P4 links; removes the rack, also on failure or Ctrl-C.
#
#   smoke.sh
#
# When it cannot run here (not root, ip netns unusable, OpenMPI missing, a rack already up) it prints one
# line "RACK SMOKE NOT RUN: <reason>" and exits 0; without the P4 tools only the BMv2 check is skipped, with
# a loud line of its own. Exit codes: 0 passed or not run, 1 a check failed.
# Environment: ELEMENTS (floats per worker, default 2^18), RATE (default 50mbit), TIMEOUT_S (default 60).
set -euo pipefail

readonly prog="smoke.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
readonly here
readonly rack="$here/rack.sh"
readonly elements="${ELEMENTS:-262144}"
readonly rate="${RATE:-50mbit}"
export TIMEOUT_S="${TIMEOUT_S:-60}"

not_run() {
    echo "!!!!!!!! RACK SMOKE NOT RUN: $1 !!!!!!!!"
    exit 0
}

[[ $EUID -eq 0 ]] || not_run "not root (ip netns needs root)"
for tool in ip tc mpicc mpirun openssl; do
    command -v "$tool" >/dev/null 2>&1 || not_run "'$tool' not found (Debian: iproute2, libopenmpi-dev, openmpi-bin, openssl)"
done
# A throwaway namespace outside the rack's names shows whether this machine lets us make namespaces at all.
probe="rk-smoke-probe-$$"
if ! ip netns add "$probe" 2>/dev/null; then
    not_run "ip netns add fails here (no permission to create network namespaces)"
fi
ip netns del "$probe"
if [[ -n "$("$rack" hosts 2>/dev/null || true)" ]]; then
    not_run "a rack is already up (rack.sh hosts lists it); it is not this script's to remove"
fi

# shellcheck disable=SC2317 # run by the traps below
cleanup() {
    "$rack" down >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$SECONDS
"$rack" up --workers 2 --rate "$rate" --p4-links >/dev/null
failed=0
if [[ $("$rack" p4-hosts | grep -vc '^#') -ne 2 ]]; then
    echo "$prog: FAILED: rack.sh p4-hosts does not list the 2 workers' P4 links" >&2
    failed=1
fi
echo "== rack smoke: SwitchML, 2 workers, $elements floats, links at $rate"
# Exactly the calls asked for (no waiting for the JIT): the smoke checks results and counts packets.
export WARMUP_MAX_S=0
if ! "$here/run-switchml.sh" 2 "$elements" 1; then
    echo "$prog: FAILED: the SwitchML allreduce through the rack was not exact or did not finish" >&2
    failed=1
fi
# A queue is not loss: the links are loss-free, so what a worker sends again beyond the odd stall of this
# machine is a timeout that fired while its packets waited in tbf's queue, link time taken from the sum.
echo "== rack smoke: SwitchML, 2 workers, 2^22 floats (1 untimed, 2 timed), retransmissions on loss-free links"
big=$((1 << 22))
run_status=0
out="$(WARMUPS=1 "$here/run-switchml.sh" 2 "$big" 2)" || run_status=$?
echo "$out"
if ((run_status != 0)); then
    echo "$prog: FAILED: the 2^22-float SwitchML allreduce through the rack was not exact or did not finish" >&2
    failed=1
else
    read -r k pool < <(sed -n 's/.*installed job.* k=\([0-9]*\) pool=\([0-9]*\).*/\1 \2/p' <<<"$out")
    packets=$((3 * ((big + k - 1) / k + pool)))
    most="$(grep -o 'retransmissions=[0-9]*' <<<"$out" | cut -d= -f2 | sort -n | tail -1)"
    echo "# most retransmissions of a worker: ${most:-none} of $packets packets (at most 1 % passes)"
    if [[ -z $most ]] || ((most * 100 > packets)); then
        echo "$prog: FAILED: a worker sent ${most:-an unknown number of} retransmissions on loss-free links, more than 1 % of its $packets packets" >&2
        failed=1
    fi
fi
echo "== rack smoke: SwitchML on switch shards in the 2 workers, $elements floats"
if ! SHARDED=1 "$here/run-switchml.sh" 2 "$elements" 1; then
    echo "$prog: FAILED: the sharded SwitchML allreduce through the rack was not exact or did not finish" >&2
    failed=1
fi
echo "== rack smoke: Spark aggregation on switch shards in 2 executors (standalone cluster), whole numbers"
spark_out="$(WARM_UPS=2 TIMEOUT_S=180 "$here/run-spark.sh" 2 --no-fit --aggregate 65536 --aggregate-on sharded \
    --check 2>&1)" || spark_status=$?
echo "$spark_out" | grep -E '^(# |aggregate )' || true
if [[ ${spark_status:-0} -ne 0 ]] || ! grep -q 'switchml .*\[2 switch workers, 2 shards\] exact=true' <<<"$spark_out"; then
    echo "$spark_out" | tail -n 30 >&2
    echo "$prog: FAILED: the Spark aggregation on the executors' shards was not exact, not sharded or did not finish" >&2
    failed=1
fi
echo "== rack smoke: OpenMPI ring, 2 ranks, $elements floats"
if ! "$here/run-mpi.sh" 2 "$elements" 1; then
    echo "$prog: FAILED: the MPI ring allreduce through the rack was not exact or did not finish" >&2
    failed=1
fi
if command -v p4c >/dev/null 2>&1 && command -v simple_switch_grpc >/dev/null 2>&1; then
    echo "== rack smoke: BMv2 in rk-sw on the P4 links, 2 workers, 4096 floats"
    if ! SWITCH_HOST=bmv2 "$here/run-switchml.sh" 2 4096 1; then
        echo "$prog: FAILED: the allreduce through BMv2 in the rack was not exact or did not finish" >&2
        failed=1
    fi
else
    echo "!!!!!!!! RACK SMOKE: BMv2 in the rack NOT RUN: p4c or simple_switch_grpc not on PATH (p4/README.md) !!!!!!!!"
fi
"$rack" down >/dev/null
if [[ -n "$(ip netns list | grep '^rk-' || true)" ]]; then
    echo "$prog: FAILED: rk-* namespaces left after rack.sh down" >&2
    failed=1
fi
echo "== rack smoke: $([[ $failed -eq 0 ]] && echo passed || echo FAILED) in $((SECONDS - t0)) s"
exit "$failed"
