#!/usr/bin/env bash
# The OpenMPI ring allreduce across the emulated rack (docs/testbed.md): mpi_allreduce.c compiled into a
# temporary directory, one rank in each of rk-w1..rk-wN, launched by mpirun from rk-sw through the nsrsh
# agent, with the ring algorithm forced.
#
#   run-mpi.sh N ELEMENTS REPS
#
# Needs root, the Debian packages openmpi-bin and libopenmpi-dev, and a rack that is up with at least N
# workers (rack.sh up --workers N). Prints every rank's line and a summary line (summary.awk).
# Exit codes: 0 ok, 1 a result was not exact or mpirun failed, 2 usage, no rack or a package missing.
# Environment: TIMEOUT_S (bound of the whole mpirun, default 600).
set -euo pipefail

readonly prog="run-mpi.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
readonly here
readonly rack="$here/rack.sh"
readonly subnet="10.77.0.0/24"
readonly timeout_s="${TIMEOUT_S:-600}"

# shellcheck source=run-args.sh
source "$here/run-args.sh"

missing=()
command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "$prog: missing Debian packages: ${missing[*]} (apt-get install -y ${missing[*]})" >&2
    exit 2
fi
# Outside the repository: the binary is a build product of this run only.
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
mpicc -O2 -o "$build/mpi_allreduce" "$here/mpi_allreduce.c"
# OpenMPI's session directories, one tree per host (see nsrsh).
export NSRSH_TMP="$build/session" TMPDIR="$build/session/rk-sw"
mkdir -p "$TMPDIR"

hosts=""
for ((i = 1; i <= workers; i++)); do
    hosts="$hosts${hosts:+,}rk-w$i"
done

status=0
# mpirun runs in the switch namespace; its daemons, started by nsrsh in the workers, reach it over the rack's
# subnet. Ring: coll_tuned's algorithm 4 for allreduce.
timeout --kill-after=10 "$timeout_s" "$rack" exec sw mpirun --allow-run-as-root -np "$workers" --host "$hosts" \
    --mca plm_rsh_agent "$here/nsrsh" \
    --mca btl tcp,self --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet" \
    --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 \
    "$build/mpi_allreduce" "$elements" "$reps" >"$build/out.log" 2>"$build/err.log" || status=$?
if [[ $status -ne 0 ]]; then
    cat "$build/err.log" >&2
    echo "$prog: mpirun exited with $status" >&2
fi
rank_lines="$(grep '^rank=' "$build/out.log" || true)"
while read -r line; do
    [[ -n $line ]] || continue
    r="${line#rank=}"
    r="${r%% *}"
    echo "rk-w$((r + 1)) $line"
done <<<"$rank_lines"
summary=0
printf '%s\n' "$rank_lines" | awk -v design=mpi-ring -v workers="$workers" \
    -v load="$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)" -f "$here/summary.awk" || summary=1
[[ $status -eq 0 && $summary -eq 0 ]] || exit 1
