#!/usr/bin/env bash
# Compiles switchml.p4 for BMv2 (v1model) with p4c and checks that the committed P4Info,
# switchml.p4info.txt, is byte for byte the one p4c generates.
#
#   p4/compile.sh                  compile into p4/build/, fail (exit 1) if the P4Info differs
#   p4/compile.sh --write-p4info   compile and replace switchml.p4info.txt with p4c's
#
# Writes OUT/switchml.json (the BMv2 config the controller pushes) and OUT/switchml.p4info.txt.
# Variables: P4C (p4c driver, default: p4c on PATH), OUT (default: p4/build).
# Exit codes: 0 ok, 1 compile error or P4Info differs, 2 p4c not found.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/build}"
write=0
case "${1:-}" in
    "") ;;
    --write-p4info) write=1 ;;
    *) echo "usage: $0 [--write-p4info]" >&2; exit 2 ;;
esac

p4c_bin="${P4C:-$(command -v p4c || true)}"
if [[ -z "$p4c_bin" || ! -x "$p4c_bin" ]]; then
    echo "FAIL: p4c not found (set P4C or put it on PATH; p4/README.md, 'Getting the tools')" >&2
    exit 2
fi

mkdir -p "$out"
echo "== $("$p4c_bin" --version 2>/dev/null | head -1 || echo p4c): switchml.p4 -> $out"
# p4c names the deprecated .txt P4Info format in a warning; the file is the same protobuf text.
"$p4c_bin" --target bmv2 --arch v1model -o "$out" \
    --p4runtime-files "$out/switchml.p4info.txt" "$here/switchml.p4" \
    2> >(grep -v 'txt format is being deprecated' >&2)

if ((write)); then
    cp "$out/switchml.p4info.txt" "$here/switchml.p4info.txt"
    echo "== wrote switchml.p4info.txt from p4c's output"
elif ! diff -u "$here/switchml.p4info.txt" "$out/switchml.p4info.txt" >"$out/p4info.diff"; then
    echo "FAIL: switchml.p4info.txt differs from the P4Info p4c generates ($out/p4info.diff):" >&2
    head -40 "$out/p4info.diff" >&2
    echo "      run p4/compile.sh --write-p4info and commit the result" >&2
    exit 1
else
    echo "== P4Info: switchml.p4info.txt is p4c's, byte for byte"
fi
