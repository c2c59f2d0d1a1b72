#!/usr/bin/env bash
# On the GPU machine, from the repository root.
set -u
d=bench/probes/kept_block/probe3
nvcc -gencode arch=compute_90,code=lto_90 -dc -fatbin $d/callbacks.cu -o $d/plain.fatbin || exit 1
nvcc -std=c++17 -I. -gencode arch=compute_90,code=lto_90 -dc -fatbin variants/backends/cufft_store_aside.cu -o $d/engine.fatbin || exit 1
nvcc -O2 -std=c++17 -I. -arch=sm_90 $d/probe.cu -o $d/probe -lcufft || exit 1
$d/probe $d/plain.fatbin $d/engine.fatbin
