# cmake -DCOMMAND="mpirun;...;JOB" -DRESULT_FILE=F -DEXPECT_NOTE=regex -P expect_job_ends.cmake
# Runs an MPI job (JOB F) that must end on its own with a non-zero status (a
# rank ended it: a lost device, a point past its time limit), and leave F.died
# matching EXPECT_NOTE.
file(REMOVE "${RESULT_FILE}.died")
execute_process(COMMAND ${COMMAND} "${RESULT_FILE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if("${rc}" STREQUAL "0")
  message(FATAL_ERROR "the job exited with status 0; a rank must end it. Output:\n${out}${err}")
endif()
if(NOT EXISTS "${RESULT_FILE}.died")
  message(FATAL_ERROR "no ${RESULT_FILE}.died after the job (status ${rc}). Output:\n${out}${err}")
endif()
file(READ "${RESULT_FILE}.died" note)
file(REMOVE "${RESULT_FILE}.died")
if(NOT note MATCHES "${EXPECT_NOTE}")
  message(FATAL_ERROR "the note '${note}' does not match '${EXPECT_NOTE}'")
endif()
message(STATUS "ok: status ${rc}, note: ${note}")
