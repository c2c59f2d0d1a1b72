# The krylov family (README.md beside this file): built into the library.
# context: what the solvers share; one file per solver (and per fusion that
# iterates differently), each registering itself by "solver/fusion".
target_sources(fftune PRIVATE
  families/krylov/operator.cpp
  families/krylov/cpu_kernels.cpp
  families/krylov/context.cpp
  families/krylov/cg.cpp
  families/krylov/cg_folded.cpp
  families/krylov/cg_one_pass.cpp
  families/krylov/cocg.cpp
  families/krylov/bicg.cpp
  families/krylov/qmr.cpp
  families/krylov/qmr_sym.cpp
  families/krylov/krylov.cpp)
if(CMAKE_CUDA_COMPILER)
  target_sources(fftune PRIVATE families/krylov/cuda_launch.cu families/krylov/cuda_vector_launch.cu
    families/krylov/cuda_kernels.cpp)
  target_link_libraries(fftune PRIVATE CUDA::cublas CUDA::cusparse)
endif()
if(FFTUNE_BUILD_TESTS)
  fftune_add_test(krylov_mpi_test SOURCES families/krylov/krylov_mpi_test.cpp LABELS "krylov" MPI_RANKS 1 2 3 4)
  fftune_add_test(krylov_solvers_mpi_test SOURCES families/krylov/solvers_mpi_test.cpp LABELS "krylov" MPI_RANKS 1 2 3 4)
  fftune_add_test(krylov_kernels_mpi_test SOURCES families/krylov/kernels_mpi_test.cpp LABELS "krylov" MPI_RANKS 1 2 3 4)
  if(CMAKE_CUDA_COMPILER)
    fftune_add_test(krylov_gpu_test SOURCES families/krylov/krylov_gpu_test.cpp LABELS gpu MPI_RANKS 1 2)
  endif()

  # The CPU validation sweep at 1-4 ranks through the CLI, tuned into a
  # database that `fftune best --problem krylov` and `fftune report` read.
  set(kdir ${PROJECT_BINARY_DIR}/krylov-family)
  fftune_family_sweep(krylov ${PROJECT_SOURCE_DIR}/testcases/krylov_quick.json ${kdir})
  fftune_cli_test(krylov_bad_format 2 ARGS run ${PROJECT_SOURCE_DIR}/families/krylov/testdata/bad_format.json
    EXPECT "/format/1: unknown value 'coo' \\(allowed: csr, ell, matrix_free, cusparse_csr, or \"all\"\\)" LABELS krylov)
  fftune_cli_test(krylov_wrong_solver 2 ARGS run ${PROJECT_SOURCE_DIR}/families/krylov/testdata/wrong_solver.json
    EXPECT "/solver: operator curlcurl13 is solved by cocg, bicg, qmr, qmr_sym, none of which /solver lists" LABELS krylov)
  # Any N1 x N2 x N3 grid (issue 45); a size must still be one.
  fftune_cli_test(krylov_bad_size 2 ARGS run ${PROJECT_SOURCE_DIR}/families/krylov/testdata/bad_size.json
    EXPECT "/sizes/1: \\[16,16\\] is not a size \\(allowed: N or \\[Nx, Ny, Nz\\] with positive integers\\)" LABELS krylov)
  if(FFTUNE_HAVE_TUNER)
    # Iterations are a measurement detail: left out, the count measured; asked, the time scaled to it.
    fftune_cli_test(krylov_best_exact 0 ARGS best --problem krylov --size 16 --ranks 2
      --db ${kdir}/db.sqlite EXPECT "^cg/(csr|ell|matrix_free)/(none|fused|folded|one_pass)/(none|jacobi)/fftw  \\[exact\\]  fastest of 24 validated configurations measured for this problem; for 50 iterations as measured" LABELS krylov)
    # The sweep's non-cubic grid, uneven z-slabs at 3 ranks (10 planes: 4, 3, 3).
    fftune_cli_test(krylov_best_non_cubic 0 ARGS best --problem krylov --size 8 6 10 --ranks 3 --iterations 50
      --db ${kdir}/db.sqlite EXPECT "^cg/(csr|ell|matrix_free)/(none|fused|folded|one_pass)/(none|jacobi)/fftw  \\[exact\\]  fastest of 24 validated configurations measured for this problem" LABELS krylov)
    fftune_cli_test(krylov_best_curlcurl 0 ARGS best --problem krylov --size 16 --ranks 3 --iterations 1000
      --operator curlcurl13 --db ${kdir}/db.sqlite
      EXPECT "^(cocg|bicg|qmr|qmr_sym)/(csr|ell)/(none|fused|folded|one_pass)/(none|jacobi)/fftw  \\[exact\\]  fastest of 28 validated configurations measured for this problem; measured at 50 iterations, the time scaled to 1000" LABELS krylov)
    fftune_cli_test(krylov_report 0 ARGS report --db ${kdir}/db.sqlite --out ${kdir}/report
      EXPECT "  krylov: [0-9]+ figures from 416 records" LABELS "krylov;plotting")
    # --precision follows --operator where not given (curlcurl13: complex_double), as the help says;
    # --size takes any N1 N2 N3 (issue 45).
    fftune_cli_test(krylov_best_help 0 ARGS best --problem krylov --help
      EXPECT "Problem krylov: ;--size +N or 3 numbers, required: N1 N2 N3: the grid of unknowns, x fastest, z-slabs over the ranks;--precision +double \\| complex_double \\(default follows --operator: poisson7 -> double, curlcurl13 -> complex_double\\)"
      LABELS krylov)
    set_tests_properties(krylov_best_exact krylov_best_non_cubic krylov_best_curlcurl krylov_report
      PROPERTIES FIXTURES_REQUIRED krylov_db)
  endif()
endif()

# Kernel microbenchmarks (Google Benchmark): fftune_krylov_bench.
fftune_family_bench(krylov families/krylov/kernels_bench.cpp "fftw/.*/64"
  "fftw/spmv_dot/matrix_free/64.*bytes_per_second")
# The CUDA launchers timed alone (no sum brought back to the host inside the
# timing): fftune_krylov_launch_bench, GPU only (no smoke test: CI has no GPU).
if(CMAKE_CUDA_COMPILER AND FFTUNE_BUILD_BENCHMARKS)
  find_package(benchmark QUIET)
  if(benchmark_FOUND)
    add_executable(fftune_krylov_launch_bench families/krylov/launch_bench.cpp)
    target_link_libraries(fftune_krylov_launch_bench PRIVATE fftune benchmark::benchmark fmt::fmt CUDA::cudart)
  endif()
endif()
