# The dot family (README.md beside this file) is for the tests only: it is
# built into its own CLI, fftune_with_dot, never into the library or `fftune`.
if(NOT FFTUNE_BUILD_TESTS)
  return()
endif()
fftune_add_cli(fftune_with_dot families/dot/dot.cpp)

# End to end through the code fft3d uses: run at 1-4 ranks, ingest, best, winners, report.
set(dot_dir ${PROJECT_BINARY_DIR}/dot-family)
set(dot_tc ${PROJECT_SOURCE_DIR}/families/dot/testdata/dot.json)
add_test(NAME dot_clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${dot_dir})
set_tests_properties(dot_clean PROPERTIES FIXTURES_SETUP dot_clean LABELS family)
fftune_cli_test(dot_not_in_fftune 2 ARGS run ${dot_tc} --dry-run
  EXPECT "/problem: unknown value 'dot'" LABELS family)
fftune_cli_test(dot_dry_run 0 CLI fftune_with_dot ARGS run ${dot_tc} --dry-run
  EXPECT "1 ranks: 8 points" "4 ranks: 8 points" "total: 32 points" LABELS family)
fftune_cli_test(dot_bad_reduction 2 CLI fftune_with_dot ARGS run ${PROJECT_SOURCE_DIR}/families/dot/testdata/bad_reduction.json
  EXPECT "/reduction/1: unknown value 'gather'" "allowed: allreduce, reduce_bcast" LABELS family)
fftune_cli_test(dot_run 0 CLI fftune_with_dot ARGS run ${dot_tc} --out ${dot_dir}/out
  EXPECT "Summary: 28 ok  4 skipped  \\(32 points\\)" "    4       1000     double       2 .* fftw/" REJECT "failed|job died" LABELS "family;mpi")
set_tests_properties(dot_run PROPERTIES FIXTURES_REQUIRED dot_clean FIXTURES_SETUP dot_results PROCESSORS 4)
fftune_cli_test(dot_ingest 0 CLI fftune_with_dot ARGS ingest ${dot_dir}/out/dot.jsonl --db ${dot_dir}/db.sqlite
  EXPECT "32 added" LABELS family)
set_tests_properties(dot_ingest PROPERTIES FIXTURES_REQUIRED dot_results FIXTURES_SETUP dot_db)
fftune_cli_test(dot_best_exact 0 CLI fftune_with_dot ARGS best --problem dot --length 1000 --ranks 2 --db ${dot_dir}/db.sqlite
  EXPECT "fftw/(allreduce|reduce_bcast)  \\[exact\\]  fastest of 2 validated" LABELS family)
fftune_cli_test(dot_best_nearest 0 CLI fftune_with_dot ARGS best --problem dot --length 1500 --ranks 3 --precision single
  --db ${dot_dir}/db.sqlite --json EXPECT "\"rung\": \"nearest\"" "nearest measured problem 1000 " LABELS family)
fftune_cli_test(dot_best_bad_axis 2 CLI fftune_with_dot ARGS best --problem dot --size 8 --ranks 1
  EXPECT "--size is not an axis of problem dot \\(its axes: --length, --precision\\)" LABELS family)
fftune_cli_test(dot_winners 0 CLI fftune_with_dot ARGS winners --db ${dot_dir}/db.sqlite
  EXPECT "dot\nranks +/node +length +precision" "    3     3       1000     single" LABELS family)
fftune_cli_test(dot_report 0 CLI fftune_with_dot ARGS report --db ${dot_dir}/db.sqlite --out ${dot_dir}/report
  EXPECT "  dot: 8 figures from 28 records" LABELS "family;plotting")
set_tests_properties(dot_best_exact dot_best_nearest dot_winners dot_report PROPERTIES FIXTURES_REQUIRED dot_db)
# Log levels: --verbose shows the launch commands, --quiet hides the notes but
# never the progress lines or the summary.
fftune_cli_test(dot_verbose 0 CLI fftune_with_dot ARGS --verbose run ${dot_tc} --ranks 1 --out ${dot_dir}/verbose
  EXPECT "fftune: running: .*run .*dot.json --out .*--no-launch" "fftune: 1 ranks: points 1\\.\\.8 of 8" "Summary: 8 ok" LABELS family)
fftune_cli_test(dot_quiet 0 CLI fftune_with_dot ARGS run ${dot_tc} --quiet --ranks 1 --out ${dot_dir}/quiet
  EXPECT "\\[1 ranks 8/8\\]" "Summary: 8 ok" REJECT "fftune: 1 ranks: points|running:" LABELS family)
set_tests_properties(dot_verbose dot_quiet PROPERTIES FIXTURES_REQUIRED dot_clean)
