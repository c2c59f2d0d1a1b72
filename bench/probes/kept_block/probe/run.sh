#!/usr/bin/env bash
# On the GPU machine: build the LTO callback and the probe, run at 512^3 and 1024^3.
set -u
cd "$(dirname "$0")"
nvcc -gencode arch=compute_90,code=lto_90 -dc -fatbin store_kept.cu -o store_kept.fatbin || exit 1
nvcc -O2 -arch=sm_90 -std=c++17 probe.cu -o probe -lcufft || exit 1
for n in 512 1024; do ./probe store_kept.fatbin $n; done
