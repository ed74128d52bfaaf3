#!/usr/bin/env bash
# Compiles switchml.p4 for BMv2 and runs every tests/*.stf through p4c's STF runner
# (backends/bmv2/run-bmv2-test.py) on simple_switch. Exits 0 with "skipped: ..." when the
# tools are not installed, so it can sit in any CI.
#
# Tools are taken from PATH or from these variables:
#   P4C            p4c driver                         (default: p4c on PATH)
#   SIMPLE_SWITCH  simple_switch binary               (default: simple_switch on PATH)
#   P4C_ROOT       p4c source tree                    (default: derived from RUNNER)
#   RUNNER         run-bmv2-test.py                   (default: $P4C_ROOT/backends/bmv2/...,
#                                                      else run-bmv2-test.py on PATH)
#   P4C_BUILD      p4c build dir (p4c-bm2-ss, config.h) (default: $P4C_ROOT/build)
#   TRACES         space-separated .stf files          (default: tests/*.stf)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"

missing=()
p4c_bin="${P4C:-$(command -v p4c || true)}"
[[ -n "$p4c_bin" && -x "$p4c_bin" ]] || missing+=("p4c (set P4C)")
ss_bin="${SIMPLE_SWITCH:-$(command -v simple_switch || true)}"
[[ -n "$ss_bin" && -x "$ss_bin" ]] || missing+=("simple_switch (set SIMPLE_SWITCH)")
runner="${RUNNER:-}"
if [[ -z "$runner" && -n "${P4C_ROOT:-}" ]]; then
    runner="$P4C_ROOT/backends/bmv2/run-bmv2-test.py"
fi
if [[ -z "$runner" ]]; then
    runner="$(command -v run-bmv2-test.py || true)"
fi
[[ -n "$runner" && -f "$runner" ]] || missing+=("run-bmv2-test.py (set P4C_ROOT or RUNNER)")
command -v python3 >/dev/null || missing+=("python3")
if ((${#missing[@]})); then
    echo "skipped: $(IFS=,; echo "${missing[*]}" | sed 's/,/, /g') not found"
    exit 0
fi

root="${P4C_ROOT:-$(cd "$(dirname "$runner")/../.." && pwd)}"
p4c_build="${P4C_BUILD:-$root/build}"
export PATH="$(dirname "$ss_bin"):$PATH"   # the runner starts simple_switch and simple_switch_CLI

# 1. Compile as the acceptance check does, and check the committed P4Info's names.
mkdir -p "$build"
echo "== p4c $(basename "$p4c_bin") -> $build"
"$p4c_bin" --target bmv2 --arch v1model -o "$build" \
    --p4runtime-files "$build/switchml.p4info.txt" "$here/switchml.p4"
names() { grep -E '^ *(name|alias|bitwidth|size|unit):' "$1" | sed 's/^ *//' | sort; }
if ! diff <(names "$here/switchml.p4info.txt") <(names "$build/switchml.p4info.txt") >"$build/p4info.diff"; then
    echo "FAIL: switchml.p4info.txt disagrees with p4c's P4Info (see $build/p4info.diff;"
    echo "      update tools/gen_p4info.py and rerun it)"
    exit 1
fi
echo "== P4Info names match"

# 2. Run the traces. Newer runners take the p4c build dir as -bd; older ones expect to run
#    inside it (./p4c-bm2-ss and config.h).
runner_args=()
workdir="$build"
if python3 "$runner" --help 2>&1 | grep -q -- '-bd'; then
    runner_args+=(-bd "$p4c_build")
else
    workdir="$p4c_build"
fi
traces=(${TRACES:-"$here"/tests/*.stf})
failed=()
for stf in "${traces[@]}"; do
    stf="$(cd "$(dirname "$stf")" && pwd)/$(basename "$stf")"
    echo "== $(basename "$stf")"
    if (cd "$workdir" && python3 "$runner" "$root" ${runner_args[@]+"${runner_args[@]}"} \
            -tf "$stf" "$here/switchml.p4"); then
        echo "PASS $(basename "$stf")"
    else
        echo "FAIL $(basename "$stf")"
        failed+=("$(basename "$stf")")
    fi
done
if ((${#failed[@]})); then
    echo "failed: ${failed[*]}"
    exit 1
fi
echo "all ${#traces[@]} traces passed"
