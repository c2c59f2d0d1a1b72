# FFTUNE_GIT_SHA: the commit being built, with "-dirty" for uncommitted changes.
# -DFFTUNE_GIT_SHA=... wins (for copies of a tree whose .git is not its own).
find_package(Git QUIET)
if(FFTUNE_GIT_SHA)
  return()
endif()
set(FFTUNE_GIT_SHA "unknown")
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _sha
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _dirty ERROR_QUIET)
    set(FFTUNE_GIT_SHA "${_sha}")
    if(_dirty)
      set(FFTUNE_GIT_SHA "${_sha}-dirty")
    endif()
  endif()
endif()
