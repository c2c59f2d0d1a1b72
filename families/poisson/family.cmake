# The poisson family (README.md beside this file): built into the library.
target_sources(fftune PRIVATE
  families/poisson/green.cpp
  families/poisson/solver.cpp
  families/poisson/padded.cpp
  families/poisson/zero_skipping.cpp
  families/poisson/column_convolution.cpp
  families/poisson/device_kernels.cpp
  families/poisson/poisson.cpp)
if(CMAKE_CUDA_COMPILER)
  target_sources(fftune PRIVATE families/poisson/column_convolution_cuda.cu families/poisson/column_convolution_cuda.cpp
    families/poisson/device_kernels_cuda.cu families/poisson/device_kernels_cuda.cpp)
endif()
if(FFTUNE_BUILD_TESTS)
  fftune_add_test(poisson_green_test SOURCES families/poisson/green_test.cpp LABELS unit)
  fftune_add_test(poisson_column_convolution_test SOURCES families/poisson/column_convolution_test.cpp LABELS unit)
  fftune_add_test(poisson_device_kernels_test SOURCES families/poisson/device_kernels_test.cpp LABELS unit)
  fftune_add_test(poisson_mpi_test SOURCES families/poisson/poisson_mpi_test.cpp LABELS "poisson" MPI_RANKS 1 2 3 4)
  if(CMAKE_CUDA_COMPILER)
    fftune_add_test(poisson_gpu_test SOURCES families/poisson/poisson_gpu_test.cpp LABELS gpu MPI_RANKS 1)
    fftune_add_test(poisson_column_convolution_cuda REUSE poisson_column_convolution_test LABELS gpu
      ENVIRONMENT FFTUNE_TEST_BACKEND=cuda)
    fftune_add_test(poisson_device_kernels_cuda REUSE poisson_device_kernels_test LABELS gpu
      ENVIRONMENT FFTUNE_TEST_BACKEND=cuda)
  endif()
endif()

# The CPU validation sweep at 1-4 ranks through the CLI, tuned into a
# database; bad testcases are refused before any work.
if(FFTUNE_BUILD_TESTS)
  set(pdir ${PROJECT_BINARY_DIR}/poisson-sweep)
  fftune_family_sweep(poisson ${PROJECT_SOURCE_DIR}/testcases/poisson_quick.json ${pdir})
  fftune_cli_test(poisson_bad_kernel 2 ARGS run ${PROJECT_SOURCE_DIR}/families/poisson/testdata/bad_kernel.json
    EXPECT "/kernel/1: kernel regularized4 is a free-space kernel; boundary .* takes hockney" LABELS poisson)
  fftune_cli_test(poisson_coarse_size 2 ARGS run ${PROJECT_SOURCE_DIR}/families/poisson/testdata/coarse_size.json
    EXPECT "/sizes/1: size 2x2x2: the free test charge .* needs at least 16 points along the smallest side; coarser, the tolerance admits a wrong φ \\(allowed: at least 16 points along the smallest side; periodic: 8 per axis\\)" LABELS poisson)
  fftune_cli_test(poisson_bad_boundary 2 ARGS run ${PROJECT_SOURCE_DIR}/families/poisson/testdata/bad_boundary.json
    EXPECT "/boundary: unknown value 'open' \\(allowed: free, wire, surface, periodic, or \"all\"\\)" LABELS poisson)
  if(FFTUNE_HAVE_TUNER)
    fftune_cli_test(poisson_best_exact 0 ARGS best --problem poisson --size 30 29 28 --ranks 3 --boundary wire
      --db ${pdir}/db.sqlite EXPECT "^(padded|zero_skipping|zero_skipping_fused)/fftw/.*  \\[exact\\]  fastest of [0-9]+ validated" LABELS poisson)
    fftune_cli_test(poisson_best_nearest 0 ARGS best --problem poisson --size 32 --ranks 2 --boundary free
      --kernel regularized4 --db ${pdir}/db.sqlite
      EXPECT "\\[nearest\\]  fastest applicable configuration of the nearest measured problem 30x29x28" LABELS poisson)
    fftune_cli_test(poisson_best_default 0 ARGS best --problem poisson --size 64 --ranks 1 --boundary surface
      --precision single --db ${pdir}/db.sqlite --max-error 1e-9
      EXPECT "padded/fftw/reference_3d/default/1x1/none/host  \\[default\\]" LABELS poisson)
    fftune_cli_test(poisson_report 0 ARGS report --db ${pdir}/db.sqlite --out ${pdir}/report
      EXPECT "  poisson: 40 figures from [0-9]+ records" LABELS "poisson;plotting")
    # The cost model is of fft3d only: on a database of poisson records it says so (it threw before).
    fftune_cli_test(poisson_model 0 ARGS model --db ${pdir}/db.sqlite
      EXPECT "none of the [0-9]+ validated records is of fft3d, the only family with a cost model" LABELS "poisson;tuner")
    set_tests_properties(poisson_best_exact poisson_best_nearest poisson_best_default poisson_report poisson_model
      PROPERTIES FIXTURES_REQUIRED poisson_db)
  endif()
endif()

# Microbenchmark of the fused x-stage (Google Benchmark): fftune_poisson_bench.
fftune_family_bench(poisson families/poisson/column_bench.cpp "fftw/.*/32"
  "fftw/column_convolution/single/32.*bytes_per_second")
