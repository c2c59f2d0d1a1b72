#!/usr/bin/env bash
# Builds and runs probe.cpp at 2 ranks (one GPU each); from the repository root.
set -euo pipefail
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
mpicxx -O2 -std=c++17 bench/probes/ipc_open/probe.cpp -I"$cuda/include" -L"$cuda/lib64" -lcudart -o /tmp/ipc_open_probe
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 /tmp/ipc_open_probe
