#!/usr/bin/env bash
# Spark on the emulated rack (docs/testbed.md): a Spark standalone Master in rk-drv and one Worker in each of
# rk-w1..rk-wN (one executor of one core each), and TrainLogisticRegression on generated sparse multinomial
# data, fitted four ways with the same data and params:
#   switchml-hub       the drop-in SwitchMLLogisticRegression, the standalone switch in rk-sw (the rack's hub)
#   mllib              stock MLlib LogisticRegression (treeAggregate to the driver, broadcast back)
#   switchml-sharded   the drop-in with its defaults and no switch configured: switch shards in the executors
#                      themselves, each owning a part of the vector
#   switchml-embedded  the drop-in with spark.switchml.switch.placement=driver: the software switch inside the
#                      driver (behind rk-drv's link), the default before shards
# Each design runs in an application of its own (fresh executors, so that no fit runs in JVMs another fit
# has warmed), and each rep starts with the next design in that list, so each design runs in each position
# equally often over as many reps as there are designs (--designs LIST runs only those, e.g. sharded,mllib,
# rotated the same way). Appends one CSV row per design and rep: the fit's time, iterations
# and final loss, the bytes each executor's link carried during the fit (both directions, from the switch
# ports' counters) per iteration, and the seconds per iteration after the first (from the fit's progress
# lines). With --aggregate SIZES it then also runs SparkAggregateBench with the switch in rk-sw (or the
# placement of --aggregate-on: hub, sharded or embedded): SwitchMLAggregator against Spark's treeAggregate (to
# the driver, and with the final merge on an executor) for those vector sizes (doubles), one partition per
# executor, and prints its lines; --check makes it sum whole numbers and compare every sum with
# treeAggregate's bit for bit (a difference fails the run).
#
#   run-spark.sh N [--features F] [--classes K] [--rows R] [--nnz Z] [--max-iter I] [--reps R] [--out FILE]
#                  [--warm-up-iter W] [--designs LIST] [--aggregate SIZES] [--aggregate-on hub|sharded|embedded]
#                  [--check] [--no-fit]
#
# --warm-up-iter W (default 0) first fits the design untimed with maxIter W in the same application, so the
# timed fit runs in executors (and a switch) whose JIT has compiled the fit's code, as in a session that
# fits more than once; with 0 every timed fit is its application's first.
#
# Needs root and a rack that is up with at least N workers (rack.sh up --workers N). Stops everything it
# started, also on failure or Ctrl-C. Exit codes: 0 ok, 1 a fit failed or the designs' losses differ, 2 usage
# or no rack. Environment: JAVA, TIMEOUT_S (bound of every wait for a process to be ready, default 180;
# a fit is bounded by the application's own timeouts), MVN, MVN_OPTS_EXTRA (default -o: build offline).
set -euo pipefail

readonly prog="run-spark.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
readonly here
readonly rack="$here/rack.sh"
readonly service_port=9560
readonly master_port=7077
readonly timeout_s="${TIMEOUT_S:-180}"

usage_error() {
    echo "$prog: $1" >&2
    echo "usage: $prog N [--features F] [--classes K] [--rows R] [--nnz Z] [--max-iter I] [--reps R] [--out FILE]" \
        "[--warm-up-iter W] [--designs LIST] [--aggregate SIZES] [--aggregate-on hub|sharded|embedded] [--check]" \
        "[--no-fit]" >&2
    exit 2
}
[[ $# -ge 1 ]] || usage_error "needs N"
workers="$1"
shift
[[ $workers =~ ^[1-8]$ ]] || usage_error "N must be 1..8, got '$workers'"
features=100000
classes=10
rows=20000
nnz=20
max_iter=10
reps=1
warm_up_iter=0
out="$here/../../docs/results/rack-spark.csv"
aggregate=""
aggregate_on=hub
check=()
fit=1
designs_arg=hub,mllib,sharded,embedded
while [[ $# -gt 0 ]]; do
    if [[ $1 == --no-fit ]]; then
        fit=0
        shift
        continue
    fi
    if [[ $1 == --check ]]; then
        check=(--check)
        shift
        continue
    fi
    [[ $# -ge 2 ]] || usage_error "$1 needs a value"
    case "$1" in
        --aggregate) aggregate="$2" ;;
        --aggregate-on) aggregate_on="$2" ;;
        --features) features="$2" ;;
        --classes) classes="$2" ;;
        --rows) rows="$2" ;;
        --nnz) nnz="$2" ;;
        --max-iter) max_iter="$2" ;;
        --reps) reps="$2" ;;
        --warm-up-iter) warm_up_iter="$2" ;;
        --designs) designs_arg="$2" ;;
        --out) out="$2" ;;
        *) usage_error "unknown argument '$1'" ;;
    esac
    shift 2
done
for v in "$features" "$classes" "$rows" "$nnz" "$max_iter" "$reps"; do
    [[ $v =~ ^[1-9][0-9]{0,8}$ ]] || usage_error "counts are positive whole numbers, got '$v'"
done
[[ $warm_up_iter =~ ^[0-9]{1,9}$ ]] || usage_error "--warm-up-iter is a whole number, got '$warm_up_iter'"
[[ $aggregate_on =~ ^(hub|sharded|embedded)$ ]] || usage_error "--aggregate-on is hub, sharded or embedded, got '$aggregate_on'"
IFS=, read -r -a designs <<<"$designs_arg"
[[ ${#designs[@]} -ge 1 ]] || usage_error "--designs names at least one of hub, mllib, sharded, embedded"
for d in "${designs[@]}"; do
    [[ $d =~ ^(hub|mllib|sharded|embedded)$ ]] \
        || usage_error "--designs: unknown design '$d' (hub, mllib, sharded, embedded)"
done
[[ $(printf '%s\n' "${designs[@]}" | sort | uniq -d) == "" ]] || usage_error "--designs names a design twice: '$designs_arg'"
header="design,n,coefficients,rep,fit_seconds,iterations,final_loss,mb_per_executor_per_iteration,load1,seconds_per_iteration,warm_up_iter"
if ((fit)) && [[ -s $out && $(head -n 1 "$out") != "$header" ]]; then
    echo "$prog: $out has other columns than this script writes ($header): give another --out" >&2
    exit 2
fi
[[ $EUID -eq 0 ]] || { echo "$prog: ip netns needs root" >&2; exit 2; }
if ! grep -q "^rk-w$workers " <<<"$("$rack" hosts 2>/dev/null || true)"; then
    echo "$prog: no rack with $workers workers is up: run '$rack up --workers $workers' first" >&2
    exit 2
fi

export MVN_OPTS_EXTRA="${MVN_OPTS_EXTRA--o}"
# shellcheck source=../../bin/common.sh
source "$here/../../bin/common.sh"
ensure_built "$prog"
export SWITCHML_NO_BUILD=1 # the namespaces have no network: nothing may run Maven in them

logs="$(mktemp -d)"
# shellcheck source=lib.sh
source "$here/lib.sh"
driver_addr="$(host_addr drv)"
switch_addr="$(host_addr sw)"
master="spark://$driver_addr:$master_port"
java="${JAVA:-java}"
spark_cp="$spark_dist/jars/*"

# Spark's daemons, each bound to its host's rack address.
SPARK_HOME="$spark_dist" SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP="$driver_addr" \
    "$rack" exec drv "$java" -Xmx256m -cp "$spark_cp" org.apache.spark.deploy.master.Master \
    --host "$driver_addr" --port "$master_port" --webui-port 0 >"$logs/master.log" 2>&1 &
pids+=($!)
wait_for_line "$logs/master.log" "Starting Spark master at" "${pids[-1]}" "the Spark master in rk-drv"
for ((i = 1; i <= workers; i++)); do
    addr="$(host_addr "w$i")"
    SPARK_HOME="$spark_dist" SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP="$addr" \
        "$rack" exec "w$i" "$java" -Xmx256m -cp "$spark_cp" org.apache.spark.deploy.worker.Worker \
        --host "$addr" --cores 1 --memory 1536m --webui-port 0 --work-dir "$logs/work-w$i" "$master" \
        >"$logs/worker-w$i.log" 2>&1 &
    pids+=($!)
done
for ((i = 1; i <= workers; i++)); do
    wait_for_line "$logs/worker-w$i.log" "Successfully registered with master" "${pids[i]}" "the Spark worker in rk-w$i"
done
start_switch sw "$service_port"
echo "# $prog: Spark master $master, $workers workers (1 core each); switch in rk-sw: $switch_dataplane"

# link_bytes: the bytes every worker link has carried so far, both directions, summed over the rack's workers
# (read on the switch's side: port p-wI receives what rk-wI sends). %.0f: past 2^31, awk's %d may saturate.
link_bytes() {
    ip netns exec rk-sw sh -c "cat /sys/class/net/p-w*/statistics/rx_bytes /sys/class/net/p-w*/statistics/tx_bytes" |
        awk '{ s += $1 } END { printf "%.0f\n", s }'
}

hub_conf=(--conf "spark.switchml.jobService.address=$switch_addr:$service_port"
          --conf "spark.switchml.auth.tokenFile=$logs/token"
          --conf "spark.switchml.tls.trustCertFile=$logs/switch.crt.pem")
driver_conf=(--conf spark.switchml.switch.placement=driver)

# submit NAME CONF... -- CLASS APP_ARGS...: an application of the examples jar through bin/switchml-submit in
# rk-drv. Each of its output lines is copied to $logs/NAME.out; when a fit starts and ends, the worker links'
# byte count is noted beside it.
submit() {
    local name="$1" line
    shift
    local conf=()
    while [[ $1 != -- ]]; do
        conf+=("$1")
        shift
    done
    shift
    local class="$1"
    shift
    "$rack" exec drv "$root/bin/switchml-submit" --master "$master" --deploy-mode client \
        --driver-memory 2g \
        --conf "spark.driver.host=$driver_addr" --conf spark.ui.enabled=false \
        --conf spark.executor.cores=1 --conf "spark.cores.max=$workers" --conf spark.executor.memory=1g \
        --conf spark.locality.wait=0s "${conf[@]}" \
        --class "$class" "$examples_jar" "$@" 2>"$logs/$name.err" |
        while IFS= read -r line; do
            case "$line" in
                *"] fitting ..."*|*"] fitted in "*) printf '%s @bytes %s\n' "$line" "$(link_bytes)" ;;
                *) printf '%s\n' "$line" ;;
            esac
        done >"$logs/$name.out"
    local status="${PIPESTATUS[0]}"
    if [[ $status -ne 0 ]]; then
        cat "$logs/$name.out"
        tail -n 60 "$logs/$name.err" >&2
        echo "$prog: application $name exited $status (its output above)" >&2
        return 1
    fi
}

# rows_of NAME DESIGN_OF_TRAINER...: CSV rows from $logs/NAME.out (trainer=design pairs name the rows).
rows_of() {
    local name="$1"
    shift
    awk -v n="$workers" -v coef="$((classes * (features + 1)))" -v rep="$rep" -v map="$*" -v warm="$warm_up_iter" \
        -v load="$(cut -d' ' -f1 /proc/loadavg)" '
        BEGIN { split(map, pairs, " "); for (p in pairs) { split(pairs[p], kv, "="); design[kv[1]] = kv[2] } }
        /\] fitting \.\.\. @bytes / { t = substr($1, 2, length($1) - 2); b0[t] = $NF }
        # "[T] iteration I/N: loss L, S s...": S is the time since the fit began.
        /\] iteration [0-9]+\/[0-9]+: / {
            t = substr($1, 2, length($1) - 2); split($3, it, "/")
            if (!(t in i0)) { i0[t] = it[1] + 0; s0[t] = $6 + 0 }
            i1[t] = it[1] + 0; s1[t] = $6 + 0
        }
        /\] fitted in .* @bytes / { t = substr($1, 2, length($1) - 2); b1[t] = $NF }
        /\] done: / {
            t = substr($1, 2, length($1) - 2); secs = $3; iters = $5; loss = $9; sub(/,$/, "", loss)
            mb = (b1[t] - b0[t]) / n / iters / 1e6
            per = i1[t] > i0[t] ? (s1[t] - s0[t]) / (i1[t] - i0[t]) : 0
            printf "%s,%d,%d,%d,%.2f,%d,%s,%.2f,%s,%.2f,%d\n", design[t], n, coef, rep, secs, iters, loss, mb, load, per, warm
        }
        # the table: trainer, fit s, iterations, final loss, metric, switch MB, retransmissions, fallbacks
        $1 == "switchml" && NF == 8 && $8 != "0" { print "'"$prog"': the fit fell back: " $0 > "/dev/stderr"; bad = 1 }
        END { exit bad }' "$logs/$name.out"
}

train=(org.switchml.examples.TrainLogisticRegression --generated --features "$features" --classes "$classes"
       --rows "$rows" --nnz "$nnz" --partitions "$workers" --max-iter "$max_iter" --family multinomial
       --warm-up-iter "$warm_up_iter")
failed=0
if ((fit)); then
    [[ -s $out ]] || echo "$header" >"$out"
    for ((rep = 1; rep <= reps; rep++)); do
        for ((d = 0; d < ${#designs[@]}; d++)); do
            design="${designs[(rep - 1 + d) % ${#designs[@]}]}"
            name="$design-$rep"
            # each design's application: its settings, TrainLogisticRegression's flags, and its trainer's row name
            case "$design" in
                hub) app_conf=("${hub_conf[@]}") flags=() row=switchml=switchml-hub ;;
                mllib) app_conf=() flags=(--mllib-only) row=mllib=mllib ;;
                sharded) app_conf=() flags=() row=switchml=switchml-sharded ;;
                embedded) app_conf=("${driver_conf[@]}") flags=() row=switchml=switchml-embedded ;;
            esac
            submit "$name" "${app_conf[@]}" -- "${train[@]}" "${flags[@]}" --output "$logs/out-$name" || failed=1
            rows_of "$name" "$row" | tee -a "$out" "$logs/rows.csv" || failed=1
            grep -h '^\[\(switchml\|mllib\)\] done' "$logs/$name.out" | sed "s/^/# $design: /" || true
        done
        # the same data and params: every design of the rep ends at the same loss, to the printed digits
        losses="$(awk -F, -v rep="$rep" '$4 == rep { print $7 }' "$logs/rows.csv" 2>/dev/null | sort -u)"
        if [[ $(wc -l <<<"$losses") -ne 1 ]]; then
            echo "$prog: rep $rep: the designs' final losses differ: $(tr '\n' ' ' <<<"$losses")" >&2
            failed=1
        fi
    done
fi
if [[ -n $aggregate ]]; then
    case "$aggregate_on" in
        hub) aggregate_conf=("${hub_conf[@]}") ;;
        sharded) aggregate_conf=() ;;
        embedded) aggregate_conf=("${driver_conf[@]}") ;;
    esac
    submit aggregate "${aggregate_conf[@]}" -- org.switchml.examples.SparkAggregateBench --sizes "$aggregate" \
        --partitions "$workers" --reps 3 --no-loop "${check[@]}" ${WARM_UPS:+--warm-up "$WARM_UPS"} || failed=1
    grep -E '^(master=|aggregate |load at)' "$logs/aggregate.out" || true
fi
exit "$failed"
