# Report tests: the Python unit tests on the committed fixture, and
# `fftune report` end to end on the tuner test's database.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME report_test COMMAND ${Python3_EXECUTABLE} -m unittest -v report_test
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/plotting)
  set_tests_properties(report_test PROPERTIES LABELS "unit;plotting")
  # The tuning run's page: strategies against exhaustive (tuning_report.py).
  add_test(NAME tuning_report_test COMMAND ${Python3_EXECUTABLE} -m unittest -v tuning_report_test
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/plotting)
  set_tests_properties(tuning_report_test PROPERTIES LABELS "unit;plotting;tuner")
  # Bandwidths for the floors reach report.py; a bad one fails before it runs.
  fftune_cli_test(cli_report_floors 0 ARGS report ${PROJECT_SOURCE_DIR}/plotting/testdata/fixture.jsonl
    --hbm-gbps 4200 --link-gbps 350 --out ${PROJECT_BINARY_DIR}/report-floors
    EXPECT "report.md: 8 figures from 75 records" LABELS plotting)
  fftune_cli_test(cli_report_bad_bandwidth 2 ARGS report ${PROJECT_SOURCE_DIR}/plotting/testdata/fixture.jsonl
    --link-gbps -3 --out ${PROJECT_BINARY_DIR}/r EXPECT "--link-gbps: must be a positive bandwidth in GB/s, not -3"
    LABELS plotting)
  if(FFTUNE_HAVE_TUNER)
    fftune_cli_test(cli_report 0 ARGS report --db ${PROJECT_BINARY_DIR}/tuner-test/tuning.sqlite
      --out ${PROJECT_BINARY_DIR}/tuner-test/report
      EXPECT "report.md: 16 figures from 244 records" LABELS plotting)  # 12 of 256 points are skipped
    set_tests_properties(cli_report PROPERTIES FIXTURES_REQUIRED tuner_db)
    fftune_cli_test(cli_report_empty 2 ARGS report --db ${PROJECT_BINARY_DIR}/no-such.sqlite --out ${PROJECT_BINARY_DIR}/r
      EXPECT "fftune report: .*no-such.sqlite: no tuning database here" REJECT "Traceback" LABELS plotting)
  endif()
endif()
# The convolution family's cost model (convolution_model.py): the ported tiling against the records, the fit, the figure.
if(Python3_FOUND)
  add_test(NAME convolution_model_test COMMAND ${Python3_EXECUTABLE} -m unittest -v convolution_model_test
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/plotting)
  set_tests_properties(convolution_model_test PROPERTIES LABELS "unit;plotting;convolution")
endif()
