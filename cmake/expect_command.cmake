# cmake -DCOMMAND="a;b" -DEXPECT_RC=N [-DEXPECT_OUTPUT=regex]... [-DREJECT_OUTPUT=regex] -P expect_command.cmake
# Runs COMMAND and fails unless its exit code is EXPECT_RC and its output
# (stdout + stderr) matches every EXPECT_OUTPUT regex and no REJECT_OUTPUT regex.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}. Output:\n${all}")
endif()
foreach(re IN LISTS EXPECT_OUTPUT)
  if(NOT all MATCHES "${re}")
    message(FATAL_ERROR "output does not match '${re}'. Output:\n${all}")
  endif()
endforeach()
if(NOT "${REJECT_OUTPUT}" STREQUAL "" AND all MATCHES "${REJECT_OUTPUT}")
  message(FATAL_ERROR "output matches rejected '${REJECT_OUTPUT}'. Output:\n${all}")
endif()
message(STATUS "ok: exit ${rc}")
