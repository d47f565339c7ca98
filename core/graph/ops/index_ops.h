#pragma once
// Ops that address elements by position: triangles (Trilu), running sums (CumSum), one-hot and
// identity tensors (OneHot, EyeLike), N-dimensional gathers and scatters (GatherND, ScatterND),
// selection (TopK, NonZero, Compress, Unique, NonMaxSuppression), ReverseSequence. Semantics are
// those of the ONNX opset 10-17 forms.
//
// Inputs that decide an output's shape (CumSum's axis, OneHot's depth, TopK's k, the values
// NonZero and Unique read, Compress's condition, NonMaxSuppression's inputs) are listed in
// shape_inputs, so they are known when the graph is built; the elements of every other input may
// change from run to run.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct TriluAttrs {
  int64_t upper = 1;
  template <class V>
  void visit(V& v) {
    v(upper, {.name = "upper",
              .doc = "1: keep the upper triangle (j - i >= k); 0: the lower (j - i <= k)",
              .def = int64_t{1},
              .min = 0,
              .max = 1});
  }
};
// Trilu(input, k?): the last two axes are the matrix; k (a scalar, default 0) shifts the diagonal.
struct TriluOp {
  using Attrs = TriluAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 1, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Keeps the upper or lower triangle of the last two axes, zeroes the rest";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct CumSumAttrs {
  int64_t exclusive = 0;
  int64_t reverse = 0;
  template <class V>
  void visit(V& v) {
    v(exclusive, {.name = "exclusive",
                  .doc = "1: an element's own value is not part of its sum",
                  .def = int64_t{0},
                  .min = 0,
                  .max = 1});
    v(reverse, {.name = "reverse", .doc = "1: sum from the end of the axis", .def = int64_t{0}, .min = 0, .max = 1});
  }
};
// CumSum(x, axis): axis is a scalar input.
struct CumSumOp {
  using Attrs = CumSumAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Running sum along `axis` (input 1)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t); }
};

struct OneHotAttrs {
  int64_t axis = -1;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Where the new depth axis goes in the output (-r-1..r)", .def = int64_t{-1}});
  }
};
// OneHot(indices, depth, values): values = [off, on]; negative indices count from depth.
struct OneHotOp {
  using Attrs = OneHotAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 3, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "values[1] where the new axis equals the index, values[0] elsewhere";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct EyeLikeAttrs {
  int64_t dtype = 0;
  int64_t k = 0;
  template <class V>
  void visit(V& v) {
    v(dtype, {.name = "dtype", .doc = "ONNX element type code of the output; 0: the input's", .def = int64_t{0}});
    v(k, {.name = "k", .doc = "Diagonal that holds the ones (positive: above the main one)", .def = int64_t{0}});
  }
};
struct EyeLikeOp {
  using Attrs = EyeLikeAttrs;
  static constexpr PatternKind pattern = PatternKind::kElemWise;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "A 2-D tensor of the input's shape: ones on diagonal k, zeros elsewhere";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct GatherNDAttrs {
  int64_t batch_dims = 0;
  template <class V>
  void visit(V& v) {
    v(batch_dims,
      {.name = "batch_dims", .doc = "Leading axes shared by data and indices", .def = int64_t{0}, .min = 0});
  }
};
// GatherND(data, indices): the last axis of indices holds coordinates into data's axes after batch_dims.
struct GatherNDOp {
  using Attrs = GatherNDAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Slices of data addressed by the coordinate tuples in indices' last axis";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct ScatterNDAttrs {
  std::string reduction = "none";
  template <class V>
  void visit(V& v) {
    v(reduction, {.name = "reduction",
                  .doc = "How an update combines with the existing slice",
                  .def = "none",
                  .choices = {"none", "add", "mul"}});
  }
};
// ScatterND(data, indices, updates): a copy of data with the slices that indices address replaced
// (or added to, or multiplied by) updates; among repeated indices the last update wins.
struct ScatterNDOp {
  using Attrs = ScatterNDAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 3, max_inputs = 3, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Copy of data with the slices indices address replaced by updates";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

struct TopKAttrs {
  int64_t axis = -1;
  int64_t largest = 1;
  int64_t sorted = 1;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis to select along", .def = int64_t{-1}});
    v(largest,
      {.name = "largest", .doc = "1: the k largest; 0: the k smallest", .def = int64_t{1}, .min = 0, .max = 1});
    v(sorted, {.name = "sorted", .doc = "1: in order (ours always are)", .def = int64_t{1}, .min = 0, .max = 1});
  }
};
// TopK(x, k) -> (values, indices): equal values keep the lower index first.
struct TopKOp {
  using Attrs = TopKAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 2, max_outputs = 2;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "The k largest (or smallest) elements along an axis and their indices";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

// NonZero(x) -> int64[rank, count]: its shape depends on x's values, so x must be known when the
// graph is built (a constant, or an input bound by `tessel run`).
struct NonZeroOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {0};
  static constexpr const char* doc = "Coordinates of the non-zero elements, one column each (row-major order)";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct CompressAttrs {
  int64_t axis = INT64_MIN;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis to select along; absent: the flattened input", .def = int64_t{INT64_MIN}});
  }
};
// Compress(input, condition): condition (bool, 1-D) decides the output's shape and must be known
// when the graph is built.
struct CompressOp {
  using Attrs = CompressAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "The slices along `axis` whose condition is true";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct UniqueAttrs {
  int64_t axis = INT64_MIN;
  int64_t sorted = 1;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis",
             .doc = "Axis whose slices are compared; absent: the flattened input's elements",
             .def = int64_t{INT64_MIN}});
    v(sorted, {.name = "sorted",
               .doc = "1: ascending order; 0: order of first occurrence",
               .def = int64_t{1},
               .min = 0,
               .max = 1});
  }
};
// Unique(x) -> (y, indices?, inverse_indices?, counts?): like NonZero, x must be known when the
// graph is built.
struct UniqueOp {
  using Attrs = UniqueAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 4;
  static constexpr int shape_inputs[] = {0};
  static constexpr const char* doc = "Distinct elements (or slices), where each first occurs, the inverse map, counts";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct NonMaxSuppressionAttrs {
  int64_t center_point_box = 0;
  template <class V>
  void visit(V& v) {
    v(center_point_box, {.name = "center_point_box",
                         .doc = "0: boxes are [y1, x1, y2, x2] corners; 1: [x_center, y_center, width, height]",
                         .def = int64_t{0},
                         .min = 0,
                         .max = 1});
  }
};
// NonMaxSuppression(boxes [B,N,4], scores [B,C,N], max_output_boxes_per_class?, iou_threshold?,
// score_threshold?) -> int64 [selected, 3] of (batch, class, box). Every input decides how many
// boxes are selected, so all must be known when the graph is built.
struct NonMaxSuppressionOp {
  using Attrs = NonMaxSuppressionAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 5, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {0, 1, 2, 3, 4};
  static constexpr const char* doc = "Greedy selection of the highest-scoring boxes that overlap less than a threshold";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct ReverseSequenceAttrs {
  int64_t batch_axis = 1;
  int64_t time_axis = 0;
  template <class V>
  void visit(V& v) {
    v(batch_axis,
      {.name = "batch_axis", .doc = "Axis of the sequences (0 or 1)", .def = int64_t{1}, .min = 0, .max = 1});
    v(time_axis, {.name = "time_axis", .doc = "Axis of the steps (0 or 1)", .def = int64_t{0}, .min = 0, .max = 1});
  }
};
// ReverseSequence(input, sequence_lens [batch]): the first sequence_lens[b] steps of sequence b in
// reverse order, the others unchanged.
struct ReverseSequenceOp {
  using Attrs = ReverseSequenceAttrs;
  static constexpr PatternKind pattern = PatternKind::kInjective;
  static constexpr int min_inputs = 2, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Reverses the first sequence_lens[b] steps of each sequence b";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

}  // namespace tessel::ops
