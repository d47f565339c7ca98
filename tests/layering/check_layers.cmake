# Checks the layering of core/ (docs/architecture.md, "Layers and dependency rules"). Run by ctest as
#   cmake -DSOURCE_DIR=<repo> -P check_layers.cmake
# and fails naming every include that runs upward, every namespace a folder does not own, and every
# core folder without a rule.
#
# The layers of core/, each with the folders it sits directly on. A folder may include its own
# headers, those of the folders it sits on, and whatever those may include, so every arrow points
# down. The graph side is on the left, the kernel side in the middle; compile joins them.
#
#   9  tune ──────────▶ measure
#   8  measure ───────▶ analysis
#   7  analysis ──────▶ compile                      aot ───────▶ compile
#   6  compile ───────▶ graph/ops/te, lower, runtime
#   5  graph/ops/te ──▶ graph/passes, te             lower ─────▶ schedule, pass         plugin ──▶ runtime
#   4  graph/passes ──▶ graph/ops, pass, target      schedule ──▶ te, target             runtime ─▶ graph/ops, loopir, target
#   3  graph/ops ─────▶ graph                        te ────────▶ arith                  frontend ▶ graph
#                                                                                        codegen ─▶ arith
#   2  graph ─────────▶ attrs                        arith ─────▶ loopir
#   1  attrs, pass, target, loopir ─▶ support
#   0  support
#
# Why some arrows run where they do:
# - graph/ops → graph: the ops implement the contract in graph/op.h; the op table's header
#   (graph/op_table.h) is graph's, its body (graph/ops/op_table.cpp) lists the ops. The table
#   names each op's builder from graph/ops/te_builders.h, which declares them against op.h's
#   forward-declared tensor type, so the ops know nothing of core/te.
# - graph/ops/te → graph/passes: te_from_graph composes a fusion group's builders (fusion_result.h)
#   into one DAG.
# - runtime → graph/ops: the reference executor runs graphs with the ops' reference kernels, and
#   hands itself down to If/Loop/Scan (graph/ops/control_flow.h, set_subgraph_runner).
# - graph (export_dot.h) draws fusion groups as clusters it is given (DotCluster); it does not see
#   FusionResult, which graph/passes makes.
# - measure → analysis: the tessel-measure protocol carries calibration and profile results.
#
# Namespaces. The folders that hold the vocabulary every layer speaks (Tensor, Graph, Target,
# DeviceAPI, the graph passes, the plugin manager) declare `tessel` itself; every other folder
# declares tessel::<its own name> and may nest namespaces inside it (tessel::ops::te_builder).
# graph/ops/te is part of each op (graph/ops/README.md), so it declares tessel::ops: its builders
# sit in tessel::ops::te_builder, not in a namespace `te`, which would hide tessel::te (core/te)
# from code that calls it on every line. Only namespaces opened by their full name (the form
# `namespace tessel... {` every file starts with) are checked. The blocks nested inside them that
# name another folder's namespace hold forward declarations (op.h's te::Tensor, module.h's
# loopir::Func) or define what a lower layer declared for this one (graph.cpp's
# attr_detail::to_text for a sub-graph attribute, declared in attrs.h).

cmake_minimum_required(VERSION 3.16)  # IN_LIST, list(POP_FRONT)

set(folders "")
# layer(FOLDER NAMESPACE SITS_ON...): a rule for the files of core/<folder>, not of its subfolders,
# which have rules of their own.
macro(layer folder namespace)
  list(APPEND folders "${folder}")
  set("namespace_of_${folder}" "${namespace}")
  set("sits_on_${folder}" ${ARGN})
endmacro()

layer(support       tessel)
layer(attrs         tessel           support)
layer(pass          tessel           support)  # the pass infrastructure knows no IR
layer(target        tessel           support)
layer(loopir        tessel::loopir   support)  # tensor intrinsics register with the interpreter instead
layer(arith         tessel::arith    loopir)
layer(te            tessel::te       arith)
layer(schedule      tessel::schedule te target)
layer(lower         tessel::lower    schedule pass)
layer(codegen       tessel::codegen  arith)
layer(graph         tessel           attrs)
layer(graph/ops     tessel::ops      graph)
layer(graph/passes  tessel           graph/ops pass target)
layer(graph/ops/te  tessel::ops      graph/passes te)
layer(frontend      tessel           graph)
layer(runtime       tessel           graph/ops loopir target)
layer(plugin        tessel           runtime)
layer(compile       tessel::compile  graph/ops/te lower runtime)
layer(analysis      tessel::analysis compile)
layer(aot           tessel::aot      compile)
layer(measure       tessel::measure  analysis)
layer(tune          tessel::tune     measure)

# Everywhere in core: no Qt, no LLVM, nothing from views, app or plugins.
set(core_forbidden "^#include <Q" "^#include <llvm/" "^#include \"llvm/" "^#include \"(views|app|plugins)/")

set(problems "")

# What each folder may include: itself and everything below it. A folder that reaches itself is a
# cycle in the rules above.
foreach(folder IN LISTS folders)
  set(reach "${folder}")
  set(queue ${sits_on_${folder}})
  while(queue)
    list(POP_FRONT queue below)
    if(below STREQUAL folder)
      string(APPEND problems "  the rules have a cycle through core/${folder}\n")
      break()
    endif()
    if(NOT below IN_LIST folders)
      string(APPEND problems "  core/${folder} sits on core/${below}, which has no rule\n")
      continue()
    endif()
    if(NOT below IN_LIST reach)
      list(APPEND reach "${below}")
      list(APPEND queue ${sits_on_${below}})
    endif()
  endwhile()
  set("may_include_${folder}" ${reach})
  if(NOT IS_DIRECTORY "${SOURCE_DIR}/core/${folder}")
    string(APPEND problems "  a rule names core/${folder}, which does not exist\n")
  endif()
endforeach()

file(GLOB_RECURSE core_files "${SOURCE_DIR}/core/*.h" "${SOURCE_DIR}/core/*.cpp" "${SOURCE_DIR}/core/*.def")
set(folders_without_rule "")
foreach(file IN LISTS core_files)
  file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
  get_filename_component(dir "${rel}" DIRECTORY)
  string(REGEX REPLACE "^core/?" "" folder "${dir}")
  if(NOT folder IN_LIST folders)
    list(APPEND folders_without_rule "${dir}")
    continue()
  endif()
  list(TRANSFORM "may_include_${folder}" PREPEND "core/" OUTPUT_VARIABLE allowed)
  list(JOIN allowed ", " allowed)

  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS includes)
    foreach(pattern IN LISTS core_forbidden)
      if(line MATCHES "${pattern}")
        string(APPEND problems "  ${rel}: ${line} (core knows no Qt, no LLVM, no views, app or plugins)\n")
      endif()
    endforeach()
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\"")
      continue()  # <standard and third-party headers>: only the patterns above apply
    endif()
    set(header "${CMAKE_MATCH_1}")
    if(NOT header MATCHES "/")
      continue()  # a file beside it (a .def table)
    endif()
    get_filename_component(header_dir "${header}" DIRECTORY)
    string(REGEX REPLACE "^core/?" "" header_folder "${header_dir}")
    if(NOT header MATCHES "^core/" OR NOT header_folder IN_LIST "may_include_${folder}")
      string(APPEND problems "  ${rel} includes ${header} (core/${folder} may include only: ${allowed})\n")
    endif()
  endforeach()

  set(namespace "${namespace_of_${folder}}")
  file(STRINGS "${file}" openings REGEX "^namespace tessel[A-Za-z0-9_:]* {")
  foreach(line IN LISTS openings)
    string(REGEX REPLACE "^namespace ([A-Za-z0-9_:]+) {.*" "\\1" opened "${line}")
    if(namespace STREQUAL "tessel")
      set(owned FALSE)
      if(opened STREQUAL "tessel")
        set(owned TRUE)
      endif()
    else()
      string(FIND "${opened}::" "${namespace}::" at)
      set(owned FALSE)
      if(at EQUAL 0)
        set(owned TRUE)
      endif()
    endif()
    if(NOT owned)
      string(APPEND problems "  ${rel} opens namespace ${opened} (core/${folder} declares ${namespace})\n")
    endif()
  endforeach()
endforeach()

list(REMOVE_DUPLICATES folders_without_rule)
foreach(dir IN LISTS folders_without_rule)
  string(APPEND problems "  ${dir} has no rule in tests/layering/check_layers.cmake (which folders may it include?)\n")
endforeach()

if(problems)
  message(FATAL_ERROR "core's layering is broken:\n${problems}")
endif()
list(LENGTH folders count)
message(STATUS "layers: ${count} core folders, every include runs downward, every namespace is its folder's")
