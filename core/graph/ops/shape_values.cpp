// Shape, Size, ConstantOfShape, Range: tensors computed from shapes and scalars. Their results are
// known at compile time (Shape and Size from the input type alone), so constant folding removes
// them from real models; their kernels exist for completeness and for the tests.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/graph/ops/shape_copy.h"
#include "core/graph/ops/shape_ops.h"

namespace tessel::ops {

namespace {

std::vector<int64_t> shape_slice(const ShapeAttrs& a, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp_axis = [rank](int64_t axis) { return std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank); };
  const int64_t start = clamp_axis(a.start), end = clamp_axis(a.end);
  if (end <= start) return {};
  return std::vector<int64_t>(shape.begin() + start, shape.begin() + end);
}

bool is_range_dtype(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kInt16 || t == DataType::kInt32 ||
         t == DataType::kInt64;
}

// Element count of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
int64_t range_length(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  if (dtype_is_integer(start.dtype())) {  // exact: no trip through double for int64
    const __int128 s = start.to_int64s()[0], l = limit.to_int64s()[0], d = delta.to_int64s()[0];
    if (d == 0) throw Error("delta must not be 0");
    const __int128 span = d > 0 ? l - s : s - l, step = d > 0 ? d : -d;
    const __int128 n = span <= 0 ? 0 : (span + step - 1) / step;
    if (n > (__int128{1} << 40)) throw Error("Range would produce too many elements");
    return static_cast<int64_t>(n);
  }
  const double s = start.get_double(0), l = limit.get_double(0), d = delta.get_double(0);
  if (d == 0) throw Error("delta must not be 0");
  const double n = std::ceil((l - s) / d);
  if (!(n < double(int64_t{1} << 40))) throw Error("Range would produce too many elements (or a NaN operand)");
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

}  // namespace

void ShapeOp::infer(const Attrs& a, InferContext& ctx) {
  const std::vector<int64_t> dims = shape_slice(a, ctx.input(0).shape);
  const Shape out{static_cast<int64_t>(dims.size())};
  ctx.set_output(0, DataType::kInt64, out);
  ctx.set_output_value(0, Tensor::from_int64s(out, dims));
}

void ShapeOp::reference(const Attrs& a, const KernelArgs& args) {
  const std::vector<int64_t> dims = shape_slice(a, args.in(0).shape());
  if (!dims.empty()) std::memcpy(args.out(0).raw_data(), dims.data(), dims.size() * sizeof(int64_t));
}

void SizeOp::infer(const Attrs&, InferContext& ctx) {
  ctx.set_output(0, DataType::kInt64, {});
  ctx.set_output_value(0, Tensor::scalar<int64_t>(shape_numel(ctx.input(0).shape)));
}

void SizeOp::reference(const Attrs&, const KernelArgs& args) { args.out(0).data<int64_t>()[0] = args.in(0).numel(); }

Tensor default_constant_of_shape_value() { return Tensor(DataType::kFloat32, {1}); }

void ConstantOfShapeOp::infer(const Attrs& a, InferContext& ctx) {
  if (ctx.input(0).shape.size() != 1) throw Error("shape (input 0) must be 1-D, got " + shape_str(ctx.input(0).shape));
  const std::vector<int64_t> shape = ctx.require_ints(0, "shape");
  for (int64_t d : shape)
    if (d < 0) throw Error("shape " + ints_str(shape) + " has a negative dimension");
  checked_numel(shape, "shape");
  if (!a.value.defined() || a.value.numel() != 1)
    throw Error("attribute 'value' must be a one-element tensor, got " +
                (a.value.defined() ? shape_str(a.value.shape()) : std::string("none")));
  ctx.set_output(0, a.value.dtype(), shape);
}

void ConstantOfShapeOp::reference(const Attrs& a, const KernelArgs& args) {
  Tensor& out = args.out(0);
  const size_t elem = dtype_size(out.dtype());
  for (int64_t i = 0; i < out.numel(); ++i)
    std::memcpy(out.raw_data() + i * static_cast<int64_t>(elem), a.value.raw_data(), elem);
}

void RangeOp::infer(const Attrs&, InferContext& ctx) {
  const DataType t = ctx.input(0).dtype;
  if (!is_range_dtype(t))
    throw Error("start has dtype " + std::string(dtype_name(t)) + "; Range takes f32, f64, i16, i32 or i64");
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).dtype != t)
      throw Error(std::string(names[i]) + " has dtype " + std::string(dtype_name(ctx.input(i).dtype)) + ", start has " +
                  std::string(dtype_name(t)));
    if (shape_numel(ctx.input(i).shape) != 1)
      throw Error(std::string(names[i]) + " must be a scalar, got shape " + shape_str(ctx.input(i).shape));
  }
  const int64_t n =
      range_length(ctx.require_value(0, "start"), ctx.require_value(1, "limit"), ctx.require_value(2, "delta"));
  ctx.set_output(0, t, {n});
}

void RangeOp::reference(const Attrs&, const KernelArgs& args) {
  Tensor& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const int64_t start = args.in(0).to_int64s()[0], delta = args.in(2).to_int64s()[0];
      for (int64_t i = 0; i < out.numel(); ++i) out.data<T>()[i] = static_cast<T>(start + i * delta);
    } else {
      const double start = args.in(0).get_double(0), delta = args.in(2).get_double(0);
      for (int64_t i = 0; i < out.numel(); ++i) out.set_double(i, start + static_cast<double>(i) * delta);
    }
  });
}

}  // namespace tessel::ops
