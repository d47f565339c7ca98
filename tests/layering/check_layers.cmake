# Checks that every layer includes only what sits below it (docs/architecture.md, "Layers and dependency rules"). Run by ctest as
#   cmake -DSOURCE_DIR=<repo> -P check_layers.cmake
# and fails naming the file and the include that runs upward.
#
# Each rule: "folder: the project folders its files may include" ("core/support" allows
# everything under core/support). Includes of the standard library and third-party headers in
# angle brackets are checked only by the forbidden patterns below.
set(rules
  "core/support: core/support"
  "core/pass: core/pass, core/support"      # the pass infrastructure knows no IR
  "core/loopir: core/loopir, core/support"  # tensor intrinsics register with the interpreter instead
)
# Everywhere in core: no Qt, no LLVM, nothing from views, app or plugins.
set(core_forbidden "^#include <Q" "^#include <llvm/" "^#include \"llvm/" "^#include \"(views|app|plugins)/")

set(problems "")
foreach(rule IN LISTS rules)
  string(REGEX REPLACE "[:,] *" ";" parts "${rule}")
  list(GET parts 0 folder)
  list(REMOVE_AT parts 0)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.def")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" includes REGEX "^#include \"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([^\"]*)\".*" "\\1" header "${line}")
      if(NOT header MATCHES "/")
        continue()  # a file beside it (generated moc, .def table)
      endif()
      set(allowed FALSE)
      foreach(prefix IN LISTS parts)
        if(header MATCHES "^${prefix}/")
          set(allowed TRUE)
        endif()
      endforeach()
      if(NOT allowed)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        string(APPEND problems "  ${rel} includes ${header} (${folder} may include only: ${parts})\n")
      endif()
    endforeach()
  endforeach()
endforeach()

file(GLOB_RECURSE core_files "${SOURCE_DIR}/core/*.h" "${SOURCE_DIR}/core/*.cpp")
foreach(file IN LISTS core_files)
  file(STRINGS "${file}" includes REGEX "^#include")
  foreach(line IN LISTS includes)
    foreach(pattern IN LISTS core_forbidden)
      if(line MATCHES "${pattern}")
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        string(APPEND problems "  ${rel}: ${line} (core knows no Qt, no LLVM, no views, app or plugins)\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "includes that run upward:\n${problems}")
endif()
message(STATUS "layers: every include runs downward")
