#!/usr/bin/env bash
# Builds and runs probe.cu; from this folder. Args passed to the probe: n planes [s].
set -euo pipefail
nvcc -O2 -std=c++17 -arch=sm_90 probe.cu -lcufft -o /tmp/l2_batch_probe
/tmp/l2_batch_probe "$@"
