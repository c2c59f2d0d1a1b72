#!/usr/bin/env bash
# On the GPU machine, from the repository root: bench/probes/kept_block/probe2/run.sh
set -u
d=bench/probes/kept_block/probe2
nvcc -std=c++17 -I. -gencode arch=compute_90,code=lto_90 -dc -fatbin variants/backends/cufft_store_aside.cu -o $d/engine.fatbin || exit 1
nvcc -gencode arch=compute_90,code=lto_90 -dc -fatbin bench/probes/kept_block/probe/store_kept.cu -o $d/probe.fatbin || exit 1
nvcc -O2 -std=c++17 -I. -arch=sm_90 $d/plan_variants.cu -o $d/plan_variants -lcufft || exit 1
$d/plan_variants $d/engine.fatbin $d/probe.fatbin
