# Any include order of geerpc's public headers compiles, and leaves none of geerpc's internal macros
# (config.hpp, detail/assert.hpp) to the user's code. Two checks, a few seconds of CPU together:
#   - every ordered pair of ENTRY headers (both ways) is preprocessed, with an #error if an internal
#     macro is still defined after the first or after the second, and must leave no internal macro
#     unexpanded: a header that found GEERPC_BEGIN_NAMESPACE undefined would show it in the output.
#     (Each header is compiled alone by headers.<compiler>; what an order can break is the macros.)
#   - one unit includes geerpc.hpp, then every header of HEADERS, ending the macros' scope
#     (detail/macro_unscope.hpp) before each, as if it came first after an entry header; it is
#     compiled (-fsyntax-only), so a header that needs a macro it does not define fails here.
#   COMPILER, FLAGS ('|'-separated), INCLUDE_DIRS and SYSTEM_INCLUDE_DIRS (as check_warnings.cmake),
#   IMPLICIT_INCLUDE_DIRS, ENTRY and HEADERS ('|'-separated, relative to INCLUDE_DIRS), WORK_DIR.
cmake_minimum_required(VERSION 3.21)

foreach(list_var FLAGS INCLUDE_DIRS SYSTEM_INCLUDE_DIRS IMPLICIT_INCLUDE_DIRS ENTRY HEADERS)
  string(REPLACE "|" ";" ${list_var} "${${list_var}}")
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")

set(command "${COMPILER}" ${FLAGS} -Werror)
foreach(dir IN LISTS INCLUDE_DIRS)
  list(APPEND command "-I${dir}")
endforeach()
foreach(dir IN LISTS SYSTEM_INCLUDE_DIRS)
  if(NOT dir IN_LIST IMPLICIT_INCLUDE_DIRS)
    list(APPEND command -isystem "${dir}")
  endif()
endforeach()

set(internal_macros GEERPC_BEGIN_NAMESPACE GEERPC_END_NAMESPACE GEERPC_ASSERT GEERPC_OUTERMOST_ENTRY)
list(JOIN internal_macros ") || defined(" defined)
set(none_left "#if defined(${defined})\n#error \"an internal macro of geerpc is still defined here\"\n#endif\n")

set(failures "")
set(pairs 0)
foreach(first IN LISTS ENTRY)
  foreach(second IN LISTS ENTRY)
    if(first STREQUAL second)
      continue()
    endif()
    string(MAKE_C_IDENTIFIER "${first}_then_${second}" name)
    set(unit "${WORK_DIR}/${name}.cpp")
    file(WRITE "${unit}" "#include <${first}>\n${none_left}#include <${second}>\n${none_left}")
    execute_process(COMMAND ${command} -E -P "${unit}" RESULT_VARIABLE status OUTPUT_VARIABLE text
                    ERROR_VARIABLE errors)
    math(EXPR pairs "${pairs} + 1")
    if(NOT status EQUAL 0)
      string(APPEND failures "---- ${first}, then ${second}:\n${errors}\n")
    else()
      foreach(macro IN LISTS internal_macros)
        string(FIND "${text}" "${macro}" at)
        if(at GREATER -1)
          string(APPEND failures "---- ${first}, then ${second}: ${macro} is used where it is not defined\n")
        endif()
      endforeach()
    endif()
  endforeach()
endforeach()

set(unit "${WORK_DIR}/each_after_geerpc.cpp")
set(text "#include <geerpc/geerpc.hpp>\n${none_left}")
foreach(header IN LISTS HEADERS)
  string(APPEND text "#include <geerpc/detail/macro_unscope.hpp>\n#include <${header}>\n")
endforeach()
file(WRITE "${unit}" "${text}")
execute_process(COMMAND ${command} -fsyntax-only "${unit}" RESULT_VARIABLE status OUTPUT_VARIABLE errors
                ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  string(APPEND failures "---- each header after geerpc/geerpc.hpp (${unit}):\n${errors}\n")
endif()

if(failures)
  list(JOIN command " " shown)
  message("${shown}\n${failures}")
  message(FATAL_ERROR "An include order of geerpc's headers fails (above): a header that uses an internal "
                      "macro must include the header defining it (config.hpp, detail/assert.hpp), and an "
                      "entry header must end with detail/macro_unscope.hpp (see that file).")
endif()
list(LENGTH HEADERS count)
message(STATUS "${pairs} ordered pairs of entry headers, and ${count} headers after geerpc/geerpc.hpp, compile")
