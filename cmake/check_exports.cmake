# Compares a binary's exported functions with the SDK headers:
#   cmake -DNM=nm -DBINARY=lib/libyolo.so -DHEADERS=sdk/include [-DEXTRA_ALLOWED=ON] -P check_exports.cmake
# Fails on a declaration that carries YOLO_API (yolo/export.h) but is not
# exported, and, unless EXTRA_ALLOWED (an executable exporting the SDK to
# its plugins also exports main and the C runtime's symbols), on an
# exported symbol that no header under HEADERS declares.
cmake_minimum_required(VERSION 3.25)
foreach(var NM BINARY HEADERS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_exports.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND ${NM} -D --defined-only ${BINARY} OUTPUT_VARIABLE nm_out RESULT_VARIABLE nm_rc
  ERROR_VARIABLE nm_err)
if(NOT nm_rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${BINARY} failed (${nm_rc}): ${nm_err}")
endif()
string(REPLACE "\n" ";" nm_lines "${nm_out}")
set(exported "")
foreach(line IN LISTS nm_lines)
  # "<address> <type> <name>[@version]"; absolute symbols (type A) are the linker's own
  if(line MATCHES "^[0-9a-fA-F]+ ([A-Za-z]) ([A-Za-z_][A-Za-z0-9_.]*)")
    set(type ${CMAKE_MATCH_1})
    set(name ${CMAKE_MATCH_2})
    if(NOT type STREQUAL "A" AND NOT name MATCHES "^_(init|fini)$")
      list(APPEND exported ${name})
    endif()
  endif()
endforeach()
list(LENGTH exported n_exported)
if(n_exported EQUAL 0)
  message(FATAL_ERROR "${BINARY} exports nothing: not the library that was meant")
endif()

# Declarations, from the headers with their comments removed: `name(` for
# any function declared, `YOLO_API ... name(` for those that must be exported.
file(GLOB headers ${HEADERS}/yolo/*.h)
set(declared "")
set(required "")
foreach(header IN LISTS headers)
  file(READ ${header} text)
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " text "${text}")
  string(REGEX REPLACE "//[^\n]*" " " text "${text}")
  string(REGEX REPLACE "#[ \t]*define[^\n]*" " " text "${text}") # YOLO_API's own definition
  string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*[ \t\n]*\\(" calls "${text}")
  foreach(call IN LISTS calls)
    string(REGEX REPLACE "[ \t\n]*\\($" "" name "${call}")
    list(APPEND declared ${name})
  endforeach()
  string(REGEX MATCHALL "YOLO_API[^;{}()#]*\\(" decls "${text}")
  foreach(decl IN LISTS decls)
    string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)[ \t\n]*\\($" name "${decl}")
    list(APPEND required ${CMAKE_MATCH_1})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES declared)
list(REMOVE_DUPLICATES required)
list(LENGTH required n_required)
if(n_required EQUAL 0)
  message(FATAL_ERROR "no YOLO_API declaration found under ${HEADERS}/yolo")
endif()

set(missing "")
foreach(name IN LISTS required)
  if(NOT name IN_LIST exported)
    list(APPEND missing ${name})
  endif()
endforeach()
set(extra "")
if(NOT EXTRA_ALLOWED)
  foreach(name IN LISTS exported)
    if(NOT name IN_LIST declared)
      list(APPEND extra ${name})
    endif()
  endforeach()
endif()

message(STATUS "${BINARY}: ${n_exported} exported symbols, ${n_required} YOLO_API declarations in ${HEADERS}/yolo")
if(missing OR extra)
  list(LENGTH missing n_missing)
  list(LENGTH extra n_extra)
  string(REPLACE ";" "\n  " missing_text "${missing}")
  string(REPLACE ";" "\n  " extra_text "${extra}")
  message(FATAL_ERROR "${BINARY}:\n"
    "${n_missing} YOLO_API declaration(s) not exported:\n  ${missing_text}\n"
    "${n_extra} exported symbol(s) that no SDK header declares (make them static, or declare them with YOLO_API if plugins need them):\n  ${extra_text}")
endif()
