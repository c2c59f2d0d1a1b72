# Tests beside the jobs sources: profiles and generated scripts (unit), and a
# real single-node Slurm on localhost (end to end; needs root, slurm-wlm, munge).
fftune_add_test(jobs_test SOURCES jobs/jobs_test.cpp LABELS unit)
target_link_libraries(jobs_test PRIVATE fftune_jobs)
# The shipped example profile is read from the source tree.
target_compile_definitions(jobs_test PRIVATE FFTUNE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
if(FFTUNE_HAVE_TUNER)  # the merge job runs `fftune ingest`
  add_test(NAME jobs_slurm_e2e
    COMMAND bash ${PROJECT_SOURCE_DIR}/jobs/slurm_e2e_test.sh $<TARGET_FILE:fftune_cli> ${PROJECT_SOURCE_DIR})
  set_tests_properties(jobs_slurm_e2e PROPERTIES LABELS "slurm;mpi" PROCESSORS 2 TIMEOUT 1200
    PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()

# A task resubmitted after a rank ended its job goes on after the point it died on.
add_test(NAME jobs_task_resume COMMAND bash ${PROJECT_SOURCE_DIR}/jobs/task_resume_test.sh
  $<TARGET_FILE:fftune_cli> ${MPIEXEC_EXECUTABLE})
set_tests_properties(jobs_task_resume PROPERTIES LABELS "jobs;mpi" TIMEOUT 120
  PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL:")

# Bad input on the command line fails before anything is written, exit 2.
set(jobs_data ${PROJECT_SOURCE_DIR}/jobs/testdata)
fftune_cli_test(jobs_bad_profile 2 ARGS jobs slurm ${PROJECT_SOURCE_DIR}/tuner/testdata/tiny.json
  --cluster ${jobs_data}/bad_profile.json --out ${PROJECT_BINARY_DIR}/jobs-test/bad
  EXPECT "bad_profile.json: /partitions/cpu/gpus: unknown key 'gpus' \\(allowed: nodes, cpus_per_node, gpus_per_node, max_time\\)"
  LABELS jobs)
fftune_cli_test(jobs_too_many_ranks 2 ARGS jobs slurm ${PROJECT_SOURCE_DIR}/tuner/testdata/tiny.json
  --cluster ${jobs_data}/one_core.json --out ${PROJECT_BINARY_DIR}/jobs-test/small
  EXPECT "2 ranks need 2 nodes \\(1 ranks per node\\), but partition 'cpu' has 1" LABELS jobs)
fftune_cli_test(jobs_status_not_a_job_dir 1 ARGS jobs status ${jobs_data}
  EXPECT "no jobs.json: not a job directory" LABELS jobs)
fftune_cli_test(jobs_resubmit_needs_failed 2 ARGS jobs resubmit ${jobs_data} EXPECT "--failed is required" LABELS jobs)
