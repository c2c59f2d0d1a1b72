# Tuning database, selector and example application: built where SQLite is found
# (the GPU machine has no sqlite3.h; carry it or build the tuner elsewhere).
find_package(SQLite3 QUIET)
if(SQLite3_FOUND)
  set(FFTUNE_HAVE_TUNER ON)
  # CMake 4.1 renamed FindSQLite3's target (the old name warns there).
  if(TARGET SQLite3::SQLite3)
    set(FFTUNE_SQLITE_TARGET SQLite3::SQLite3)
  else()
    set(FFTUNE_SQLITE_TARGET SQLite::SQLite3)
  endif()
  target_sources(fftune PRIVATE tuner/database.cpp tuner/record_check.cpp tuner/selector.cpp tuner/strategies.cpp tuner/model.cpp)
  target_link_libraries(fftune PRIVATE ${FFTUNE_SQLITE_TARGET})
  set(tuner_cli_sources app/tuner_options.cpp app/cmd_ingest.cpp app/cmd_best.cpp app/cmd_winners.cpp
    app/cmd_tune.cpp app/cmd_report.cpp app/cmd_model.cpp)
  target_sources(fftune_cli PRIVATE ${tuner_cli_sources})
  list(APPEND FFTUNE_CLI_SOURCES ${tuner_cli_sources})  # fftune_add_cli's CLIs get them too
  target_compile_definitions(fftune_cli PRIVATE FFTUNE_HAVE_TUNER
    FFTUNE_PLOTTING_DIR="${PROJECT_SOURCE_DIR}/plotting")  # FFTUNE_PLOTTING_DIR in the environment overrides
  add_executable(fftune_example_app tuner/example_app.cpp)
  target_link_libraries(fftune_example_app PRIVATE fftune)
  add_executable(fftune_example_family tuner/example_family.cpp)
  target_link_libraries(fftune_example_family PRIVATE fftune)
  install(TARGETS fftune_example_app fftune_example_family RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES tuner/example_app.cpp tuner/example_family.cpp DESTINATION ${CMAKE_INSTALL_DATADIR}/fftune/examples)
  message(STATUS "fftune: tuner built (SQLite ${SQLite3_VERSION})")
else()
  set(FFTUNE_HAVE_TUNER OFF)
  message(STATUS "fftune: no SQLite3; the tuner (ingest, tune, best, winners) is not built")
endif()
