# CLI tests: bad testcases fail before any run (exit 2, message names the JSON
# path, the bad value and the allowed values); the quick sweep runs end to end.

set(data ${PROJECT_SOURCE_DIR}/app/testdata)
fftune_cli_test(cli_malformed_json 2 ARGS run ${data}/malformed.json
  EXPECT "invalid testcase" "malformed.json: malformed JSON")
fftune_cli_test(cli_unknown_key 2 ARGS run ${data}/unknown_key.json
  EXPECT "/iteratoins: unknown key" "allowed: .*iterations")
fftune_cli_test(cli_unknown_value 2 ARGS run ${data}/unknown_value.json
  EXPECT "/redistribution/1: unknown value 'alltoall'" "allowed: a2a_mpi_type, a2a_sync")
fftune_cli_test(cli_impossible_size 2 ARGS run ${data}/impossible_size.json
  EXPECT "/sizes/0/1: 0 is out of range")
fftune_cli_test(cli_bad_grid 2 ARGS run ${data}/bad_grid.json
  EXPECT "/process_grid/1: 3x2 needs 6 ranks")
fftune_cli_test(cli_missing_file 2 ARGS run ${data}/does_not_exist.json EXPECT "cannot open")
# What parsing alone would let through (issue 42 item 9): a key given twice
# (JSON keeps the last), a number beyond a double (1e999), 2^63 (wraps to a
# negative long long), both redistribution axes (one would be dropped).
fftune_cli_test(cli_duplicate_key 2 ARGS run ${data}/duplicate_key.json --dry-run
  EXPECT "duplicate_key.json: /iterations: the key 'iterations' appears twice in one object" REJECT "points")
fftune_cli_test(cli_number_overflow 2 ARGS run ${data}/number_overflow.json --dry-run
  EXPECT "number_overflow.json: /sizes/0/1: 1e999 is out of range \\(allowed: numbers within \\+-1.8e308\\)")
# As root without Open MPI's two variables, the launcher sets them and says so
# (was: every point relaunched and recorded as failed). Only as root does it mean anything.
add_test(NAME cli_root_without_ompi_variables
  COMMAND ${CMAKE_COMMAND} -E env --unset=OMPI_ALLOW_RUN_AS_ROOT --unset=OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
          $<TARGET_FILE:fftune_cli> run ${data}/resume.json --fresh --out ${PROJECT_BINARY_DIR}/cli-root)
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(uid STREQUAL "0")
  set_tests_properties(cli_root_without_ompi_variables PROPERTIES LABELS "cli;mpi"
    PASS_REGULAR_EXPRESSION "running as root: set OMPI_ALLOW_RUN_AS_ROOT=1.*Summary: [0-9]+ ok"
    FAIL_REGULAR_EXPRESSION "[0-9]+ failed|job died|no rank")
else()
  set_tests_properties(cli_root_without_ompi_variables PROPERTIES LABELS "cli;mpi" FAIL_REGULAR_EXPRESSION "failed|running as root")
endif()
# A point larger than the host's memory is skipped with its need before it allocates (was: std::bad_alloc).
fftune_cli_test(cli_host_memory 0 ARGS run ${data}/host_memory.json --fresh --out ${PROJECT_BINARY_DIR}/cli-host-memory
  EXPECT "does not fit in host memory: 1 rank\\(s\\) on this node need [0-9.]+ GiB \\(this rank [0-9.]+ GiB\\), [0-9.]+ GiB of its [0-9.]+ GiB are available"
  REJECT "bad_alloc")
fftune_cli_test(cli_size_2_to_63 2 ARGS run ${data}/huge_size.json --dry-run
  EXPECT "huge_size.json: /sizes/0/1: 9223372036854775808 is out of range \\(allowed: 1 to 1073741824\\)")
fftune_cli_test(cli_both_redistributions 2 ARGS run ${data}/both_redistributions.json --dry-run
  EXPECT "/redistribution_phases: given together with /redistribution \"a2a_sync\" \\(allowed: one of them" REJECT "points")
fftune_cli_test(cli_list 0 ARGS list
  EXPECT "decomposition: pencil, reference_3d, (reference_cufftxt, )?slab_1d2d, slab_2d1d" "redistribution: .*p2p_streams")
fftune_cli_test(cli_quick_dry_run 0 ARGS run ${PROJECT_SOURCE_DIR}/testcases/quick.json --dry-run
  EXPECT "total: 5844 points")
# The main job: every applicable point validated, none failed.
fftune_cli_test(cli_quick_sweep 0
  ARGS run ${PROJECT_SOURCE_DIR}/testcases/quick.json --out ${PROJECT_BINARY_DIR}/quick-sweep --fresh
  EXPECT "Summary: [0-9]+ ok  [0-9]+ skipped  \\(5844 points\\)"
  REJECT "failed|job died"
  LABELS "sweep;mpi")
set_tests_properties(cli_quick_sweep PROPERTIES PROCESSORS 4 TIMEOUT 900)
fftune_cli_test(cli_ranks_subset 0 ARGS run ${PROJECT_SOURCE_DIR}/testcases/quick.json --ranks 1,3 --dry-run
  EXPECT "1 ranks: 852 points" "3 ranks: 1464 points" "total: 2316 points")
fftune_cli_test(cli_ranks_not_in_testcase 2 ARGS run ${PROJECT_SOURCE_DIR}/testcases/quick.json --ranks 8
  EXPECT "--ranks 8 is not among the testcase's ranks \\(1, 2, 3, 4\\)")
# A job that dies is resumed after the point it died on, which is recorded as
# failed with the reason a rank left (a lost device: core/platform/device_fault.hpp).
fftune_cli_test(cli_resume_after_a_job_died 1
  ARGS run ${data}/resume.json --out ${PROJECT_BINARY_DIR}/resume-sweep --launcher ${data}/dies_once_launcher.sh
  EXPECT "job died \\(status 4\\) on point 1; resuming" "Summary: 1 failed  1 ok"
         "exited with status 4 while running this point \\(rank 0: device lost after: injected: cudaErrorIllegalAddress[^)]*\\); the sweep resumed after it")
add_test(NAME cli_resume_clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${PROJECT_BINARY_DIR}/resume-sweep)
set_tests_properties(cli_resume_clean PROPERTIES FIXTURES_SETUP resume_sweep_clean LABELS cli)
set_tests_properties(cli_resume_after_a_job_died PROPERTIES FIXTURES_REQUIRED resume_sweep_clean LABELS "cli;sweep;mpi")
# A launcher or job that fails before its first point stops the sweep at once
# with the launcher's own message (quoted, indented) and what to check; no
# point is recorded as failed, no second job is started (issue 42, item 4).
fftune_cli_test(cli_launcher_bad_argument 1
  ARGS run ${data}/resume.json --out ${PROJECT_BINARY_DIR}/launcher-bad-argument --fresh --launcher-arg=--no-such-mpirun-flag
  EXPECT "the 1-rank job failed before its first point \\(mpirun exited with status 1\\), so the sweep stopped; nothing was recorded for it"
         "It said:" "  mpirun: Error: unknown option .--no-such-mpirun-flag."
         "The command was: mpirun -n 1 .*--no-such-mpirun-flag" "Check the launcher and its arguments"
  REJECT "Summary:|job died|points 2\\.\\.2|failed:")
fftune_cli_test(cli_launcher_cannot_start 1
  ARGS run ${data}/resume.json --out ${PROJECT_BINARY_DIR}/launcher-cannot-start --fresh --launcher ${data}/cannot_start_launcher.sh
  EXPECT "the 1-rank job failed before its first point \\([^)]*cannot_start_launcher.sh exited with status 1\\)"
         "  srun: error: Unable to allocate resources: Invalid account"
  REJECT "Summary:|job died|points 2\\.\\.2|failed:")
# A FIFO as testcase is refused, not read (which waited for a writer for ever).
add_test(NAME cli_fifo_make COMMAND sh -c "rm -f fifo-testcase.json && mkfifo fifo-testcase.json"
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
set_tests_properties(cli_fifo_make PROPERTIES FIXTURES_SETUP fifo_testcase LABELS cli)
fftune_cli_test(cli_testcase_fifo 2 ARGS run ${PROJECT_BINARY_DIR}/fifo-testcase.json
  EXPECT "invalid testcase: .*fifo-testcase.json: not a regular file \\(a FIFO\\)")
set_tests_properties(cli_testcase_fifo PROPERTIES FIXTURES_REQUIRED fifo_testcase TIMEOUT 30)
# A bad setting in the environment (core/platform/settings.hpp) fails before any work.
fftune_cli_test(cli_bad_setting 2 ARGS run ${PROJECT_SOURCE_DIR}/testcases/quick.json --dry-run
  EXPECT "FFTUNE_NCCL_TIMEOUT_S='5min' is not allowed \\(allowed: seconds, a number > 0, or unset\\)"
  REJECT "points")
set_tests_properties(cli_bad_setting PROPERTIES ENVIRONMENT FFTUNE_NCCL_TIMEOUT_S=5min)
# fftune probe refuses bad options before launching anything.
fftune_cli_test(cli_probe_bad_size 2 ARGS probe --sizes 8 12
  EXPECT "--sizes 12: bytes per peer must be a multiple of 8 from 8 to 1073741824")
fftune_cli_test(cli_probe_bad_backend 2 ARGS probe --backend tpu EXPECT "--backend tpu: unknown backend \\(allowed: .*fftw")
fftune_cli_test(cli_probe_bad_iterations 2 ARGS probe --iterations 0 EXPECT "--iterations 0: at least 1")
fftune_cli_test(cli_probe_bad_timeout 2 ARGS probe --timeout -5 EXPECT "--timeout -5: must be seconds, a number > 0, or 0 for no limit")
fftune_cli_test(cli_probe_bad_ranks 2 ARGS probe --ranks 2,0 EXPECT "--ranks 0: world sizes must be 1 or more")
fftune_cli_test(cli_probe_ranks_in_job 2 ARGS probe --ranks 2 --no-launch EXPECT "--ranks launches one job per world size")
# Every shipped testcase is valid (a typo found here costs no GPU session);
# those for the cuda backend where it is built.
file(GLOB shipped_testcases CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/testcases/*.json)
foreach(testcase IN LISTS shipped_testcases)
  file(READ ${testcase} text)
  if(text MATCHES "\"backend\": *\"cuda\"" AND NOT CMAKE_CUDA_COMPILER)
    continue()
  endif()
  get_filename_component(stem ${testcase} NAME_WE)
  fftune_cli_test(cli_testcase_${stem} 0 ARGS run ${testcase} --dry-run EXPECT "total: [1-9][0-9]* points" REJECT "invalid")
endforeach()
