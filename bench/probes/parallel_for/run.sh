#!/bin/bash
# Usage (from the repository root): bench/probes/parallel_for/run.sh [BASE_TREE]
# Builds the probe against this tree's parallel.cpp and, with BASE_TREE (an
# unpacked older tree), against that one's too, and runs each.
set -euo pipefail
out=${OUT:-/tmp}/parallel_for
mkdir -p "$out"
build() {  # build LABEL TREE
    g++ -std=c++20 -O2 -I. -o "$out/probe_$1" bench/probes/parallel_for/probe.cpp "$2/core/platform/parallel.cpp" \
        core/platform/settings.cpp -lfmt -lpthread
}
build new .
[ $# -ge 1 ] && build base "$1"
for rep in 1 2; do
    "$out/probe_new" new
    [ $# -ge 1 ] && "$out/probe_base" base
done
