#!/bin/sh
# A stand-in MPI launcher that cannot start a job, as srun cannot without an
# allocation: it says why and exits 1 (app/tests.cmake, cli_launcher_cannot_start).
[ "$1" = "--version" ] && { echo "stand-in launcher"; exit 0; }
echo "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified" >&2
exit 1
