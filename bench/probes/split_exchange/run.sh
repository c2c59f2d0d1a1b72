#!/usr/bin/env bash
# Builds and runs probe.cu; from the repository root. Args: n [s] [reps] [gpus].
set -euo pipefail
nvcc -O2 -std=c++20 -arch=sm_90 bench/probes/split_exchange/probe.cu -lcufft -o /tmp/split_exchange_probe
/tmp/split_exchange_probe "$@"
