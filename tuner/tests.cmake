# Tuner tests: database and selector units, and the CLI end to end on the CPU
# backend (tune -> database -> best -> example application).
fftune_add_test(database_test SOURCES tuner/database_test.cpp LABELS unit)
target_link_libraries(database_test PRIVATE SQLite::SQLite3)
fftune_add_test(selector_test SOURCES tuner/selector_test.cpp LABELS unit)

set(db ${PROJECT_BINARY_DIR}/tuner-test/tuning.sqlite)
add_test(NAME tuner_clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${PROJECT_BINARY_DIR}/tuner-test)
set_tests_properties(tuner_clean PROPERTIES FIXTURES_SETUP tuner_db_clean LABELS tuner)
fftune_cli_test(tuner_tune 0 ARGS tune ${PROJECT_SOURCE_DIR}/tuner/testdata/tiny.json
  --out ${PROJECT_BINARY_DIR}/tuner-test/out --db ${db}
  EXPECT "tuning.sqlite: 256 added" REJECT "failed" LABELS "tuner;mpi")
set_tests_properties(tuner_tune PROPERTIES FIXTURES_REQUIRED tuner_db_clean FIXTURES_SETUP tuner_db PROCESSORS 2)
fftune_cli_test(tuner_reingest 0 ARGS ingest ${PROJECT_BINARY_DIR}/tuner-test/out/round0/tiny.jsonl --db ${db}
  EXPECT "0 added, 256 already present, 0 unreadable; 256 records" LABELS tuner)
fftune_cli_test(tuner_best_exact 0 ARGS best --size 24 12 10 --ranks 2 --db ${db}
  EXPECT "fftw/[a-z_0-9]+/[a-z]+/2x1/[a-z_0-9+]+/host  \\[exact\\]  fastest of 30 validated" LABELS tuner)
fftune_cli_test(tuner_best_nearest 0 ARGS best --size 20 12 12 --ranks 2 --direction inverse --db ${db} --json
  EXPECT "\"rung\": \"nearest\"" "\"distance\": 0\\.52" LABELS tuner)
fftune_cli_test(tuner_best_default 0 ARGS best --size 20 12 12 --ranks 3 --precision single --db ${db}
  EXPECT "\\[default\\]  .*no validated measurement of a single forward problem at 3 ranks" LABELS tuner)
fftune_cli_test(tuner_best_missing_db 0 ARGS best --size 8 8 8 --ranks 1 --db ${PROJECT_BINARY_DIR}/tuner-test/none.sqlite
  EXPECT "\\[default\\]  .*none.sqlite: no tuning database here" LABELS tuner)
fftune_cli_test(tuner_best_bad_size 2 ARGS best --size 8 8 --ranks 1 EXPECT "--size" LABELS tuner)
fftune_cli_test(tuner_winners 0 ARGS winners --db ${db}
  EXPECT "    2       24x12x10 double forward" "(faster|same within noise|ambiguous)" LABELS tuner)
set_tests_properties(tuner_reingest tuner_best_exact tuner_best_nearest tuner_best_default tuner_winners
  PROPERTIES FIXTURES_REQUIRED tuner_db)
# The example application runs the selected plan and checks its output.
add_test(NAME tuner_example_app
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:fftune_example_app> 24 12 10 --db ${db})
set_tests_properties(tuner_example_app PROPERTIES FIXTURES_REQUIRED tuner_db LABELS "tuner;mpi" PROCESSORS 2
  PASS_REGULAR_EXPRESSION "chosen by: exact.*round trip max error [0-9.e-]+: ok")

# The issue's acceptance path: tune quick.json at 1-4 ranks, then ask for plans.
set(qdb ${PROJECT_BINARY_DIR}/tuner-quick/tuning.sqlite)
add_test(NAME tuner_quick_clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${PROJECT_BINARY_DIR}/tuner-quick)
set_tests_properties(tuner_quick_clean PROPERTIES FIXTURES_SETUP tuner_quick_clean LABELS tuner)
fftune_cli_test(tuner_tune_quick 0 ARGS tune ${PROJECT_SOURCE_DIR}/testcases/quick.json
  --out ${PROJECT_BINARY_DIR}/tuner-quick/out --db ${qdb}
  EXPECT "tuning.sqlite: 5856 added" REJECT "failed|job died" LABELS "tuner;mpi;sweep")
set_tests_properties(tuner_tune_quick PROPERTIES FIXTURES_REQUIRED tuner_quick_clean FIXTURES_SETUP tuner_quick
  PROCESSORS 4 TIMEOUT 900)
foreach(r 1 2 3 4)
  fftune_cli_test(tuner_quick_best_exact_r${r} 0 ARGS best --size 9 10 11 --ranks ${r} --precision single --direction inverse --db ${qdb}
    EXPECT "\\[exact\\]  fastest of [0-9]+ validated" LABELS tuner)
  set_tests_properties(tuner_quick_best_exact_r${r} PROPERTIES FIXTURES_REQUIRED tuner_quick)
endforeach()
fftune_cli_test(tuner_quick_best_nearest 0 ARGS best --size 10 10 10 --ranks 4 --db ${qdb}
  EXPECT "\\[nearest\\]  fastest applicable configuration of the nearest measured problem 9x10x11" LABELS tuner)
set_tests_properties(tuner_quick_best_nearest PROPERTIES FIXTURES_REQUIRED tuner_quick)

# Search strategies on the tiny sweep, judged against its exhaustive results.
foreach(s phase halving)
  fftune_cli_test(tuner_strategy_${s} 0 ARGS tune ${PROJECT_SOURCE_DIR}/tuner/testdata/tiny.json --strategy ${s}
    --out ${PROJECT_BINARY_DIR}/tuner-test/${s} --db ${PROJECT_BINARY_DIR}/tuner-test/strategies.sqlite --compare ${PROJECT_BINARY_DIR}/tuner-test/out/round0/tiny.jsonl
    EXPECT "strategy ${s}: 8 problems; pick = exhaustive best in [0-9]+, within 5% in [0-9]+" LABELS "tuner;mpi")
  set_tests_properties(tuner_strategy_${s} PROPERTIES FIXTURES_REQUIRED tuner_db PROCESSORS 2)
endforeach()
fftune_cli_test(tuner_strategy_halving_rounds 0 ARGS tune ${PROJECT_SOURCE_DIR}/tuner/testdata/tiny.json --strategy halving
  --out ${PROJECT_BINARY_DIR}/tuner-test/halving2 --db ${PROJECT_BINARY_DIR}/tuner-test/halving2.sqlite
  EXPECT "halving: 4 rounds" LABELS "tuner;mpi")
set_tests_properties(tuner_strategy_halving_rounds PROPERTIES FIXTURES_REQUIRED tuner_db_clean PROCESSORS 2)
fftune_add_test(model_test SOURCES tuner/model_test.cpp LABELS unit)
fftune_cli_test(tuner_model 0 ARGS model --db ${db}
  EXPECT "fftw/a2a_sync +alpha [0-9.e-]+ ms per peer, beta [0-9.e+-]+ GB/s" "model \\(leave one problem out\\): [0-9]+ problems" LABELS tuner)
set_tests_properties(tuner_model PROPERTIES FIXTURES_REQUIRED tuner_db)
fftune_cli_test(tuner_best_model 0 ARGS best --size 20 12 12 --ranks 3 --db ${db}
  EXPECT "\\[model\\]  alpha-beta model fitted to [0-9]+ measurements" LABELS tuner)
set_tests_properties(tuner_best_model PROPERTIES FIXTURES_REQUIRED tuner_db)
