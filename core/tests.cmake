# Tests beside the core sources. Unit tests run once; MPI tests at 1-4 ranks.
fftune_add_test(box_test SOURCES core/base/box_test.cpp LABELS unit)
fftune_add_test(config_test SOURCES core/engine/config_test.cpp LABELS unit)
fftune_add_test(registry_test SOURCES core/base/registry_test.cpp LABELS unit)
fftune_add_test(statistics_test SOURCES core/records/statistics_test.cpp LABELS unit)
fftune_add_test(testcase_test SOURCES core/run/testcase_test.cpp LABELS unit)
fftune_add_test(family_test SOURCES core/run/family_test.cpp LABELS unit)
# The layers: no wrong-way include anywhere (and the check catches one).
add_test(NAME layering COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/check_layers_test.sh ${PROJECT_SOURCE_DIR}
         ${PROJECT_BINARY_DIR}/layering-cases)
set_tests_properties(layering PROPERTIES LABELS unit PASS_REGULAR_EXPRESSION "caught: core/engine/x.hpp")
fftune_add_test(engine_axes_test SOURCES core/run/engine_axes_test.cpp LABELS unit)
fftune_add_test(reshape_test SOURCES core/engine/reshape_test.cpp LABELS unit)
fftune_add_test(provenance_test SOURCES core/records/provenance_test.cpp LABELS unit)
fftune_add_test(process_test SOURCES core/platform/process_test.cpp LABELS unit)
fftune_add_test(host_memory_test SOURCES core/platform/host_memory_test.cpp LABELS unit)
fftune_add_test(block_pool_test SOURCES core/platform/block_pool_test.cpp LABELS unit)
fftune_add_test(host_scratch_test SOURCES core/platform/host_scratch_test.cpp LABELS unit)
fftune_add_test(parallel_test SOURCES core/platform/parallel_test.cpp LABELS unit)
fftune_add_test(validation_test SOURCES core/engine/validation_test.cpp LABELS unit)
fftune_add_test(phase_timer_test SOURCES core/platform/phase_timer_test.cpp LABELS unit)
fftune_add_test(settings_test SOURCES core/platform/settings_test.cpp LABELS unit)
fftune_add_test(log_test SOURCES core/platform/log_test.cpp LABELS unit)
fftune_add_test(json_lines_test SOURCES core/records/json_lines_test.cpp LABELS unit)
fftune_add_test(record_file_test SOURCES core/records/record_file_test.cpp LABELS unit)
fftune_add_test(folder_lock_test SOURCES core/platform/folder_lock_test.cpp LABELS unit)
fftune_add_test(job_process_test SOURCES core/platform/job_process_test.cpp LABELS unit)
fftune_add_test(resume_test SOURCES core/run/resume_test.cpp LABELS unit)
fftune_add_test(summary_test SOURCES core/run/summary_test.cpp LABELS unit)
if(ZLIB_FOUND)  # writes the compressed files it reads back
  target_link_libraries(json_lines_test PRIVATE ZLIB::ZLIB)
  target_compile_definitions(json_lines_test PRIVATE FFTUNE_HAVE_ZLIB)
endif()
fftune_add_test(mpi_util_mpi_test SOURCES core/platform/mpi_util_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
fftune_add_test(collective_try_mpi_test SOURCES core/platform/collective_try_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
fftune_add_test(plan_mpi_test SOURCES core/engine/plan_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
fftune_add_test(kept_arrays_mpi_test SOURCES core/engine/kept_arrays_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
fftune_add_test(validation_mpi_test SOURCES core/engine/validation_mpi_test.cpp LABELS engine MPI_RANKS 2 3)
fftune_add_test(gpu_aware_mpi_test SOURCES core/platform/gpu_aware_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3)
fftune_add_test(runner_mpi_test SOURCES core/run/runner_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
fftune_add_test(job_start_mpi_test SOURCES core/run/job_start_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
# The multi-device path (reference_cufftxt's) through a CPU stand-in for cufftXt.
fftune_add_test(multi_device_mpi_test SOURCES core/run/multi_device_mpi_test.cpp LABELS engine MPI_RANKS 1 2)
fftune_add_test(probe_mpi_test SOURCES core/run/probe_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
fftune_add_test(point_watchdog_mpi_test SOURCES core/run/point_watchdog_mpi_test.cpp LABELS engine MPI_RANKS 1 2)
# A rank that loses its device after a failed step ends the job, though a peer
# waits in a receive it never answers, and leaves its reason for the sweep.
fftune_add_job_end_test(device_fault_job core/testing/device_fault_job.cpp
  "^rank <last>: device lost after: injected FFT failure: fake sticky fault\n$")
# A point that hangs on one rank ends its job after point_timeout_s, leaving
# rank 0's reason for the sweep (core/run/point_watchdog.hpp).
fftune_add_job_end_test(hung_point_job core/testing/hung_point_job.cpp
  "^rank 0: point 1 of 1 \\(<n> ranks: 8x8x8 fftw/slab_2d1d/default/<n>x1/test_hangs_on_last_rank/host double forward\\) still running after 1 s \\(point_timeout_s\\)\n$")
# The same for a probe of fftune probe past its --timeout.
fftune_add_job_end_test(hung_probe_job core/testing/hung_probe_job.cpp
  "^rank 0: fft probe \\(test_hangs_in_fft_on_last_rank [a-z]+ n 8 batch 2, contiguous\\) still running after 1 s \\(--timeout\\)\n$")
if(CMAKE_CUDA_COMPILER)
  # The CUDA check needs the runtime library, not a GPU.
  fftune_add_test(cuda_check_test SOURCES core/platform/cuda_check_test.cpp LABELS unit)
  target_link_libraries(cuda_check_test PRIVATE CUDA::cudart)
  # The same engine tests on the GPU (mpirun's local ranks inherit the environment).
  fftune_add_test(plan_gpu_mpi_test REUSE plan_mpi_test LABELS gpu MPI_RANKS 1 2 4
    ENVIRONMENT FFTUNE_TEST_BACKEND=cuda)
  fftune_add_test(kept_arrays_gpu_mpi_test REUSE kept_arrays_mpi_test LABELS gpu MPI_RANKS 2 4
    ENVIRONMENT FFTUNE_TEST_BACKEND=cuda)
endif()

# Fault injection into whole sweeps (issue 42), through the CLI with the real
# launcher; the helpers are core/testing/sweep_faults.sh.
# A full disk: the LD_PRELOAD hook fails writes past a size (core/testing/full_disk_preload.c).
add_library(fftune_full_disk MODULE core/testing/full_disk_preload.c)
target_link_libraries(fftune_full_disk PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME sweep_write_error COMMAND bash ${PROJECT_SOURCE_DIR}/core/run/sweep_write_error_test.sh
  $<TARGET_FILE:fftune_cli> ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:fftune_full_disk>)
# A killed launcher (kill -9, SIGTERM, SIGINT, SIGHUP), the folder lock, resume, partial re-runs.
add_test(NAME sweep_kill COMMAND bash ${PROJECT_SOURCE_DIR}/core/run/sweep_kill_test.sh
  $<TARGET_FILE:fftune_cli> ${MPIEXEC_EXECUTABLE})
# kill -9 of the job's own launcher process while its ranks live on: one record, the failure, for that point.
add_test(NAME sweep_job_dies COMMAND bash ${PROJECT_SOURCE_DIR}/core/run/sweep_job_dies_test.sh
  $<TARGET_FILE:fftune_cli> ${MPIEXEC_EXECUTABLE})
# The issue's check: 568 points, the launcher killed with kill -9 three times at random and resumed.
add_test(NAME sweep_kill9_resume COMMAND bash ${PROJECT_SOURCE_DIR}/core/run/sweep_kill9_resume_check.sh
  $<TARGET_FILE:fftune_cli> ${MPIEXEC_EXECUTABLE})
set_tests_properties(sweep_write_error sweep_kill sweep_job_dies sweep_kill9_resume PROPERTIES
  LABELS "sweep;mpi" PROCESSORS 2 TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL:")
