# shellcheck shell=bash disable=SC2154
# Sourced by the testbed's run-*.sh: the arguments they share (N ELEMENTS REPS), checked, and the checks
# that a rack with N workers is up and that this is root. Expects $prog and $rack; sets $workers,
# $elements and $reps. Exits 2 on a usage error, when not root, or when no such rack is up.

usage_error() {
    echo "$prog: $1" >&2
    echo "usage: $prog N ELEMENTS REPS   (a rack with at least N workers must be up: rack.sh up --workers N)" >&2
    exit 2
}

[[ $# -eq 3 ]] || usage_error "needs N ELEMENTS REPS"
workers="$1" elements="$2" reps="$3"
[[ $workers =~ ^[1-8]$ ]] || usage_error "N must be 1..8, got '$workers'"
[[ $elements =~ ^[1-9][0-9]{0,8}$ ]] || usage_error "ELEMENTS must be a positive whole number, got '$elements'"
[[ $reps =~ ^[1-9][0-9]{0,4}$ ]] || usage_error "REPS must be a positive whole number, got '$reps'"
[[ $EUID -eq 0 ]] || { echo "$prog: ip netns needs root" >&2; exit 2; }
# The whole list first: grep -q would stop reading early, and pipefail would count the writer's SIGPIPE.
if ! grep -q "^rk-w$workers " <<<"$("$rack" hosts 2>/dev/null || true)"; then
    echo "$prog: no rack with $workers workers is up: run '$rack up --workers $workers' first" >&2
    exit 2
fi
