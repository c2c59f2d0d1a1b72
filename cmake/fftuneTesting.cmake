# fftune_add_test(NAME SOURCES... | REUSE TARGET  [LABELS ...] [MPI_RANKS n...] [ENVIRONMENT VAR=value...])
# Unit tests run once; MPI tests are written once and registered at every rank
# count given (oversubscribed where cores are fewer). REUSE registers an existing
# test binary again (e.g. for another backend through ENVIRONMENT).
include(ProcessorCount)
ProcessorCount(FFTUNE_CORES)
# What every test's environment needs (mpirun as root): cmake/ctest_environment.cmake.
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY TEST_INCLUDE_FILES
  ${PROJECT_SOURCE_DIR}/cmake/ctest_environment.cmake)
add_library(fftune_test_main STATIC ${PROJECT_SOURCE_DIR}/cmake/mpi_gtest_main.cpp)
target_link_libraries(fftune_test_main PUBLIC fftune GTest::gtest)

function(fftune_add_test name)
  cmake_parse_arguments(T "" "REUSE" "SOURCES;LABELS;MPI_RANKS;ENVIRONMENT" ${ARGN})
  set(target ${name})
  if(T_REUSE)
    set(target ${T_REUSE})
  else()
    add_executable(${name} ${T_SOURCES})
    target_link_libraries(${name} PRIVATE fftune_test_main fmt::fmt PkgConfig::FFTW3)
  endif()
  if(NOT T_MPI_RANKS)
    add_test(NAME ${name} COMMAND ${target})
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
    if(T_ENVIRONMENT)
      set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
    endif()
    return()
  endif()
  foreach(n IN LISTS T_MPI_RANKS)
    set(flags ${MPIEXEC_PREFLAGS})
    if(n GREATER FFTUNE_CORES AND MPIEXEC_EXECUTABLE MATCHES "mpirun|mpiexec")
      list(APPEND flags --oversubscribe)
    endif()
    add_test(NAME ${name}.np${n}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${flags} $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS})
    # A rank left waiting in a collective call hangs the test: fail it instead.
    set_tests_properties(${name}.np${n} PROPERTIES LABELS "mpi;${T_LABELS}" PROCESSORS ${n} TIMEOUT 600)
    if(T_ENVIRONMENT)
      set_tests_properties(${name}.np${n} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
    endif()
  endforeach()
endfunction()

# fftune_add_job_end_test(NAME SOURCE NOTE): the MPI program NAME (built from
# SOURCE, run as NAME RESULT_FILE) must end its own job at 1 and 2 ranks and
# leave RESULT_FILE.died matching the regex NOTE, where <n> stands for the rank
# count and <last> for the last rank (cmake/expect_job_ends.cmake).
function(fftune_add_job_end_test name source note)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE fftune)
  foreach(n 1 2)
    math(EXPR last "${n} - 1")
    string(REPLACE "<n>" "${n}" expect "${note}")
    string(REPLACE "<last>" "${last}" expect "${expect}")
    set(flags ${MPIEXEC_PREFLAGS})
    if(n GREATER FFTUNE_CORES AND MPIEXEC_EXECUTABLE MATCHES "mpirun|mpiexec")
      list(APPEND flags --oversubscribe)
    endif()
    set(job ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${flags} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    add_test(NAME ${name}.np${n} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${job}"
      -DRESULT_FILE=${PROJECT_BINARY_DIR}/${name}_np${n}.jsonl "-DEXPECT_NOTE=${expect}"
      -P ${PROJECT_SOURCE_DIR}/cmake/expect_job_ends.cmake)
    set_tests_properties(${name}.np${n} PROPERTIES LABELS "engine;mpi" PROCESSORS ${n} TIMEOUT 60)
  endforeach()
endfunction()

# fftune_cli_test(NAME RC [CLI target] ARGS... [EXPECT regex...] [REJECT regex...] [LABELS ...]):
# runs the CLI (fftune_cli, or a CLI built with more families, fftune_add_cli)
# and checks its exit status and output (cmake/expect_command.cmake).
function(fftune_cli_test name rc)
  cmake_parse_arguments(T "" "CLI" "ARGS;EXPECT;REJECT;LABELS" ${ARGN})
  if(NOT T_CLI)
    set(T_CLI fftune_cli)
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND}
    "-DCOMMAND=$<TARGET_FILE:${T_CLI}>;${T_ARGS}" -DEXPECT_RC=${rc}
    "-DEXPECT_OUTPUT=${T_EXPECT}" "-DREJECT_OUTPUT=${T_REJECT}"
    -P ${PROJECT_SOURCE_DIR}/cmake/expect_command.cmake)
  set_tests_properties(${name} PROPERTIES LABELS "cli;${T_LABELS}")
endfunction()

# fftune_family_sweep(FAMILY TESTCASE DIR): a family's CPU sweep through
# `fftune tune --strategy exhaustive` (every point validated) into DIR/db.sqlite, DIR emptied first (test FAMILY_clean);
# its `best` and `report` tests require the fixture FAMILY_db. Without the
# tuner only the clean-up is registered.
function(fftune_family_sweep family testcase dir)
  add_test(NAME ${family}_clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${dir})
  set_tests_properties(${family}_clean PROPERTIES FIXTURES_SETUP ${family}_clean LABELS ${family})
  if(NOT FFTUNE_HAVE_TUNER)
    return()
  endif()
  fftune_cli_test(${family}_sweep 0 ARGS tune ${testcase} --strategy exhaustive --out ${dir}/out --db ${dir}/db.sqlite
    EXPECT "db.sqlite: [1-9][0-9]* added" REJECT "failed|job died" LABELS "${family};mpi;sweep")
  set_tests_properties(${family}_sweep PROPERTIES FIXTURES_REQUIRED ${family}_clean FIXTURES_SETUP ${family}_db
    PROCESSORS 4 TIMEOUT 900)
endfunction()
