#include "core/graph/opaque_op.h"

#include <limits>

#include "core/support/error.h"

namespace tessel {

namespace {

struct OpaqueOp {
  using Attrs = OpaqueAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 0, max_inputs = std::numeric_limits<int>::max();
  static constexpr int min_outputs = 0, max_outputs = std::numeric_limits<int>::max();
  static constexpr const char* doc = "A node Tessel cannot compile or run, kept so the model can be inspected";
  // infer_types keeps the output types the importer gave an opaque node and never calls this.
  static void infer(const Attrs& a, InferContext&) {
    throw Error("the output types of opaque op " + a.op_type + " come from the importer");
  }
  static void reference(const Attrs& a, const KernelArgs&) { throw Error("cannot run " + a.op_type + ": " + a.reason); }
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

}  // namespace

const OpDef& opaque_op() {
  static const OpDef def = make_op_def<OpaqueOp>("opaque", {nullptr, Compiles::kNo, "Tessel has no op for it"});
  return def;
}

}  // namespace tessel
