// Kernels and inference of reductions and ArgMax/ArgMin.
//
// A reduction visits its input as groups: one group per output element, holding the elements
// that collapse into it. Both are flat offsets into the row-major input:
//
//   x: [2,3], reduce axis 1      group starts (kept axes):    {0, 3}
//     0 1 2                      offsets in a group (reduced): {0, 1, 2}
//     3 4 5                      output o = reduce(x[start[o] + offset[k]] for each k)
#include "core/graph/ops/reduce.h"

#include <algorithm>
#include <cstring>

namespace tessel::ops {

namespace {

// Flat offsets of every index combination over the axes where `select` is true (the others held
// at 0), in row-major order.
std::vector<int64_t> offsets_over(const Shape& shape, const std::vector<bool>& select) {
  const Shape strides = contiguous_strides(shape);
  std::vector<int64_t> out = {0};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!select[d]) continue;
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(shape[d]));
    for (int64_t base : out)
      for (int64_t i = 0; i < shape[d]; ++i) next.push_back(base + i * strides[d]);
    out = std::move(next);
  }
  return out;
}

struct ReductionPlan {
  std::vector<int64_t> group_starts;   // one per output element, in output order
  std::vector<int64_t> group_offsets;  // relative to a group's start, in reduced-index order
};

ReductionPlan plan_reduction(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<bool> kept(reduced.size());
  for (size_t d = 0; d < reduced.size(); ++d) kept[d] = !reduced[d];
  return {offsets_over(shape, kept), offsets_over(shape, reduced)};
}

Shape reduced_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d])
      out.push_back(in[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

// Which axes to reduce. `noop` is set when there are no axes and noop_with_empty_axes asks for
// the input unchanged.
struct AxesChoice {
  std::vector<bool> reduced;
  bool noop = false;
};

AxesChoice choose_axes(const char* op, const std::vector<int64_t>& axes, int64_t rank, bool noop_with_empty_axes) {
  AxesChoice c;
  c.reduced.assign(static_cast<size_t>(rank), axes.empty());
  c.noop = axes.empty() && noop_with_empty_axes;
  if (c.noop) c.reduced.assign(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                  std::to_string(rank));
    int64_t a = axis < 0 ? axis + rank : axis;
    if (c.reduced[a]) throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is listed twice");
    c.reduced[a] = true;
  }
  return c;
}

template <class Fn>
AxesChoice axes_of(const typename ReduceOp<Fn>::Attrs& attrs, const std::vector<int64_t>& input_axes, int64_t rank) {
  if constexpr (Fn::axes_input)
    return choose_axes(Fn::name, input_axes, rank, attrs.noop_with_empty_axes != 0);
  else
    return choose_axes(Fn::name, attrs.axes, rank, false);
}

template <class Fn>
concept HasIntReduce = requires(std::span<const int64_t> v) {
  Fn::reduce_int(v);
};

// Reduces one group in the compute type C; integers without an exact formula go through double.
template <class Fn, class C>
auto reduce_group(const std::vector<C>& group) {
  if constexpr (std::is_same_v<C, double>) {
    return Fn::reduce(std::span<const double>(group));
  } else if constexpr (HasIntReduce<Fn>) {
    return Fn::reduce_int(std::span<const int64_t>(group));
  } else {
    std::vector<double> as_double(group.begin(), group.end());
    return Fn::reduce(std::span<const double>(as_double));
  }
}

}  // namespace

// ---------------------------------------------------------------- ReduceOp

template <class Fn>
void ReduceOp<Fn>::infer(const Attrs& attrs, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype(Fn::name, "input 0", x.dtype, Fn::types);
  std::vector<int64_t> input_axes;
  if constexpr (Fn::axes_input) {
    if (ctx.has_input(1)) {
      require_dtype(Fn::name, "axes (input 1)", ctx.input(1).dtype, DTypeSet{DataType::kInt64});
      if (ctx.input(1).shape.size() > 1)
        throw Error(std::string(Fn::name) + ": axes (input 1) must be 1-D, got shape " + shape_str(ctx.input(1).shape));
      input_axes = ctx.require_ints(1, "axes");
    }
  }
  AxesChoice c = axes_of<Fn>(attrs, input_axes, static_cast<int64_t>(x.shape.size()));
  ctx.set_output(0, x.dtype, c.noop ? x.shape : reduced_shape(x.shape, c.reduced, attrs.keepdims != 0));
}

template <class Fn>
void ReduceOp<Fn>::reference(const Attrs& attrs, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  std::vector<int64_t> input_axes;
  if constexpr (Fn::axes_input)
    if (args.has(1)) input_axes = args.in(1).to_int64s();
  AxesChoice c = axes_of<Fn>(attrs, input_axes, x.rank());
  if (c.noop) {
    std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
    return;
  }
  const ReductionPlan plan = plan_reduction(x.shape(), c.reduced);
  dispatch_dtype(x.dtype(), [&]<class T>() {
    const T* px = x.data<T>();
    T* py = y.data<T>();
    std::vector<Compute<T>> group(plan.group_offsets.size());
    for (size_t o = 0; o < plan.group_starts.size(); ++o) {
      for (size_t k = 0; k < group.size(); ++k) group[k] = load(px[plan.group_starts[o] + plan.group_offsets[k]]);
      py[o] = store<T>(reduce_group<Fn>(group));
    }
  });
}

// ---------------------------------------------------------------- ArgOp

template <class Fn>
void ArgOp<Fn>::infer(const Attrs& attrs, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype(Fn::name, "input 0", x.dtype, kNumericTypes);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  AxesChoice c = choose_axes(Fn::name, {attrs.axis}, rank, false);
  if (x.shape[normalize_axis(attrs.axis, rank)] == 0)
    throw Error(std::string(Fn::name) + ": axis " + std::to_string(attrs.axis) +
                " has size 0; there is no element to pick");
  ctx.set_output(0, DataType::kInt64, reduced_shape(x.shape, c.reduced, attrs.keepdims != 0));
}

template <class Fn>
void ArgOp<Fn>::reference(const Attrs& attrs, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  int64_t* py = args.out(0).data<int64_t>();
  AxesChoice c = choose_axes(Fn::name, {attrs.axis}, x.rank(), false);
  const ReductionPlan plan = plan_reduction(x.shape(), c.reduced);  // offsets in index order
  const bool last = attrs.select_last_index != 0;
  dispatch_dtype(x.dtype(), [&]<class T>() {
    using C = Compute<T>;
    const T* px = x.data<T>();
    for (size_t o = 0; o < plan.group_starts.size(); ++o) {
      const T* group = px + plan.group_starts[o];
      C best = load(group[plan.group_offsets[0]]);
      int64_t best_index = 0;
      for (size_t k = 1; k < plan.group_offsets.size(); ++k) {
        C v = load(group[plan.group_offsets[k]]);
        bool take;
        if constexpr (std::is_same_v<C, double>) {
          // numpy: NaN is the extreme of both ArgMax and ArgMin.
          if (std::isnan(best))
            take = last && std::isnan(v);
          else if (std::isnan(v))
            take = true;
          else
            take = Fn::beats(v, best) || (last && v == best);
        } else {
          take = Fn::beats(v, best) || (last && v == best);
        }
        if (take) {
          best = v;
          best_index = static_cast<int64_t>(k);
        }
      }
      py[o] = best_index;
    }
  });
}

// ---------------------------------------------------------------- instantiations (one per .def line)

template struct ReduceOp<ReduceSumFn>;
template struct ReduceOp<ReduceMeanFn>;
template struct ReduceOp<ReduceProdFn>;
template struct ReduceOp<ReduceMaxFn>;
template struct ReduceOp<ReduceMinFn>;
template struct ReduceOp<ReduceL1Fn>;
template struct ReduceOp<ReduceL2Fn>;
template struct ReduceOp<ReduceSumSquareFn>;
template struct ReduceOp<ReduceLogSumFn>;
template struct ReduceOp<ReduceLogSumExpFn>;
template struct ArgOp<ArgMaxFn>;
template struct ArgOp<ArgMinFn>;

}  // namespace tessel::ops
