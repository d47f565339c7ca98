#pragma once
// Pooling: MaxPool, AveragePool, LpPool (windowed, ONNX opset 12 / 11 / 11 forms) and the global
// pools.
#include "core/graph/ops/common.h"

namespace tessel::ops {

// Window attributes every windowed pool has.
template <class V, class A>
void visit_pool_window_fields(V& v, A& a) {
  v(a.auto_pad, {.name = "auto_pad",
                 .doc = "NOTSET: use pads; SAME_UPPER/SAME_LOWER: pad so the output is ceil(in/stride), an odd "
                        "padding's extra element at the end/start; VALID: no padding",
                 .def = std::string("NOTSET"),
                 .choices = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}});
  v(a.ceil_mode, {.name = "ceil_mode",
                  .doc = "1: round the output size up (a window may hang over the end)",
                  .def = int64_t{0},
                  .min = 0,
                  .max = 1});
  v(a.kernel_shape, {.name = "kernel_shape", .doc = "Window size per spatial axis", .min = 1});
  v(a.pads, {.name = "pads",
             .doc = "Padding [begin..., end...] per spatial axis (empty: 0)",
             .def = std::vector<int64_t>{},
             .min = 0});
  v(a.strides,
    {.name = "strides", .doc = "Stride per spatial axis (empty: 1)", .def = std::vector<int64_t>{}, .min = 1});
}

struct MaxPoolAttrs {
  std::string auto_pad;
  int64_t ceil_mode = 0;
  std::vector<int64_t> dilations, kernel_shape, pads;
  int64_t storage_order = 0;
  std::vector<int64_t> strides;
  template <class V>
  void visit(V& v) {
    visit_pool_window_fields(v, *this);
    v(dilations, {.name = "dilations",
                  .doc = "Spacing between window taps per spatial axis (empty: 1)",
                  .def = std::vector<int64_t>{},
                  .min = 1});
    v(storage_order, {.name = "storage_order",
                      .doc = "How Indices flatten positions: 0 row-major, 1 column-major (over the spatial axes)",
                      .def = int64_t{0},
                      .min = 0,
                      .max = 1});
  }
};

struct MaxPoolOp {
  using Attrs = MaxPoolAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 2;
  static constexpr const char* doc =
      "Maximum over each window (padding ignored); optional Indices: flat position of each maximum in X";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct AveragePoolAttrs {
  std::string auto_pad;
  int64_t ceil_mode = 0, count_include_pad = 0;
  std::vector<int64_t> kernel_shape, pads, strides;
  template <class V>
  void visit(V& v) {
    visit_pool_window_fields(v, *this);
    v(count_include_pad, {.name = "count_include_pad",
                          .doc = "1: padding elements count in the divisor (they add zero to the sum)",
                          .def = int64_t{0},
                          .min = 0,
                          .max = 1});
  }
};

struct AveragePoolOp {
  using Attrs = AveragePoolAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Mean over each window; padding counted only with count_include_pad=1";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct GlobalAveragePoolOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Mean over all spatial axes: N×C×D1… → N×C×1…";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct GlobalMaxPoolOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Maximum over all spatial axes: N×C×D1… → N×C×1…";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct LpPoolAttrs {
  std::string auto_pad;
  std::vector<int64_t> kernel_shape;
  int64_t p = 2;
  std::vector<int64_t> pads, strides;
  template <class V>
  void visit(V& v) {
    v(auto_pad, {.name = "auto_pad",
                 .doc = "NOTSET: use pads; SAME_UPPER/SAME_LOWER: pad so the output is ceil(in/stride), an odd "
                        "padding's extra element at the end/start; VALID: no padding",
                 .def = std::string("NOTSET"),
                 .choices = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}});
    v(kernel_shape, {.name = "kernel_shape", .doc = "Window size per spatial axis", .min = 1});
    v(p, {.name = "p", .doc = "Order of the norm", .def = int64_t{2}, .min = 1});
    v(pads, {.name = "pads",
             .doc = "Padding [begin..., end...] per spatial axis (empty: 0)",
             .def = std::vector<int64_t>{},
             .min = 0});
    v(strides,
      {.name = "strides", .doc = "Stride per spatial axis (empty: 1)", .def = std::vector<int64_t>{}, .min = 1});
  }
};

struct LpPoolOp {
  using Attrs = LpPoolAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Lp norm (Σ |x|^p)^(1/p) of each window; padding adds nothing";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct GlobalLpPoolAttrs {
  int64_t p = 2;
  template <class V>
  void visit(V& v) {
    v(p, {.name = "p", .doc = "Order of the norm", .def = int64_t{2}, .min = 1});
  }
};

struct GlobalLpPoolOp {
  using Attrs = GlobalLpPoolAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Lp norm over all spatial axes: N×C×D1… → N×C×1…";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

}  // namespace tessel::ops
