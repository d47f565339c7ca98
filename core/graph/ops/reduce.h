#pragma once
// Reductions (ReduceSum, ReduceMean, ... ReduceLogSumExp) and ArgMax/ArgMin.
//
// ReduceOp<Fn> reduces the chosen axes; Fn says how one group of elements becomes one value.
// Axes follow ONNX opset 13–17: ReduceSum takes them as an optional INPUT (with
// noop_with_empty_axes), every other reduction as an ATTRIBUTE. No axes means all axes; negative
// axes count from the back; keepdims keeps reduced axes as size 1.
//   x: [2,3,4], axes=[-1], keepdims=1 → [2,3,1];  keepdims=0 → [2,3];  axes=[] → [1,1,1]
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>

#include "core/graph/ops/common.h"
#include "core/graph/ops/elementwise_support.h"

namespace tessel::ops {

struct ReduceAttrs {  // axes as an attribute
  std::vector<int64_t> axes;
  int64_t keepdims = 1;
  template <class V>
  void visit(V& v) {
    v(axes, {.name = "axes",
             .doc = "Axes to reduce (negative counts from the back); empty: all",
             .def = std::vector<int64_t>{}});
    v(keepdims, {.name = "keepdims", .doc = "Keep reduced axes as size 1", .def = int64_t{1}, .min = 0, .max = 1});
  }
};

struct ReduceSumAttrs {  // axes as input 1
  int64_t keepdims = 1;
  int64_t noop_with_empty_axes = 0;
  template <class V>
  void visit(V& v) {
    v(keepdims, {.name = "keepdims", .doc = "Keep reduced axes as size 1", .def = int64_t{1}, .min = 0, .max = 1});
    v(noop_with_empty_axes, {.name = "noop_with_empty_axes",
                             .doc = "With no axes: 1 returns the input unchanged, 0 reduces all axes",
                             .def = int64_t{0},
                             .min = 0,
                             .max = 1});
  }
};

struct AxesFromInput {
  static constexpr int shape_inputs[] = {1};
};
struct AxesFromAttribute {};

template <class Fn>
struct ReduceOp : std::conditional_t<Fn::axes_input, AxesFromInput, AxesFromAttribute> {
  using Attrs = std::conditional_t<Fn::axes_input, ReduceSumAttrs, ReduceAttrs>;
  static constexpr PatternKind pattern = PatternKind::kCommReduce;
  static constexpr int min_inputs = 1, max_inputs = Fn::axes_input ? 2 : 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = Fn::doc;
  static void infer(const Attrs& attrs, InferContext& ctx);
  static void reference(const Attrs& attrs, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) {
    return t.inputs[0] ? shape_numel(t.inputs[0]->shape) * Fn::flops_per_element : 0;
  }
};

struct ArgAttrs {
  int64_t axis = 0;
  int64_t keepdims = 1;
  int64_t select_last_index = 0;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis", .doc = "Axis to search (negative counts from the back)", .def = int64_t{0}});
    v(keepdims, {.name = "keepdims", .doc = "Keep the searched axis as size 1", .def = int64_t{1}, .min = 0, .max = 1});
    v(select_last_index, {.name = "select_last_index",
                          .doc = "On ties, 1 returns the last index, 0 the first",
                          .def = int64_t{0},
                          .min = 0,
                          .max = 1});
  }
};

// ArgMax / ArgMin: int64 indices of the extreme element along one axis.
template <class Fn>
struct ArgOp {
  using Attrs = ArgAttrs;
  static constexpr PatternKind pattern = PatternKind::kCommReduce;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = Fn::doc;
  static void infer(const Attrs& attrs, InferContext& ctx);
  static void reference(const Attrs& attrs, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return t.inputs[0] ? shape_numel(t.inputs[0]->shape) : 0; }
};

// ---------------------------------------------------------------- what each reduction computes
// reduce(values) on doubles for float inputs (and for integers without reduce_int, truncating
// the result); reduce_int on int64 for exact integer results.

inline constexpr DTypeSet kReduceTypes = kFloatTypes | DTypeSet{DataType::kInt32, DataType::kInt64};
inline constexpr DTypeSet kReduceMinMaxTypes = kReduceTypes | DTypeSet{DataType::kInt8, DataType::kUInt8};

struct ReduceFnDefaults {
  static constexpr bool axes_input = false;
  static constexpr DTypeSet types = kReduceTypes;
  static constexpr int64_t flops_per_element = 1;
};

inline double sum_of(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
inline int64_t sum_of(std::span<const int64_t> v) {
  int64_t s = 0;
  for (int64_t x : v) s = wrap_add(s, x);
  return s;
}

struct ReduceSumFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceSum", *doc = "sum over axes (axes as input 1)";
  static constexpr bool axes_input = true;
  static double reduce(std::span<const double> v) { return sum_of(v); }
  static int64_t reduce_int(std::span<const int64_t> v) { return sum_of(v); }
};

struct ReduceMeanFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceMean", *doc = "mean over axes";
  static double reduce(std::span<const double> v) { return sum_of(v) / static_cast<double>(v.size()); }
  static int64_t reduce_int(std::span<const int64_t> v) {  // truncates toward zero, like astype
    return v.empty() ? 0 : sum_of(v) / static_cast<int64_t>(v.size());
  }
};

struct ReduceProdFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceProd", *doc = "product over axes";
  static double reduce(std::span<const double> v) {
    double p = 1;
    for (double x : v) p *= x;
    return p;
  }
  static int64_t reduce_int(std::span<const int64_t> v) {
    int64_t p = 1;
    for (int64_t x : v) p = wrap_mul(p, x);
    return p;
  }
};

struct ReduceMaxFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceMax", *doc = "maximum over axes; NaN wins";
  static constexpr DTypeSet types = kReduceMinMaxTypes;
  static double reduce(std::span<const double> v) {
    double m = -std::numeric_limits<double>::infinity();
    for (double x : v)
      if (std::isnan(x) || x > m) {
        m = x;
        if (std::isnan(x)) break;
      }
    return m;
  }
  static int64_t reduce_int(std::span<const int64_t> v) {
    int64_t m = std::numeric_limits<int64_t>::min();
    for (int64_t x : v) m = std::max(m, x);
    return m;
  }
};

struct ReduceMinFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceMin", *doc = "minimum over axes; NaN wins";
  static constexpr DTypeSet types = kReduceMinMaxTypes;
  static double reduce(std::span<const double> v) {
    double m = std::numeric_limits<double>::infinity();
    for (double x : v)
      if (std::isnan(x) || x < m) {
        m = x;
        if (std::isnan(x)) break;
      }
    return m;
  }
  static int64_t reduce_int(std::span<const int64_t> v) {
    int64_t m = std::numeric_limits<int64_t>::max();
    for (int64_t x : v) m = std::min(m, x);
    return m;
  }
};

struct ReduceL1Fn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceL1", *doc = "sum of absolute values over axes";
  static double reduce(std::span<const double> v) {
    double s = 0;
    for (double x : v) s += std::fabs(x);
    return s;
  }
  static int64_t reduce_int(std::span<const int64_t> v) {
    int64_t s = 0;
    for (int64_t x : v) s = wrap_add(s, x < 0 ? wrap_neg(x) : x);
    return s;
  }
};

struct ReduceSumSquareFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceSumSquare", *doc = "sum of squares over axes";
  static constexpr int64_t flops_per_element = 2;
  static double reduce(std::span<const double> v) {
    double s = 0;
    for (double x : v) s += x * x;
    return s;
  }
  static int64_t reduce_int(std::span<const int64_t> v) {
    int64_t s = 0;
    for (int64_t x : v) s = wrap_add(s, wrap_mul(x, x));
    return s;
  }
};

struct ReduceL2Fn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceL2", *doc = "sqrt of the sum of squares over axes";
  static constexpr int64_t flops_per_element = 2;
  static double reduce(std::span<const double> v) { return std::sqrt(ReduceSumSquareFn::reduce(v)); }
};

struct ReduceLogSumFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceLogSum", *doc = "log of the sum over axes";
  static double reduce(std::span<const double> v) { return std::log(sum_of(v)); }
};

struct ReduceLogSumExpFn : ReduceFnDefaults {
  static constexpr const char *name = "ReduceLogSumExp", *doc = "log of the sum of exponentials over axes";
  static constexpr int64_t flops_per_element = 2;
  // max + log(sum(exp(x - max))): equal to log(sum(exp(x))) but never overflows.
  static double reduce(std::span<const double> v) {
    double m = ReduceMaxFn::reduce(v);
    if (!std::isfinite(m)) {  // empty, all -inf, any +inf or NaN: the plain formula is exact
      double s = 0;
      for (double x : v) s += std::exp(x);
      return std::log(s);
    }
    double s = 0;
    for (double x : v) s += std::exp(x - m);
    return m + std::log(s);
  }
};

struct ArgMaxFn {
  static constexpr const char *name = "ArgMax", *doc = "index of the largest element along axis; NaN wins";
  template <class C>
  static bool beats(C x, C best) {
    return x > best;
  }
};
struct ArgMinFn {
  static constexpr const char *name = "ArgMin", *doc = "index of the smallest element along axis; NaN wins";
  template <class C>
  static bool beats(C x, C best) {
    return x < best;
  }
};

}  // namespace tessel::ops
