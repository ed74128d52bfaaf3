#!/usr/bin/env bash
# Compiles switchml.p4 (compile.sh: fails when the committed P4Info is not p4c's) and runs every
# tests/*.stf through p4c's own STF runner (backends/bmv2/run-bmv2-test.py) on simple_switch.
#
# Exit codes: 0 every trace passed; 1 a trace failed or the P4Info differs; 2 a tool is missing
# (a skip is not a pass: the message says how to get the tools).
#
# Tools are taken from PATH or from these variables:
#   P4C            p4c driver                       (default: p4c on PATH)
#   P4C_BM2_SS     p4c-bm2-ss, which the runner runs (default: beside P4C, else on PATH)
#   SIMPLE_SWITCH  simple_switch                    (default: on PATH; simple_switch_CLI beside it)
#   P4C_ROOT       p4c source tree (only its backends/bmv2 and tools/ are used; no build needed)
#   PYTHON         python3 with scapy, ply, thrift, six (default: the first such of python3 on
#                  PATH and /usr/bin/python3)
#   TRACES         space-separated .stf files        (default: tests/*.stf)
#
# simple_switch opens a Thrift server on 0.0.0.0:9090+N with no way to choose the address, so the
# script runs itself in a private network namespace (unshare -n, as root; unshare -rn otherwise).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${OUT:-$here/build}"

install_hint() {
    cat >&2 <<'EOF'
      Get the P4 tools (p4/README.md, "Getting the tools"): the p4lang packages (p4lang-p4c,
      p4lang-bmv2) or a source build of p4lang/p4c, p4lang/behavioral-model and p4lang/PI, plus a
      checkout of p4lang/p4c for its STF runner (P4C_ROOT=that checkout). Python needs scapy, ply,
      thrift and six (Debian: python3-scapy python3-ply python3-thrift python3-six).
EOF
}

if [[ -z "${SWITCHML_P4_NETNS:-}" ]]; then
    for u in "unshare -n" "unshare -rn"; do
        if $u true 2>/dev/null; then
            exec $u env SWITCHML_P4_NETNS=1 bash -c 'ip link set lo up && exec bash "$0" "$@"' \
                "${BASH_SOURCE[0]}" "$@"
        fi
    done
    echo "WARNING: cannot create a network namespace; simple_switch's Thrift server will listen on" \
         "every interface while the traces run" >&2
fi

missing=()
p4c_bin="${P4C:-$(command -v p4c || true)}"
[[ -n "$p4c_bin" && -x "$p4c_bin" ]] || missing+=("p4c (set P4C)")
bm2ss="${P4C_BM2_SS:-}"
if [[ -z "$bm2ss" && -n "$p4c_bin" && -x "$(dirname "$p4c_bin")/p4c-bm2-ss" ]]; then
    bm2ss="$(dirname "$p4c_bin")/p4c-bm2-ss"
fi
bm2ss="${bm2ss:-$(command -v p4c-bm2-ss || true)}"
[[ -n "$bm2ss" && -x "$bm2ss" ]] || missing+=("p4c-bm2-ss (set P4C_BM2_SS)")
ss_bin="${SIMPLE_SWITCH:-$(command -v simple_switch || true)}"
[[ -n "$ss_bin" && -x "$ss_bin" ]] || missing+=("simple_switch (set SIMPLE_SWITCH)")
if [[ -n "$ss_bin" && ! -x "$(dirname "$ss_bin")/simple_switch_CLI" ]] \
        && ! command -v simple_switch_CLI >/dev/null; then
    missing+=("simple_switch_CLI")
fi
runner="${P4C_ROOT:+$P4C_ROOT/backends/bmv2/run-bmv2-test.py}"
[[ -n "$runner" && -f "$runner" ]] || missing+=("p4c's run-bmv2-test.py (set P4C_ROOT to a p4c source checkout)")

# A python3 that can run the runner and simple_switch_CLI (BMv2's modules are added to its path).
bmv2_py=""
if [[ -n "$ss_bin" ]]; then
    for d in "$(dirname "$ss_bin")"/../lib/python3*/site-packages "$(dirname "$ss_bin")"/../lib/python3/dist-packages; do
        [[ -d "$d" ]] && bmv2_py="${bmv2_py:+$bmv2_py:}$(cd "$d" && pwd)"
    done
fi
export PYTHONPATH="${bmv2_py}${PYTHONPATH:+:$PYTHONPATH}"
python=""
for cand in ${PYTHON:-} $(command -v python3 || true) /usr/bin/python3; do
    if [[ -x "$cand" ]] && "$cand" -c 'import scapy, ply, thrift, six' 2>/dev/null; then
        python="$cand"
        break
    fi
done
[[ -n "$python" ]] || missing+=("a python3 with scapy, ply, thrift and six (set PYTHON)")

if ((${#missing[@]})); then
    echo "FAIL: cannot run the BMv2 traces: missing $(IFS=';'; echo "${missing[*]}" | sed 's/;/, /g')" >&2
    install_hint
    exit 2
fi

# 1. Compile and check the committed P4Info.
P4C="$p4c_bin" OUT="$build" bash "$here/compile.sh"

# 2. The runner wants a "build dir" holding p4c-bm2-ss and a config.h that says simple_switch is
#    there (it skips, and passes, otherwise), and starts simple_switch_CLI, whose shebang is
#    "env python3": lay out both, with our python first on PATH.
bd="$build/stf-runner"
rm -rf "$bd"
mkdir -p "$bd/bin" "$bd/work"
ln -s "$bm2ss" "$bd/p4c-bm2-ss"
echo '#define HAVE_SIMPLE_SWITCH 1' >"$bd/config.h"
ln -s "$python" "$bd/bin/python3"
export PATH="$bd/bin:$(dirname "$ss_bin"):$(dirname "$bm2ss"):$PATH"

traces=(${TRACES:-"$here"/tests/*.stf})
failed=()
for stf in "${traces[@]}"; do
    stf="$(cd "$(dirname "$stf")" && pwd)/$(basename "$stf")"
    name="$(basename "$stf")"
    log="$build/${name%.stf}.log"
    echo "== $name"
    # Pass = exit 0 and the runner's own "All went well." (it exits 0 when it skips, too).
    if (cd "$bd/work" && "$python" "$runner" "$P4C_ROOT" -bd "$bd" -tf "$stf" "$here/switchml.p4") \
            >"$log" 2>&1 && grep -q 'All went well' "$log"; then
        echo "PASS $name"
    else
        grep -E 'ERROR|error|differ|Expected|Test failed|skip' "$log" | head -20 || true
        echo "FAIL $name (log: $log)"
        failed+=("$name")
    fi
done
if ((${#failed[@]})); then
    echo "FAIL: ${#failed[@]} of ${#traces[@]} traces failed on BMv2: ${failed[*]}"
    exit 1
fi
echo "all ${#traces[@]} traces passed on BMv2"
