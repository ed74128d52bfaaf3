#!/usr/bin/env bash
# The emulated rack's sweep (docs/testbed.md): for each rack size N, the allreduce designs over vector sizes,
# interleaved rep by rep so that a change in the machine's load hits them all: SwitchML with the switch in
# rk-sw (switchml), on switch shards in the workers themselves (switchml-sharded), and OpenMPI's ring allreduce
# (mpi-ring); at the --ps-workers sizes also the parameter-server placement (switchml-ps: the software switch
# in rk-w1, reached over that worker's one link); at the --extra-workers sizes the sharded design with K extra
# hosts (each a standalone switch on a link of its own) for every K of --extra-hosts, and SwitchML with UDP
# loss on every worker link. Appends one row per design, N, size and rep to a CSV.
#
#   sweep.sh [--workers "2 4 8"] [--sizes "16 18 20 22 24"] [--extra-sizes "22"] [--reps 3] [--timed 3]
#            [--designs "switchml switchml-sharded switchml-ps mpi-ring"] [--ps-workers "4"]
#            [--extra-workers "4"] [--extra-hosts "2 4"] [--rate 50mbit] [--mtu 9000] [--loss 1]
#            [--no-ps] [--no-loss] [--loss-only] [--out FILE]
#
# Sizes are powers of two (16 = 2^16 floats per worker). --extra-sizes are those of the parameter-server,
# extra-host and loss runs; --loss-only runs only the designs under loss (an N of --extra-workers must be in
# --workers). --timed is the timed allreduces per run (a row holds their median). --designs keeps only the
# listed designs (mpi-ring also drops the extra-host runs' ring reps). Needs root; builds and removes each
# rack itself and removes it on exit or Ctrl-C. Exit codes: 0 every run exact, 1 a run failed or was inexact
# (its row says so; the sweep goes on), 2 usage, not root, or a rack already up.
# Environment: POOL (SwitchML's pool; default: 16 slots, fewer for short vectors, see pool_for),
# SHARD_LANES, K, TIMEOUT_S, as run-switchml.sh and run-mpi.sh take them.
set -euo pipefail

readonly prog="sweep.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
readonly here
readonly rack="$here/rack.sh"

workers_list="2 4 8"
sizes="16 18 20 22 24"
extra_sizes="22"
designs="switchml switchml-sharded switchml-ps mpi-ring"
ps_workers="4"
extra_workers="4"
extra_hosts_list="2 4"
reps=3
timed=3
rate="50mbit"
mtu=9000
loss=1
ps=1
lossy=1
lossless=1
out="$here/../../docs/results/rack.csv"

usage() {
    echo "usage: $prog [--workers \"2 4 8\"] [--sizes \"16 18 20 22 24\"] [--extra-sizes \"22\"] [--reps 3]" \
        "[--timed 3] [--designs \"switchml switchml-sharded switchml-ps mpi-ring\"] [--ps-workers \"4\"]" \
        "[--extra-workers \"4\"] [--extra-hosts \"2 4\"] [--rate 50mbit] [--mtu 9000] [--loss 1] [--no-ps]" \
        "[--no-loss] [--loss-only] [--out FILE]" >&2
}
usage_error() {
    echo "$prog: $1" >&2
    usage
    exit 2
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --workers|--sizes|--extra-sizes|--reps|--timed|--rate|--mtu|--loss|--out|--designs|--ps-workers|\
        --extra-workers|--extra-hosts)
            [[ $# -ge 2 ]] || usage_error "$1 needs a value"
            case "$1" in
                --workers) workers_list="$2" ;;
                --designs) designs="$2" ;;
                --ps-workers) ps_workers="$2" ;;
                --extra-workers) extra_workers="$2" ;;
                --extra-hosts) extra_hosts_list="$2" ;;
                --sizes) sizes="$2" ;;
                --extra-sizes) extra_sizes="$2" ;;
                --reps) reps="$2" ;;
                --timed) timed="$2" ;;
                --rate) rate="$2" ;;
                --mtu) mtu="$2" ;;
                --loss) loss="$2" ;;
                --out) out="$2" ;;
            esac
            shift 2
            ;;
        --no-ps) ps=0; shift ;;
        --no-loss) lossy=0; shift ;;
        --loss-only) lossless=0; ps=0; lossy=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage_error "unknown argument '$1'" ;;
    esac
done
for n in $workers_list $ps_workers $extra_workers; do
    [[ $n =~ ^[1-8]$ ]] || usage_error "--workers, --ps-workers and --extra-workers take numbers 1..8, got '$n'"
done
for x in $extra_hosts_list; do
    [[ $x =~ ^[0-8]$ ]] || usage_error "--extra-hosts takes numbers 0..8, got '$x'"
done
for d in $designs; do
    [[ $d =~ ^(switchml|switchml-sharded|switchml-ps|mpi-ring)$ ]] \
        || usage_error "--designs takes switchml, switchml-sharded, switchml-ps and mpi-ring, got '$d'"
done
# wants DESIGN: whether --designs lists it (as a whole word: switchml is not switchml-sharded).
wants() {
    [[ " $(tr -s '[:space:]' ' ' <<<"$designs") " == *" $1 "* ]]
}
for s in $sizes $extra_sizes; do
    [[ $s =~ ^[0-9]+$ && $s -ge 11 && $s -le 26 ]] || usage_error "sizes are exponents 11..26, got '$s'"
done
[[ $reps =~ ^[1-9][0-9]?$ ]] || usage_error "--reps must be 1..99, got '$reps'"
[[ $timed =~ ^[1-9][0-9]?$ ]] || usage_error "--timed must be 1..99, got '$timed'"
if [[ $EUID -ne 0 ]]; then
    echo "$prog: the rack's network namespaces need root: run it as root (e.g. with sudo)" >&2
    exit 2
fi
if [[ -n "$("$rack" hosts 2>/dev/null || true)" ]]; then
    echo "$prog: a rack is already up: '$rack down' first (the sweep builds its own)" >&2
    exit 2
fi

# tc's rate in bits per second.
rate_bits="$(awk -v r="${rate,,}" 'BEGIN {
    n = r + 0; u = substr(r, length(n "") + 1)
    m = u == "kbit" ? 1e3 : u == "mbit" ? 1e6 : u == "gbit" ? 1e9 : 1
    printf "%d", n * m }')"

mkdir -p "$(dirname "$out")"
header="design,n,elements,rate_bits,mtu,loss_pct,rep,seconds,goodput_gbps_per_worker,retransmissions,exact,load1"
header="$header,extra_hosts,packets_sent,cpu_s_per_gb,cpu_s_per_gb_busiest"
if [[ -s $out ]]; then
    if [[ "$(head -1 "$out")" != "$header" ]]; then
        echo "$prog: $out has other columns than this sweep writes ($header): give another --out" >&2
        exit 2
    fi
else
    echo "$header" >"$out"
fi

work="$(mktemp -d)"
# shellcheck disable=SC2317 # run by the traps below
cleanup() {
    "$rack" down >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

status=0

# record DESIGN N ELEMENTS LOSS REP LOG [EXTRA_HOSTS]: one CSV row from a run's rank lines and summary line.
# The CPU columns are every process's CPU seconds over the timed calls (workers, switches, MPI ranks) per GB of
# one worker's vectors reduced in those calls, all processes together and the busiest.
record() {
    local design="$1" n="$2" elements="$3" loss_pct="$4" rep="$5" log="$6" extra="${7:-0}"
    awk -F'[ =]' -v design="$design" -v n="$n" -v elements="$elements" -v rate="$rate_bits" -v mtu="$mtu" \
        -v loss="$loss_pct" -v rep="$rep" -v load="$(cut -d' ' -f1 /proc/loadavg)" -v extra="$extra" \
        -v timed="$timed" '
        / rank=/ {
            for (i = 1; i < NF; i++) {
                if ($i == "retransmissions") retx += $(i + 1)
                if ($i == "packets_sent") sent += $(i + 1)
            }
        }
        /^summary / {
            for (i = 1; i < NF; i++) {
                if ($i == "goodput_gbps_median") g = $(i + 1)
                if ($i == "exact_all") exact = $(i + 1)
                if ($i == "cpu_s_total") cpu = $(i + 1)
                if ($i == "cpu_s_busiest") busiest = $(i + 1)
            }
        }
        END {
            if (g == "" || g + 0 <= 0) { g = 0; exact = "false" }
            gb = 4 * elements * timed / 1e9
            printf "%s,%d,%d,%d,%d,%s,%d,%.6f,%.6f,%d,%s,%s,%d,%d,%s,%s\n", design, n, elements, rate, mtu, loss, rep,
                (g > 0 ? 32 * elements / (g * 1e9) : 0), g, retx, exact == "true" ? "true" : "false", load, extra,
                sent, (cpu == "" || cpu == "nan") ? "" : sprintf("%.3f", cpu / gb),
                (busiest == "" || busiest == "nan") ? "" : sprintf("%.3f", busiest / gb)
        }' "$log" | tee -a "$out"
}

# SwitchML's pool: 16 slots of k = 2048, a window of 128 KiB of payload per worker: 20 ms of a 50mbit link,
# which covers the rack's sub-millisecond round trip and the stalls of a shared 2-core machine. A larger
# window adds nothing but a standing queue in tbf (64 slots: 85 ms), a longer round trip for every packet
# and for every loss recovery, and more exponent-only packets (one per slot per call). Never more than a
# quarter of the vector's packets (at least 4).
pool_for() {
    local blocks=$(($1 / ${K:-2048})) p=16
    ((p * 4 <= blocks)) || p=$((blocks / 4))
    echo $((p < 4 ? 4 : p))
}

# Untimed SwitchML calls before the timed ones, at least: about 2^23 floats in all (at least one). More
# follow while a worker's JIT is still busy (run-switchml.sh's WARMUP_MAX_S), so the clock starts on JVMs
# that run the packet path compiled rather than ones whose compilers hold the two CPUs.
warmups_for() {
    local w=$(((1 << 23) / $1))
    echo $((w < 1 ? 1 : (w > 32 ? 32 : w)))
}

# run_switchml DESIGN N ELEMENTS LOSS REP [SWITCH_HOST] [EXTRA_HOSTS]: DESIGN switchml-sharded runs on shards in
# the workers (and EXTRA_HOSTS extra hosts), the others on the switch in SWITCH_HOST.
run_switchml() {
    local design="$1" n="$2" elements="$3" loss_pct="$4" rep="$5" host="${6:-sw}" extra="${7:-0}"
    local log="$work/run.log" sharded=0
    [[ $design != switchml-sharded ]] || sharded=1
    if ! POOL="${POOL:-$(pool_for "$elements")}" WARMUPS="$(warmups_for "$elements")" SWITCH_HOST="$host" \
            SHARDED="$sharded" EXTRA_HOSTS="$extra" "$here/run-switchml.sh" "$n" "$elements" "$timed" >"$log" 2>&1; then
        status=1
        echo "$prog: $design n=$n elements=$elements rep=$rep extra_hosts=$extra failed:" >&2
        tail -n 20 "$log" >&2
    fi
    record "$design" "$n" "$elements" "$loss_pct" "$rep" "$log" "$extra"
}

run_mpi() {
    local n="$1" elements="$2" rep="$3" log="$work/run.log"
    if ! "$here/run-mpi.sh" "$n" "$elements" "$timed" >"$log" 2>&1; then
        status=1
        echo "$prog: mpi-ring n=$n elements=$elements rep=$rep failed:" >&2
        tail -n 20 "$log" >&2
    fi
    record mpi-ring "$n" "$elements" 0 "$rep" "$log"
}

# rack_up N LOSS [EXTRA_HOSTS]
rack_up() {
    local said
    said="$("$rack" up --workers "$1" --rate "$rate" --mtu "$mtu" --loss "$2" --extra-hosts "${3:-0}")"
    echo "${said%%$'\n'*}"
}

# The largest K of --extra-hosts: the rack of the extra-host runs has that many.
max_extra=0
for x in $extra_hosts_list; do
    ((x <= max_extra)) || max_extra=$x
done

echo "$prog: rate $rate, mtu $mtu, workers $workers_list, sizes 2^{$sizes}, designs $designs, reps $reps x" \
    "$timed timed; rows to $out"
for n in $workers_list; do
    [[ $lossless -eq 1 ]] || continue
    extra_here=0
    if grep -qw "$n" <<<"$extra_workers" && wants switchml-sharded; then
        extra_here=$max_extra
    fi
    rack_up "$n" 0 "$extra_here"
    for s in $sizes; do
        for ((rep = 1; rep <= reps; rep++)); do
            ! wants switchml || run_switchml switchml "$n" $((1 << s)) 0 "$rep"
            ! wants switchml-sharded || run_switchml switchml-sharded "$n" $((1 << s)) 0 "$rep"
            ! wants mpi-ring || run_mpi "$n" $((1 << s)) "$rep"
            if grep -qw "$s" <<<"$extra_sizes"; then
                if [[ $ps -eq 1 ]] && wants switchml-ps && grep -qw "$n" <<<"$ps_workers"; then
                    run_switchml switchml-ps "$n" $((1 << s)) 0 "$rep" w1
                fi
                if ((extra_here > 0)); then
                    for x in $extra_hosts_list; do
                        ((x == 0)) || run_switchml switchml-sharded "$n" $((1 << s)) 0 "$rep" sw "$x"
                    done
                fi
            fi
        done
    done
    "$rack" down >/dev/null
done
if [[ $lossy -eq 1 ]]; then
    for n in $extra_workers; do
        grep -qw "$n" <<<"$workers_list" || continue
        rack_up "$n" "$loss"
        for s in $extra_sizes; do
            for ((rep = 1; rep <= reps; rep++)); do
                ! wants switchml || run_switchml switchml "$n" $((1 << s)) "$loss" "$rep"
                ! wants switchml-sharded || run_switchml switchml-sharded "$n" $((1 << s)) "$loss" "$rep"
            done
        done
        "$rack" down >/dev/null
    done
fi
echo "$prog: done; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
