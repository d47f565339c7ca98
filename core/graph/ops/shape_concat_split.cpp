// Concat and Split. Both view every tensor as [outer, axis × inner] rows: along the axis, each
// input (or output) owns a contiguous run of every row, so the copies are whole runs.
//
//   Concat axis 1 of [2,1,3] and [2,2,3]:  out row r = [ a row r (1*3) | b row r (2*3) ]
#include <cstring>

#include "core/graph/ops/shape_copy.h"
#include "core/graph/ops/shape_ops.h"

namespace tessel::ops {

namespace {

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t k = from; k < to; ++k) n *= s[k];
  return n;
}

// Split lengths: the `split` input, or equal parts (which must divide the axis, as in opset 13-17).
std::vector<int64_t> split_lengths(const InferContext& ctx, int64_t dim, int parts) {
  if (ctx.has_input(1)) {
    std::vector<int64_t> split = ctx.require_ints(1, "split");
    if (static_cast<int>(split.size()) != parts)
      throw Error("split " + ints_str(split) + " has " + std::to_string(split.size()) + " entries for " +
                  std::to_string(parts) + " outputs");
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) throw Error("split " + ints_str(split) + " has a negative length");
      sum += s;
    }
    if (sum != dim)
      throw Error("split " + ints_str(split) + " sums to " + std::to_string(sum) + " but the axis has size " +
                  std::to_string(dim));
    return split;
  }
  if (dim % parts != 0)
    throw Error("axis of size " + std::to_string(dim) + " cannot be split into " + std::to_string(parts) +
                " equal parts (give the `split` input)");
  return std::vector<int64_t>(static_cast<size_t>(parts), dim / parts);
}

}  // namespace

void ConcatOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& first = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  if (rank == 0) throw Error("cannot concatenate scalars (inputs must have rank >= 1)");
  const int64_t axis = normalize_axis(a.axis, rank, "axis");
  Shape out = first.shape;
  out[axis] = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    if (t.dtype != first.dtype)
      throw Error("input " + std::to_string(i) + " has dtype " + std::string(dtype_name(t.dtype)) + ", input 0 has " +
                  std::string(dtype_name(first.dtype)));
    if (static_cast<int64_t>(t.shape.size()) != rank)
      throw Error("input " + std::to_string(i) + " has rank " + std::to_string(t.shape.size()) + " " +
                  shape_str(t.shape) + ", input 0 has rank " + std::to_string(rank) + " " + shape_str(first.shape));
    for (int64_t k = 0; k < rank; ++k)
      if (k != axis && t.shape[k] != first.shape[k])
        throw Error("input " + std::to_string(i) + " has shape " + shape_str(t.shape) +
                    ", which differs from input 0 " + shape_str(first.shape) + " outside the concatenation axis " +
                    std::to_string(axis));
    out[axis] += t.shape[axis];
  }
  ctx.set_output(0, first.dtype, out);
}

void ConcatOp::reference(const Attrs& a, const KernelArgs& args) {
  Tensor& out = args.out(0);
  const int64_t axis = normalize_axis(a.axis, out.rank(), "axis");
  const int64_t elem = static_cast<int64_t>(dtype_size(out.dtype()));
  const int64_t outer = product(out.shape(), 0, axis), inner = product(out.shape(), axis + 1, out.shape().size());
  const int64_t out_row = out.shape()[axis] * inner * elem;
  int64_t column = 0;  // byte offset of the current input's run within an output row
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const Tensor& in = args.in(static_cast<int>(i));
    const int64_t run = in.shape()[axis] * inner * elem;
    for (int64_t r = 0; r < outer && run > 0; ++r)
      std::memcpy(out.raw_data() + r * out_row + column, in.raw_data() + r * run, static_cast<size_t>(run));
    column += run;
  }
}

void SplitOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  if (in.shape.empty()) throw Error("cannot split a scalar");
  const int64_t axis = normalize_axis(a.axis, static_cast<int64_t>(in.shape.size()), "axis");
  const std::vector<int64_t> lengths = split_lengths(ctx, in.shape[axis], ctx.num_outputs());
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    Shape s = in.shape;
    s[axis] = lengths[k];
    ctx.set_output(k, in.dtype, s);
  }
}

void SplitOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& in = args.in(0);
  const int64_t axis = normalize_axis(a.axis, in.rank(), "axis");
  const int64_t elem = static_cast<int64_t>(dtype_size(in.dtype()));
  const int64_t outer = product(in.shape(), 0, axis), inner = product(in.shape(), axis + 1, in.shape().size());
  const int64_t in_row = in.shape()[axis] * inner * elem;
  int64_t column = 0;
  for (size_t k = 0; k < args.outputs->size(); ++k) {
    Tensor& out = args.out(static_cast<int>(k));
    const int64_t run = out.shape()[axis] * inner * elem;
    for (int64_t r = 0; r < outer && run > 0; ++r)
      std::memcpy(out.raw_data() + r * run, in.raw_data() + r * in_row + column, static_cast<size_t>(run));
    column += run;
  }
}

}  // namespace tessel::ops
