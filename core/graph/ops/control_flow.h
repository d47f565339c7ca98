#pragma once
// Control flow: If, Loop and Scan (ONNX opset 16 forms). Each node holds its sub-graphs as typed
// attributes (GraphPtr fields); the importer builds them as Tessel graphs.
//
// Outer-scope reads. An ONNX body may name a value of an enclosing graph. The importer turns each
// such name into an explicit input: the body gets one more input (the last `captured_inputs` of
// its inputs, named as the outer value) and the node one more input, the outer value itself. The
// dataflow of the outer graph is then complete (liveness, topological order, the studio's edges),
// and running a body needs nothing but its inputs:
//
//            outer graph                              body (Loop)
//   %M ──────▶ ┌──────┐                      iter ─┐
//   %cond ───▶ │ Loop │ ──▶ %y_final         cond ─┼─▶ [ ... ] ──▶ cond_out, y_out, scan_out
//   %y0 ─────▶ │      │ ──▶ %scan            y_in ─┤
//   %delta ──▶ └──────┘   (captured)        delta ─┘   (captured_inputs = 1)
//
//   node inputs:  formal inputs (If: cond; Loop: M, cond, v...; Scan: states, scan inputs), then
//                 the captured values in the body's order. If's two branches take the same list.
//
// Types. A body's own inputs often declare no shape (Loop's carried values), and captured inputs
// take the outer value's type. So the stored body is typed only as far as the model says; `infer`
// types a copy from the node's input types (typed_body), and the reference kernel types one from
// the actual tensors, with the values of its small inputs (the iteration number, cond) known, so
// that a body slicing at its iteration number has static shapes; `infer` types a Loop's body for
// iteration 0 and the kernel checks every iteration against that. A Loop's or Scan's carried
// values must keep their type from one iteration to the next. A Loop's scan outputs need the number of iterations at
// compile time: M known and a condition the body passes through unchanged (or a constant true), the form exporters
// emit.
//
// Sequences and optionals (sequence_ops.h) may be If's and Loop's inputs, outputs and carried
// values; a carried sequence that grows, or branches that give sequences of different shapes, give
// the node a sequence type without a static shape. Scan and Loop's scan outputs stack tensors only.
//
// These ops are data-dependent control flow: they have no tensor-expression builder, so their
// nodes always run the reference kernel, which runs the body with the reference executor, on every
// target. `tessel run --report` lists them as such.
#include <cstdint>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct IfAttrs {
  GraphPtr then_branch, else_branch;
  template <class V>
  void visit(V& v) {
    v(else_branch, {.name = "else_branch", .doc = "Runs when cond is false; one output per output of the node"});
    v(then_branch, {.name = "then_branch", .doc = "Runs when cond is true; one output per output of the node"});
  }
};

struct LoopAttrs {
  GraphPtr body;
  template <class V>
  void visit(V& v) {
    v(body, {.name = "body",
             .doc = "(iteration, cond, carried...) -> (cond, carried..., scan outputs...), run once per iteration"});
  }
};

struct ScanAttrs {
  GraphPtr body;
  int64_t num_scan_inputs = 0;
  std::vector<int64_t> scan_input_axes, scan_input_directions, scan_output_axes, scan_output_directions;
  template <class V>
  void visit(V& v) {
    v(body, {.name = "body", .doc = "(states..., scan slices...) -> (states..., output slices...), run once per step"});
    v(num_scan_inputs,
      {.name = "num_scan_inputs", .doc = "How many of the inputs are scanned (the last ones)", .min = 1});
    v(scan_input_axes, {.name = "scan_input_axes",
                        .doc = "Axis each scan input is sliced along (default 0)",
                        .def = std::vector<int64_t>{}});
    v(scan_input_directions, {.name = "scan_input_directions",
                              .doc = "1: a scan input is read from its last slice (default 0)",
                              .def = std::vector<int64_t>{},
                              .min = 0,
                              .max = 1});
    v(scan_output_axes, {.name = "scan_output_axes",
                         .doc = "Axis each scan output's slices are stacked along (default 0)",
                         .def = std::vector<int64_t>{}});
    v(scan_output_directions, {.name = "scan_output_directions",
                               .doc = "1: a scan output is filled from its last slice (default 0)",
                               .def = std::vector<int64_t>{},
                               .min = 0,
                               .max = 1});
  }
};

// Inputs a control-flow node may have: its formal ones and any number of captured outer values.
constexpr int kMaxControlFlowInputs = 1 << 16;

struct IfOp {
  using Attrs = IfAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr bool takes_any_kind = true;  // sequences and optionals pass through
  static constexpr int min_inputs = 1, max_inputs = kMaxControlFlowInputs, min_outputs = 1, max_outputs = 1 << 16;
  static constexpr const char* doc = "Runs then_branch or else_branch, as the boolean cond says";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct LoopOp {
  using Attrs = LoopAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr bool takes_any_kind = true;  // sequences and optionals pass through
  // M and cond may both be omitted (ONNX writes an empty name): the slots are checked by infer.
  static constexpr int min_inputs = 0, max_inputs = kMaxControlFlowInputs, min_outputs = 0, max_outputs = 1 << 16;
  static constexpr const char* doc =
      "Runs body while iteration < M and cond holds, carrying values; stacks the body's scan outputs";
  // The trip count and the first condition decide how many slices a scan output has.
  static constexpr int shape_inputs[] = {0, 1};
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct ScanOp {
  using Attrs = ScanAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = kMaxControlFlowInputs, min_outputs = 1, max_outputs = 1 << 16;
  static constexpr const char* doc =
      "Runs body once per slice of the scan inputs, carrying states; stacks the body's output slices";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

// Scan as opsets 8 and below define it (the importer renames such a node to ScanBatched): every
// input but the optional sequence_lens has a leading batch axis, each batch element is scanned on
// its own (as ScanOp scans, along axis 1 of the inputs) and the outputs stack the batch again:
//
//   ScanBatched(lens?, states[B, ...]..., scans[B, L, ...]...)  ->  (states[B, ...]..., outputs[B, L, ...]...)
//   = for b < B: Scan(states[b]..., scans[b]...)  (directions: scan_input_directions)
//
// sequence_lens, when given, must be L for every element (shorter sequences are not supported).
struct ScanBatchedAttrs {
  GraphPtr body;
  int64_t num_scan_inputs = 0;
  std::vector<int64_t> directions;
  template <class V>
  void visit(V& v) {
    v(body, {.name = "body", .doc = "(states..., scan slices...) -> (states..., output slices...), run once per step"});
    v(num_scan_inputs,
      {.name = "num_scan_inputs", .doc = "How many of the inputs are scanned (the last ones)", .min = 1});
    v(directions, {.name = "directions",
                   .doc = "1: a scan input is read from its last slice (default 0)",
                   .def = std::vector<int64_t>{},
                   .min = 0,
                   .max = 1});
  }
};

struct ScanBatchedOp {
  using Attrs = ScanBatchedAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  // sequence_lens may be omitted (ONNX writes an empty name): the slots are checked by infer.
  static constexpr int min_inputs = 0, max_inputs = kMaxControlFlowInputs, min_outputs = 1, max_outputs = 1 << 16;
  static constexpr const char* doc = "Scan of opsets 8 and below: each batch element (axis 0) scanned on its own";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

// A copy of `body` whose inputs have the given types (in the body's input order), inferred
// throughout. `input_values` (optional, null where unknown) are inputs known when it is typed: a
// body may slice at its iteration number, and its shapes then follow from that value. Throws
// Error naming the body and the inner node whose inference fails.
Graph typed_body(const Graph& body, const std::vector<TensorType>& input_types,
                 const std::vector<const Tensor*>& input_values = {});

// Runs `body` on `inputs` with the reference executor, typing it for them first.
std::vector<Tensor> run_body(const Graph& body, const std::vector<Tensor>& inputs);

// What runs a typed body: the reference executor. It lives in core/runtime, a layer above the ops
// (docs/architecture.md, "Layers and dependency rules"), so the ops do not include it; the runtime
// hands it down instead:
//
//   core/runtime/reference_executor.cpp ──set_subgraph_runner(run_reference_values)──▶ slot here
//   If / Loop / Scan reference kernels ──▶ slot ──▶ run_reference_values(body, inputs)
//
// The reference executor fills the slot from a static initializer of libtessel_core itself, so it
// is set before any program or plugin can call a kernel, including the kernels that type
// inference and constant folding run; with the slot empty the kernels throw an Error saying so.
using SubgraphRunner = std::vector<RuntimeValue> (*)(const Graph& body, const std::vector<RuntimeValue>& inputs);
void set_subgraph_runner(SubgraphRunner runner);

}  // namespace tessel::ops
