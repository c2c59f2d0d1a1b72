#!/bin/sh
# A stand-in MPI launcher for the sweep's resume test, called as the sweep
# calls mpirun: -n N PROGRAM run TESTCASE --out DIR ... Its first job dies at
# once with status 4, after leaving beside the result file the note that a
# rank which lost its device leaves (core/platform/device_fault.hpp); later jobs run
# PROGRAM as a one-process MPI job.
[ "$1" = "--version" ] && { echo "stand-in launcher"; exit 0; }
shift 2
out=
prev=
for a in "$@"; do
  [ "$prev" = "--out" ] && out=$a
  prev=$a
done
[ -n "$out" ] || { echo "dies_once_launcher: no --out in: $*" >&2; exit 2; }
if [ ! -e "$out/died-once" ]; then
  mkdir -p "$out" && touch "$out/died-once"
  echo "rank 0: device lost after: injected: cudaErrorIllegalAddress: an illegal memory access was encountered" \
    > "$out/resume-r1.jsonl.died"
  exit 4
fi
exec "$@"
