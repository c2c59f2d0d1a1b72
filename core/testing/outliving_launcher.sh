#!/bin/sh
# A stand-in MPI launcher whose job outlives it, as ranks outlive a killed
# mpirun for a while: it runs $FFTUNE_TEST_REAL_LAUNCHER (mpirun) as its child
# instead of exec'ing it, so that the test can kill -9 this shell, the
# process the sweep started, while the real job runs on
# (core/run/sweep_job_dies_test.sh).
[ "$1" = "--version" ] && { echo "stand-in launcher"; exit 0; }
"${FFTUNE_TEST_REAL_LAUNCHER:?}" "$@"
