# Helpers for the families' kernel microbenchmarks (with or without tests).
# A family's Google Benchmark binary fftune_<family>_bench from `source`, when
# FFTUNE_BUILD_BENCHMARKS and Google Benchmark are there, with a smoke test
# that runs the benchmarks matching `filter` briefly and must print `expect`.
function(fftune_family_bench family source filter expect)
  if(NOT FFTUNE_BUILD_BENCHMARKS)
    return()
  endif()
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    return()
  endif()
  add_executable(fftune_${family}_bench ${source})
  target_link_libraries(fftune_${family}_bench PRIVATE fftune benchmark::benchmark fmt::fmt)
  if(FFTUNE_BUILD_TESTS)
    add_test(NAME ${family}_bench_smoke COMMAND fftune_${family}_bench --benchmark_filter=${filter}
      --benchmark_min_time=0.01)
    set_tests_properties(${family}_bench_smoke PROPERTIES LABELS "${family};bench"
      PASS_REGULAR_EXPRESSION "${expect}" FAIL_REGULAR_EXPRESSION "ERROR|error")
  endif()
endfunction()
