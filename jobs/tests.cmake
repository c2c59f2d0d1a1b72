# Tests beside the jobs sources: profiles and generated scripts (unit), and a
# real single-node Slurm on localhost (end to end; needs root, slurm-wlm, munge).
fftune_add_test(jobs_test SOURCES jobs/jobs_test.cpp LABELS unit)
target_link_libraries(jobs_test PRIVATE fftune_jobs)
if(FFTUNE_HAVE_TUNER)  # the merge job runs `fftune ingest`
  add_test(NAME jobs_slurm_e2e
    COMMAND bash ${PROJECT_SOURCE_DIR}/jobs/slurm_e2e_test.sh $<TARGET_FILE:fftune_cli> ${PROJECT_SOURCE_DIR})
  set_tests_properties(jobs_slurm_e2e PROPERTIES LABELS "slurm;mpi" PROCESSORS 2 TIMEOUT 1200
    PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL:")
endif()
