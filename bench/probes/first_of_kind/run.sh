#!/usr/bin/env bash
# Builds and runs the probe under lazy and eager module loading, with and
# without a tiny-plan warm-up. From the repository root: run.sh [N...]
set -euo pipefail
d=$(dirname "$0"); b=${TMPDIR:-/tmp}/first_of_kind
nvcc -O2 -arch=sm_90 -o "$b" "$d/probe.cu" -lcufft
for n in "${@:-256}"; do
  for ml in LAZY EAGER; do
    for w in "" warm; do
      /usr/bin/time -f "process wall %e s, max rss %M KiB" env CUDA_MODULE_LOADING=$ml "$b" "$n" $w
    done
  done
done
