#include "core/graph/op_table.h"

#include <algorithm>
#include <unordered_map>

#include "core/graph/ops/control_flow.h"
#include "core/graph/ops/elementwise.h"
#include "core/graph/ops/index_ops.h"
#include "core/graph/ops/layout_ops.h"
#include "core/graph/ops/math_ops.h"
#include "core/graph/ops/nn.h"
#include "core/graph/ops/quant_ops.h"
#include "core/graph/ops/random_ops.h"
#include "core/graph/ops/recurrent.h"
#include "core/graph/ops/sequence_ops.h"
#include "core/graph/ops/shape_ops.h"
#include "core/graph/ops/signal_ops.h"
#include "core/graph/ops/te_builders.h"
#include "core/graph/ops/text_ops.h"
#include "core/graph/ops/training_ops.h"
#include "core/graph/ops/winograd_ops.h"

namespace tessel::ops {

namespace {

// The third column of a .def line, how the op compiles: yes(builder), partial(builder, "what it
// declines") or no("why it has no builder"). A builder is a function named in te_builders.h, not a
// string looked up later, so a misspelt or missing one does not compile.
OpCompilation yes(TeBuilder builder) { return {builder, Compiles::kYes, ""}; }
OpCompilation partial(TeBuilder builder, const char* declines) { return {builder, Compiles::kPartial, declines}; }
[[maybe_unused]] OpCompilation no(const char* why) { return {nullptr, Compiles::kNo, why}; }

#define TESSEL_OP(NAME, CLASS, COMPILATION) make_op_def<CLASS>(NAME, COMPILATION),
std::vector<OpDef> build_table() {
  using namespace ops::te_builder;
  return {
#include "core/graph/ops/elementwise.def"
#include "core/graph/ops/nn.def"
#include "core/graph/ops/quant_ops.def"
#include "core/graph/ops/shape_ops.def"
#include "core/graph/ops/layout_ops.def"
#include "core/graph/ops/index_ops.def"
#include "core/graph/ops/recurrent.def"
#include "core/graph/ops/text_ops.def"
#include "core/graph/ops/control_flow.def"
#include "core/graph/ops/sequence_ops.def"
#include "core/graph/ops/random_ops.def"
#include "core/graph/ops/training_ops.def"
  };
}
#undef TESSEL_OP

const std::vector<OpDef>& table() {
  static const std::vector<OpDef> rows = build_table();
  return rows;
}

const std::unordered_map<std::string_view, const OpDef*>& index() {
  static const auto map = [] {
    std::unordered_map<std::string_view, const OpDef*> m;
    for (const OpDef& op : table()) m.emplace(op.name, &op);
    return m;
  }();
  return map;
}

}  // namespace

}  // namespace tessel::ops

// The table's interface belongs to core/graph (op_table.h, namespace tessel): every layer finds
// ops through it, and only this file, which sits above the ops, lists them all.
std::span<const tessel::OpDef> tessel::all_ops() { return ops::table(); }

const tessel::OpDef* tessel::find_op(std::string_view name) {
  auto it = ops::index().find(name);
  return it == ops::index().end() ? nullptr : it->second;
}

const tessel::OpDef& tessel::get_op(std::string_view name) {
  if (const OpDef* op = find_op(name)) return *op;
  std::string close;
  for (const OpDef& op : ops::table()) {
    std::string a(op.name), b(name);
    std::transform(a.begin(), a.end(), a.begin(), ::tolower);
    std::transform(b.begin(), b.end(), b.begin(), ::tolower);
    if (a.find(b) != std::string::npos || b.find(a) != std::string::npos) close += (close.empty() ? "" : ", ") + op.name;
  }
  throw Error("unknown op '" + std::string(name) + "'" + (close.empty() ? "" : " (did you mean: " + close + "?)"));
}
