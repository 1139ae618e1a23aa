# Compiles one translation unit with a user's strict warning flags and fails on any warning that
# comes from geerpc (or from the unit itself). Run by ctest as `cmake -D... -P check_warnings.cmake`:
#   COMPILER              the compiler driver
#   HEADER                a header to include alone (geerpc/net/socket.hpp), or
#   SOURCE                a source file to compile instead
#   MODE                  syntax (check only) or object (also generate code: every template used is
#                         instantiated)
#   FLAGS                 the warning flags, '|'-separated; -Werror is added here when nothing is
#                         tolerated
#   INCLUDE_DIRS          geerpc's own include directory (-I: warnings from it must show)
#   SYSTEM_INCLUDE_DIRS   Boost's (-isystem, as a user's build has it)
#   IMPLICIT_INCLUDE_DIRS the compiler's own: never passed again, or #include_next breaks
#   INCLUDE_ROOT          include/ of the source tree, against which STILL_WARNING is resolved
#   SINGLE_HEADER         single_include/geerpc/geerpc.hpp, whose "// ---- begin/end" markers say
#                         which header each of its lines came from
#   STILL_WARNING         headers (or folders, ending in '/') whose warnings are shown but
#                         tolerated for now ('|'-separated, relative to INCLUDE_ROOT); see
#                         GEERPC_HEADERS_STILL_WARNING in CMakeLists.txt
#   WORK_DIR              where the unit and the object go
cmake_minimum_required(VERSION 3.21)

foreach(list_var FLAGS INCLUDE_DIRS SYSTEM_INCLUDE_DIRS IMPLICIT_INCLUDE_DIRS STILL_WARNING)
  string(REPLACE "|" ";" ${list_var} "${${list_var}}")
endforeach()

file(MAKE_DIRECTORY "${WORK_DIR}")
if(DEFINED HEADER)
  string(MAKE_C_IDENTIFIER "${HEADER}" unit_name)
  set(unit "${WORK_DIR}/${unit_name}.cpp")
  file(WRITE "${unit}" "#include <${HEADER}>\n")
else()
  get_filename_component(unit_name "${SOURCE}" NAME_WE)
  set(unit "${SOURCE}")
endif()

set(command "${COMPILER}" ${FLAGS})
if(NOT STILL_WARNING)
  list(APPEND command -Werror)
endif()
foreach(dir IN LISTS INCLUDE_DIRS)
  list(APPEND command "-I${dir}")
endforeach()
foreach(dir IN LISTS SYSTEM_INCLUDE_DIRS)
  if(NOT dir IN_LIST IMPLICIT_INCLUDE_DIRS)
    list(APPEND command -isystem "${dir}")
  endif()
endforeach()
if(MODE STREQUAL "object")
  list(APPEND command -c "${unit}" -o "${WORK_DIR}/${unit_name}.o")
else()
  list(APPEND command -fsyntax-only "${unit}")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
string(REPLACE ";" " " shown_command "${command}")
if(NOT status EQUAL 0)
  message("${shown_command}\n${output}")
  message(FATAL_ERROR "Each warning above must be fixed where it is (a rename, the right type, no useless "
                      "cast), never silenced in the header: users compile geerpc under their own flags.")
endif()
if(NOT STILL_WARNING)
  return()  # compiled cleanly with -Werror
endif()

# Some headers are tolerated: compiled without -Werror, so each warning must be traced to its header.
set(tolerated "")
foreach(header IN LISTS STILL_WARNING)
  get_filename_component(path "${INCLUDE_ROOT}/${header}" ABSOLUTE)
  if(header MATCHES "/$")
    string(APPEND path "/")  # a folder: every header under it
  endif()
  list(APPEND tolerated "${path}")
endforeach()

# Whether `file` (absolute, normalised) is a tolerated header or lies in a tolerated folder.
function(is_tolerated file out_var)
  set(${out_var} FALSE PARENT_SCOPE)
  foreach(path IN LISTS tolerated)
    string(LENGTH "${path}" length)
    string(SUBSTRING "${file}" 0 ${length} start)
    if(file STREQUAL path OR (path MATCHES "/$" AND start STREQUAL path))
      set(${out_var} TRUE PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

# The header that line `line_number` of the single header was copied from, from its markers.
function(single_header_origin line_number out_var)
  file(READ "${SINGLE_HEADER}" text)
  set(stack "")
  set(line 1)
  while(TRUE)
    string(FIND "${text}" "\n// ---- " at)
    if(at EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" 0 ${at} before)
    string(REGEX MATCHALL "\n" newlines "${before}")
    list(LENGTH newlines count)
    math(EXPR line "${line} + ${count} + 1")  # the marker's line; from here `text` starts there
    if(line GREATER_EQUAL line_number)
      break()
    endif()
    math(EXPR after "${at} + 1")
    string(SUBSTRING "${text}" ${after} -1 text)
    string(REGEX MATCH "^// ---- (begin|end) ([^\n]*)" marker "${text}")
    if(CMAKE_MATCH_1 STREQUAL "begin")
      list(APPEND stack "${CMAKE_MATCH_2}")
    else()
      list(POP_BACK stack)
    endif()
  endwhile()
  list(POP_BACK stack origin)
  set(${out_var} "${origin}" PARENT_SCOPE)
endfunction()

# Diagnostics quote code: hide the characters that CMake's lists treat specially.
string(REPLACE ";" "<semicolon>" output_list "${output}")
string(REPLACE "[" "<open>" output_list "${output_list}")
string(REPLACE "]" "<close>" output_list "${output_list}")
string(REPLACE "\n" ";" output_list "${output_list}")
get_filename_component(single_header "${SINGLE_HEADER}" ABSOLUTE)
set(kept "")
set(forbidden "")
foreach(diagnostic IN LISTS output_list)
  if(NOT diagnostic MATCHES ": warning: ")
    continue()
  endif()
  string(REPLACE "<semicolon>" ";" shown "${diagnostic}")
  string(REPLACE "<open>" "[" shown "${shown}")
  string(REPLACE "<close>" "]" shown "${shown}")
  set(allowed FALSE)
  if(diagnostic MATCHES "^([^:]+):([0-9]+):[0-9]+: warning: ")
    get_filename_component(file "${CMAKE_MATCH_1}" ABSOLUTE)
    set(line "${CMAKE_MATCH_2}")
    if(file STREQUAL single_header)
      single_header_origin(${line} origin)
      set(shown "${shown} (from ${origin})")
      if(origin)
        is_tolerated("${INCLUDE_ROOT}/${origin}" allowed)
      endif()
    else()
      is_tolerated("${file}" allowed)
    endif()
  endif()
  if(allowed)
    string(APPEND kept "  ${shown}\n")
  else()
    string(APPEND forbidden "  ${shown}\n")
  endif()
endforeach()

if(kept)
  message("Tolerated while their headers are in GEERPC_HEADERS_STILL_WARNING (tests/headers/CMakeLists.txt):\n${kept}")
endif()
if(forbidden)
  message("${shown_command}\n${output}\nFrom headers that must stay clean:\n${forbidden}")
  message(FATAL_ERROR "Each warning above must be fixed where it is (a rename, the right type, no useless "
                      "cast), never silenced in the header: users compile geerpc under their own flags.")
endif()
