#!/usr/bin/env bash
# Builds the probe and runs each mode in fresh processes, alternating. From the repository root: run.sh [N]
set -euo pipefail
d=$(dirname "$0"); b=${TMPDIR:-/tmp}/concurrent_plans
nvcc -O2 -std=c++17 -arch=sm_90 -o "$b" "$d/probe.cu" -lcufft
for r in 1 2 3; do for m in seq par; do "$b" $m "${1:-256}"; done; done
