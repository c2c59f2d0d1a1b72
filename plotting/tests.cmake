# Report tests: the Python unit tests on the committed fixture, and
# `fftune report` end to end on the tuner test's database.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME report_test COMMAND ${Python3_EXECUTABLE} -m unittest -v report_test
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/plotting)
  set_tests_properties(report_test PROPERTIES LABELS "unit;plotting")
  if(FFTUNE_HAVE_TUNER)
    fftune_cli_test(cli_report 0 ARGS report --db ${PROJECT_BINARY_DIR}/tuner-test/tuning.sqlite
      --out ${PROJECT_BINARY_DIR}/tuner-test/report
      EXPECT "report.md: 16 figures from 244 records" LABELS plotting)  # 12 of 256 points are skipped
    set_tests_properties(cli_report PROPERTIES FIXTURES_REQUIRED tuner_db)
    fftune_cli_test(cli_report_empty 2 ARGS report --db ${PROJECT_BINARY_DIR}/no-such.sqlite --out ${PROJECT_BINARY_DIR}/r
      EXPECT "fftune report: .*no-such.sqlite: no tuning database here" REJECT "Traceback" LABELS plotting)
  endif()
endif()
