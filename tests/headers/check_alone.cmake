# Compiles each of HEADERS alone (-fsyntax-only, under check_warnings.cmake's strict flags), JOBS at
# a time, and names every header that fails. One ctest per compiler runs this instead of one ctest per
# header: the checks are the same, without a CMake and a ctest round per header.
#   HEADERS   the headers, '|'-separated, relative to INCLUDE_DIRS (geerpc/net/socket.hpp)
#   JOBS      how many compile at once (the ctest's PROCESSORS)
#   WORK_DIR  where each shard's units and report go
#   CHECKER   check_warnings.cmake, run once per header
#   ARGS      the -D arguments check_warnings.cmake takes besides HEADER, MODE and WORK_DIR,
#             '^'-separated (its own lists are '|'-separated)
#   SHARD     set only when this script runs itself: the shard to compile (headers SHARD, SHARD+JOBS, ...)
cmake_minimum_required(VERSION 3.21)

string(REPLACE "|" ";" headers "${HEADERS}")
string(REPLACE "^" ";" checker_args "${ARGS}")

if(DEFINED SHARD)
  # One shard: its headers one after another; a report of each failure, and a count, in its log.
  set(log "${WORK_DIR}/shard${SHARD}.log")
  file(WRITE "${log}" "")
  list(LENGTH headers count)
  set(failed 0)
  set(index ${SHARD})
  while(index LESS count)
    list(GET headers ${index} header)
    execute_process(COMMAND "${CMAKE_COMMAND}" ${checker_args} -DHEADER=${header} -DMODE=syntax
                            "-DWORK_DIR=${WORK_DIR}/shard${SHARD}" -P "${CHECKER}"
                    RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
    if(NOT status EQUAL 0)
      file(APPEND "${log}" "---- ${header} does not compile alone, or warns:\n${output}\n")
      math(EXPR failed "${failed} + 1")
    endif()
    math(EXPR index "${index} + ${JOBS}")
  endwhile()
  if(failed GREATER 0)
    message(FATAL_ERROR "${failed} failed")  # the exit status the driver reads
  endif()
  return()
endif()

# The driver: the shards run at once, as one execute_process pipeline (none of them writes to
# standard output, so the pipes between them carry nothing).
file(MAKE_DIRECTORY "${WORK_DIR}")
set(pipeline "")
math(EXPR last "${JOBS} - 1")
foreach(shard RANGE ${last})
  list(APPEND pipeline COMMAND "${CMAKE_COMMAND}" "-DHEADERS=${HEADERS}" -DJOBS=${JOBS} "-DWORK_DIR=${WORK_DIR}"
       "-DCHECKER=${CHECKER}" "-DARGS=${ARGS}" -DSHARD=${shard} -P "${CMAKE_CURRENT_LIST_FILE}")
endforeach()
execute_process(${pipeline} RESULTS_VARIABLE statuses OUTPUT_QUIET ERROR_VARIABLE errors)

set(report "")
set(broken FALSE)
foreach(shard RANGE ${last})
  list(GET statuses ${shard} status)
  if(NOT status EQUAL 0)
    set(broken TRUE)
  endif()
  if(EXISTS "${WORK_DIR}/shard${shard}.log")
    file(READ "${WORK_DIR}/shard${shard}.log" text)
    string(APPEND report "${text}")
  elseif(NOT status EQUAL 0)
    string(APPEND report "---- shard ${shard} did not run (${status}):\n${errors}\n")
  endif()
endforeach()
list(LENGTH headers count)
if(broken)
  message("${report}")
  string(REGEX MATCHALL "---- [^ \n]+" named "${report}")
  string(REPLACE "---- " "" named "${named}")
  string(REPLACE ";" ", " named "${named}")
  message(FATAL_ERROR "Of ${count} headers compiled alone, these failed: ${named}")
endif()
message(STATUS "${count} headers compiled alone, each without a warning")
