#pragma once
// Sequences and optionals (ONNX opset 11-18): values that are not tensors (runtime_value.h).
//
//   SplitToSequence(x[4,3], split=2) ──▶ seq(f32[2,3]) {x[0:2], x[2:4]}
//   SequenceInsert(seq, t, position) ──▶ seq with t before element `position` (default: at the back)
//   SequenceAt(seq, position)        ──▶ the tensor at `position` (negative: from the back)
//   Optional(x) / Optional()         ──▶ an optional holding x, or nothing (its `type` says of what)
//
// Types. A sequence's type is the dtype and shape of its tensors; the shape is static only while
// every tensor put in has the same one (an empty sequence's is not), and a tensor taken out of a
// sequence of unknown shape has a shape only the run decides, which only these ops, Identity,
// If/Loop and graph outputs accept (infer_types refuses it elsewhere). Lengths are not tracked.
//
// These ops take any value kind (takes_any_kind) and have no tensor-expression builder: they run
// on the reference executor, and a graph with a sequence or optional value runs there as a whole.
// Errors name the position and the length ("position 3 is out of range for a sequence of 2 tensors").
#include <cstdint>

#include "core/graph/ops/common.h"

namespace tessel::ops {

struct SequenceEmptyAttrs {
  DataType dtype = DataType::kFloat32;
  template <class V>
  void visit(V& v) {
    v(dtype, {.name = "dtype", .doc = "Element type of the sequence's tensors", .def = DataType::kFloat32});
  }
};

struct SplitToSequenceAttrs {
  int64_t axis = 0, keepdims = 1;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis to split along (negative: from the back)", .def = int64_t{0}});
    v(keepdims, {.name = "keepdims",
                 .doc = "Without split: 1 keeps the split axis (length 1) in each tensor, 0 removes it",
                 .def = int64_t{1},
                 .min = 0,
                 .max = 1});
  }
};

struct ConcatFromSequenceAttrs {
  int64_t axis = 0, new_axis = 0;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis to concatenate along (negative: from the back)"});
    v(new_axis,
      {.name = "new_axis", .doc = "1: stack along a new axis instead", .def = int64_t{0}, .min = 0, .max = 1});
  }
};

struct OptionalAttrs {
  // ONNX gives the type as a TypeProto; the importer reads it into these two fields.
  DataType element_dtype = DataType::kFloat32;
  int64_t of_sequence = 0;
  template <class V>
  void visit(V& v) {
    v(element_dtype, {.name = "element_dtype",
                      .doc = "Without input: element type of the tensor(s) the optional would hold",
                      .def = DataType::kFloat32});
    v(of_sequence, {.name = "of_sequence",
                    .doc = "Without input: 1 when the optional would hold a sequence",
                    .def = int64_t{0},
                    .min = 0,
                    .max = 1});
  }
};

// Shared by every op here: any value kind, the reference kernel only, no FLOPs.
template <class A, int MinInputs, int MaxInputs>
struct SequenceOpBase {
  using Attrs = A;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr bool takes_any_kind = true;
  static constexpr int min_inputs = MinInputs, max_inputs = MaxInputs, min_outputs = 1, max_outputs = 1;
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct SequenceEmptyOp : SequenceOpBase<SequenceEmptyAttrs, 0, 0> {
  static constexpr const char* doc = "An empty sequence of tensors of the given dtype";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct SequenceConstructOp : SequenceOpBase<NoAttrs, 1, 1 << 16> {
  static constexpr const char* doc = "A sequence of the input tensors, in order";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct SequenceInsertOp : SequenceOpBase<NoAttrs, 2, 3> {
  static constexpr const char* doc = "The sequence with the tensor inserted before `position` (default: appended)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct SequenceAtOp : SequenceOpBase<NoAttrs, 2, 2> {
  static constexpr const char* doc = "The tensor at `position` of the sequence (negative: from the back)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct SequenceEraseOp : SequenceOpBase<NoAttrs, 1, 2> {
  static constexpr const char* doc = "The sequence without the tensor at `position` (default: the last)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct SequenceLengthOp : SequenceOpBase<NoAttrs, 1, 1> {
  static constexpr const char* doc = "The number of tensors in the sequence (an int64 scalar)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct SplitToSequenceOp : SequenceOpBase<SplitToSequenceAttrs, 1, 2> {
  static constexpr const char* doc =
      "Splits a tensor along an axis into a sequence (equal parts of `split`, or the listed lengths)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct ConcatFromSequenceOp : SequenceOpBase<ConcatFromSequenceAttrs, 1, 1> {
  static constexpr const char* doc = "Concatenates (or stacks) the sequence's tensors along an axis";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct OptionalOp : SequenceOpBase<OptionalAttrs, 0, 1> {
  static constexpr const char* doc = "An optional holding the input, or nothing without one";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct OptionalHasElementOp : SequenceOpBase<NoAttrs, 0, 1> {
  static constexpr const char* doc =
      "Whether the optional holds something (a tensor or sequence input: true; no input: false)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

struct OptionalGetElementOp : SequenceOpBase<NoAttrs, 1, 1> {
  static constexpr const char* doc = "The tensor or sequence the optional holds (a tensor or sequence input: itself)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

}  // namespace tessel::ops
