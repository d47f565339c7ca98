// Gather, GatherElements, ScatterElements: elements addressed by an index tensor. Indices may be
// negative (counting from the end of the axis); anything outside [-n, n) is a clear error.
//
//   Gather axis 0:          out[i][j..] = data[indices[i]][j..]     (whole slices move)
//   GatherElements axis 0:  out[i][j]   = data[indices[i][j]][j]    (one element each)
//   ScatterElements axis 0: out = data; out[indices[i][j]][j] = updates[i][j]
#include <cstring>

#include "core/graph/ops/shape_copy.h"
#include "core/graph/ops/shape_ops.h"

namespace tessel::ops {

namespace {

void check_index_dtype(const TensorType& t) {
  if (t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64)
    throw Error("indices must be int32 or int64, got " + std::string(dtype_name(t.dtype)));
}

// The index normalised into [0, dim); throws Error naming the position when out of range.
int64_t checked_index(int64_t index, int64_t dim, int64_t axis) {
  if (index < -dim || index >= dim)
    throw Error("index " + std::to_string(index) + " is out of range for axis " + std::to_string(axis) + " of size " +
                std::to_string(dim) + " (allowed " + std::to_string(-dim) + ".." + std::to_string(dim - 1) + ")");
  return index < 0 ? index + dim : index;
}

// Checks the shared rules of GatherElements and ScatterElements; returns the normalised axis.
int64_t check_elementwise_indices(const Shape& data, const Shape& indices, int64_t axis_attr) {
  if (data.empty()) throw Error("data must have rank >= 1");
  const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(data.size()), "axis");
  if (indices.size() != data.size())
    throw Error("indices " + shape_str(indices) + " must have the rank of the data " + shape_str(data));
  for (size_t k = 0; k < data.size(); ++k)
    if (static_cast<int64_t>(k) != axis && indices[k] > data[k])
      throw Error("indices " + shape_str(indices) + " exceed the data " + shape_str(data) + " on axis " +
                  std::to_string(k));
  return axis;
}

// Calls fn(index_position, data_offset) for every element of `indices`, where data_offset is the
// flat offset into the data of the element it addresses.
template <class F>
void for_each_addressed(const Tensor& indices, const Shape& data_shape, int64_t axis, F&& fn) {
  const std::vector<int64_t> idx = indices.to_int64s();
  const Shape& shape = indices.shape();
  const Shape strides = contiguous_strides(data_shape);
  Shape pos(shape.size(), 0);
  for (int64_t n = 0; n < indices.numel(); ++n) {
    int64_t offset = 0;
    for (size_t k = 0; k < shape.size(); ++k)
      offset += (static_cast<int64_t>(k) == axis ? checked_index(idx[n], data_shape[k], axis) : pos[k]) * strides[k];
    fn(n, offset);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++pos[k] < shape[k]) break;
      pos[k] = 0;
    }
  }
}

}  // namespace

void GatherOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  check_index_dtype(ctx.input(1));
  if (data.shape.empty()) throw Error("data must have rank >= 1");
  const int64_t axis = normalize_axis(a.axis, static_cast<int64_t>(data.shape.size()), "axis");
  const Shape& indices = ctx.input(1).shape;
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  ctx.set_output(0, data.dtype, out);
}

void GatherOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& data = args.in(0);
  const Shape& s = data.shape();
  const int64_t axis = normalize_axis(a.axis, data.rank(), "axis");
  const std::vector<int64_t> indices = args.in(1).to_int64s();
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= s[k];
  for (size_t k = static_cast<size_t>(axis) + 1; k < s.size(); ++k) inner *= s[k];
  const int64_t dim = s[axis], count = static_cast<int64_t>(indices.size());
  const size_t block = static_cast<size_t>(inner) * dtype_size(data.dtype());
  std::byte* out = args.out(0).raw_data();
  for (int64_t j = 0; j < count; ++j) checked_index(indices[j], dim, axis);  // even when outer is 0
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = checked_index(indices[j], dim, axis);
      std::memcpy(out + (o * count + j) * block, data.raw_data() + (o * dim + i) * block, block);
    }
}

void GatherElementsOp::infer(const Attrs& a, InferContext& ctx) {
  check_index_dtype(ctx.input(1));
  check_elementwise_indices(ctx.input(0).shape, ctx.input(1).shape, a.axis);
  ctx.set_output(0, ctx.input(0).dtype, ctx.input(1).shape);
}

void GatherElementsOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& data = args.in(0);
  const int64_t axis = normalize_axis(a.axis, data.rank(), "axis");
  const size_t elem = dtype_size(data.dtype());
  std::byte* out = args.out(0).raw_data();
  for_each_addressed(args.in(1), data.shape(), axis, [&](int64_t n, int64_t offset) {
    std::memcpy(out + n * static_cast<int64_t>(elem), data.raw_data() + offset * static_cast<int64_t>(elem), elem);
  });
}

void ScatterElementsOp::infer(const Attrs& a, InferContext& ctx) {
  check_index_dtype(ctx.input(1));
  check_elementwise_indices(ctx.input(0).shape, ctx.input(1).shape, a.axis);
  if (ctx.input(2).shape != ctx.input(1).shape)
    throw Error("updates " + shape_str(ctx.input(2).shape) + " must have the shape of the indices " +
                shape_str(ctx.input(1).shape));
  if (ctx.input(2).dtype != ctx.input(0).dtype)
    throw Error("updates have dtype " + std::string(dtype_name(ctx.input(2).dtype)) + ", the data has " +
                std::string(dtype_name(ctx.input(0).dtype)));
  ctx.set_output(0, ctx.input(0));
}

void ScatterElementsOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& data = args.in(0);
  const Tensor& updates = args.in(2);
  Tensor& out = args.out(0);
  copy_bytes(data, out);
  const int64_t axis = normalize_axis(a.axis, data.rank(), "axis");
  dispatch_dtype(data.dtype(), [&]<class T>() {
    T* o = reinterpret_cast<T*>(out.raw_data());
    const T* u = reinterpret_cast<const T*>(updates.raw_data());
    for_each_addressed(args.in(1), data.shape(), axis, [&](int64_t n, int64_t offset) {
      if (a.reduction == "none") {
        o[offset] = u[n];
      } else if constexpr (std::is_same_v<T, bool>) {
        o[offset] = a.reduction == "add" ? (o[offset] || u[n]) : (o[offset] && u[n]);
      } else if constexpr (std::is_arithmetic_v<T>) {  // exact for every integer width
        o[offset] = static_cast<T>(a.reduction == "add" ? o[offset] + u[n] : o[offset] * u[n]);
      } else {  // 16-bit floats compute in float, like every other kernel
        double x = to_double(o[offset]), y = to_double(u[n]);
        o[offset] = from_double<T>(a.reduction == "add" ? x + y : x * y);
      }
    });
  });
}

int64_t ScatterElementsOp::flops(const Attrs& a, const OpTypes& t) {
  return a.reduction == "none" || !t.inputs[1] ? 0 : shape_numel(t.inputs[1]->shape);
}

}  // namespace tessel::ops
