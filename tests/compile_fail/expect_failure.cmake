# Runs the C++ compiler on one compile-fail case and checks the outcome the case's source declares:
#
#   // expect-error: REGEX   (one or more lines) compiling must fail, and the compiler's output must
#                            match every REGEX, so a case that breaks for another reason (a typo, a
#                            renamed header) fails the test instead of passing it vacuously; then,
#                            compiled with GEERPC_CONTROL defined (which swaps its offending line for
#                            a correct one), it must compile, proving the failure comes from that
#                            line alone
#   // expect-error-early: REGEX
#                            (with expect-error) the output's first 3 lines, not counting the
#                            "In file included from" chain, must match REGEX: a diagnostic that
#                            names the problem only after a page of notes does not pass
#   // expect: compiles      compiling must succeed
#
# With -DCONTROL_BATCHED=<test>, a failing case's control is left to that test, which compiles the
# controls of several cases in one unit (CMakeLists.txt).
#
# Both compiles of a case run in one test: one ctest and one CMake start per case, not two.
#
# With -DPRECOMPILED=<dir>/geerpc_all.hpp (GCC only), a case whose source defines no macro before
# its first geerpc include is compiled with `-include` of that header, which includes
# <geerpc/geerpc.hpp> and has been precompiled (its .gch beside it) by this script run with
# -DPRECOMPILE=<the same path>: most of a case's compile is parsing geerpc, once for all cases.
# A case then sees every public header, which none of them is about; its diagnostics and include
# chain are the same. Should the .gch not fit (other flags), GCC reads the header's text instead.
#
# Run as: cmake -DCOMPILER=... -DSOURCE=... [-DINCLUDE_DIRS=a|b] [-DSYSTEM_INCLUDE_DIRS=a|b]
#               [-DIMPLICIT_INCLUDE_DIRS=a|b] [-DFLAGS="..."] -P expect_failure.cmake
# Lists are '|'-separated because a ';' would split the argument on the way through add_test().
# Regexes are CMake regexes and must not contain ';'.
cmake_minimum_required(VERSION 3.21)

set(required COMPILER SOURCE)
if(PRECOMPILE)
  set(required COMPILER)
endif()
foreach(name IN LISTS required)
  if(NOT DEFINED ${name} OR "${${name}}" STREQUAL "")
    message(FATAL_ERROR "expect_failure.cmake: -D${name}=... is required")
  endif()
endforeach()
if(NOT PRECOMPILE AND NOT EXISTS "${SOURCE}")
  message(FATAL_ERROR "expect_failure.cmake: no such case: ${SOURCE}")
endif()

# System directories given as -I or -isystem can break the compiler's own #include_next chains.
string(REPLACE "|" ";" implicit_dirs "${IMPLICIT_INCLUDE_DIRS}")
set(include_args "")
foreach(kind IN ITEMS INCLUDE_DIRS SYSTEM_INCLUDE_DIRS)
  string(REPLACE "|" ";" dirs "${${kind}}")
  foreach(dir IN LISTS dirs)
    if(dir STREQUAL "" OR dir IN_LIST implicit_dirs)
      continue()
    endif()
    if(kind STREQUAL "INCLUDE_DIRS")
      list(APPEND include_args "-I${dir}")
    else()
      list(APPEND include_args "-isystem" "${dir}")
    endif()
  endforeach()
endforeach()

separate_arguments(extra_flags UNIX_COMMAND "${FLAGS}")

if(PRECOMPILE)
  get_filename_component(pch_dir "${PRECOMPILE}" DIRECTORY)
  file(MAKE_DIRECTORY "${pch_dir}")
  file(WRITE "${PRECOMPILE}" "// geerpc's compile-fail cases: every public header, precompiled once.\n#include <geerpc/geerpc.hpp>\n")
  execute_process(COMMAND "${COMPILER}" ${extra_flags} -std=c++20 -x c++-header ${include_args} "${PRECOMPILE}"
                          -o "${PRECOMPILE}.gch"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "precompiling <geerpc/geerpc.hpp> failed (${result}):\n${output}")
  endif()
  message(STATUS "precompiled: ${PRECOMPILE}.gch")
  return()
endif()

file(STRINGS "${SOURCE}" error_lines REGEX "^// expect-error: ")
file(STRINGS "${SOURCE}" compiles_lines REGEX "^// expect: compiles[ \t]*$")
file(STRINGS "${SOURCE}" early_lines REGEX "^// expect-error-early: ")
set(early_regexes "")
foreach(line IN LISTS early_lines)
  string(REGEX REPLACE "^// expect-error-early: " "" regex "${line}")
  list(APPEND early_regexes "${regex}")
endforeach()
set(first_lines 3)
set(regexes "")
foreach(line IN LISTS error_lines)
  string(REGEX REPLACE "^// expect-error: " "" regex "${line}")
  list(APPEND regexes "${regex}")
endforeach()
if(regexes AND compiles_lines)
  message(FATAL_ERROR "${SOURCE}: declares both '// expect-error:' and '// expect: compiles'")
elseif(NOT regexes AND NOT compiles_lines)
  message(FATAL_ERROR "${SOURCE}: declares no '// expect-error: REGEX' nor '// expect: compiles' line")
endif()

# The precompiled header, unless the case defines a macro before its first geerpc include.
set(pch_args "")
if(PRECOMPILED AND EXISTS "${PRECOMPILED}.gch")
  file(READ "${SOURCE}" case_text)
  string(FIND "${case_text}" "\n#include <geerpc/" first_include)
  set(defines_first FALSE)
  foreach(directive IN ITEMS "\n#define " "\n#undef ")
    string(FIND "${case_text}" "${directive}" at)
    if(at GREATER -1 AND at LESS first_include)
      set(defines_first TRUE)
    endif()
  endforeach()
  if(first_include GREATER -1 AND NOT defines_first)
    set(pch_args -include "${PRECOMPILED}")
  endif()
endif()

# Compiles the case (with -D<define> if given), leaving the exit status, the compiler's output and
# the command line in the caller's variables <prefix>_result, _output and _command.
function(compile_case prefix define)
  set(command "${COMPILER}" ${extra_flags} -std=c++20 -fsyntax-only ${define} ${pch_args} ${include_args} "${SOURCE}")
  # LC_ALL=C: the regexes are written against the compilers' English diagnostics.
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C ${command}
                  RESULT_VARIABLE result
                  OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  list(JOIN command " " command_line)
  set(${prefix}_result "${result}" PARENT_SCOPE)
  set(${prefix}_output "${output}" PARENT_SCOPE)
  set(${prefix}_command "${command_line}" PARENT_SCOPE)
endfunction()

if(compiles_lines)
  compile_case(plain "")
  if(NOT plain_result EQUAL 0)
    message(FATAL_ERROR "expected to compile, but it did not (${plain_result}):\n${plain_command}\n\n${plain_output}")
  endif()
  message(STATUS "compiled, as expected: ${SOURCE}")
  return()
endif()

compile_case(failing "")
if(failing_result EQUAL 0)
  message(FATAL_ERROR "expected a compile error, but it compiled:\n${failing_command}")
endif()
if(early_regexes)
  # The first lines that are not the include chain ("In file included from a.hpp:1," and its
  # "                 from b.cpp:2:" continuation lines). Cut at each newline by hand: as a CMake
  # list, a ';' or an unmatched '[' in the compiler's text would split or join lines.
  set(rest "${failing_output}")
  set(searched "")
  set(kept 0)
  while(kept LESS first_lines AND NOT rest STREQUAL "")
    string(FIND "${rest}" "\n" end)
    if(end EQUAL -1)
      set(line "${rest}")
      set(rest "")
    else()
      string(SUBSTRING "${rest}" 0 ${end} line)
      math(EXPR end "${end} + 1")
      string(SUBSTRING "${rest}" ${end} -1 rest)
    endif()
    if(NOT line MATCHES "^In file included from " AND NOT line MATCHES "^ +from [^ ]+[:,]$")
      string(APPEND searched "${line}\n")
      math(EXPR kept "${kept} + 1")
    endif()
  endwhile()
endif()
set(missing "")
foreach(regex IN LISTS regexes)
  if(NOT failing_output MATCHES "${regex}")
    string(APPEND missing "\n  ${regex}")
  endif()
endforeach()
foreach(regex IN LISTS early_regexes)
  if(NOT searched MATCHES "${regex}")
    string(APPEND missing "\n  ${regex} (in the first ${first_lines} lines, not counting the include chain)")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "the compile failed, but its output does not match:${missing}\n"
                      "${failing_command}\n\n${failing_output}")
endif()
message(STATUS "failed to compile, as expected, matching every expected regex: ${SOURCE}")

if(CONTROL_BATCHED)
  message(STATUS "its control is compiled by ${CONTROL_BATCHED}: ${SOURCE}")
  return()
endif()
compile_case(control -DGEERPC_CONTROL)
if(NOT control_result EQUAL 0)
  message(FATAL_ERROR "the control (GEERPC_CONTROL defined) was expected to compile, but it did not "
                      "(${control_result}):\n${control_command}\n\n${control_output}")
endif()
message(STATUS "the control compiled, as expected: ${SOURCE}")
