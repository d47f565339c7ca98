// Slice, Pad, Tile, Expand: each output axis reads its source axis through a per-axis offset table
// (shape_copy.h), which is where the ops differ:
//
//   Slice  start=1 step=2 on [a b c d e]      → positions 1, 3          → [b d]
//   Pad    reflect 2 on [a b c]               → 2 1 0 1 2 1 0           → [c b a b c b a]
//   Pad    edge 1 on [a b c]                  → 0 0 1 2 2               → [a a b c c]
//   Tile   ×2 on [a b]                        → 0 1 0 1                 → [a b a b]
//   Expand [1] → [3]                          → 0 0 0                   → [a a a]
#include <algorithm>
#include <cstring>

#include "core/graph/ops/shape_copy.h"
#include "core/graph/ops/shape_ops.h"

namespace tessel::ops {

namespace {

struct AxisSlice {
  int64_t start = 0, step = 1, length = 0;
};

int64_t ceil_div_positive(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// One AxisSlice per input axis (identity where no axis is sliced), with ONNX's clamping rules.
std::vector<AxisSlice> compute_slices(const Shape& in, const std::vector<int64_t>& starts,
                                      const std::vector<int64_t>& ends, const std::vector<int64_t>* axes_in,
                                      const std::vector<int64_t>* steps_in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (starts.size() != ends.size())
    throw Error("starts " + ints_str(starts) + " and ends " + ints_str(ends) + " differ in length");
  std::vector<int64_t> axes;
  if (axes_in) {
    if (axes_in->size() != starts.size())
      throw Error("axes " + ints_str(*axes_in) + " and starts " + ints_str(starts) + " differ in length");
    axes = normalize_axes(*axes_in, rank, "axes");
  } else {
    if (static_cast<int64_t>(starts.size()) > rank)
      throw Error("starts " + ints_str(starts) + " has more entries than the input's rank " + std::to_string(rank));
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps_in && steps_in->size() != starts.size())
    throw Error("steps " + ints_str(*steps_in) + " and starts " + ints_str(starts) + " differ in length");

  std::vector<AxisSlice> slices(in.size());
  for (size_t k = 0; k < in.size(); ++k) slices[k] = {0, 1, in[k]};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t dim = in[axes[i]];
    const int64_t step = steps_in ? (*steps_in)[i] : 1;
    if (step == 0) throw Error("steps " + ints_str(*steps_in) + " has a 0 step");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    AxisSlice& s = slices[axes[i]];
    s.step = step;
    if (step > 0) {
      s.start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      s.length = ceil_div_positive(end - s.start, step);
    } else if (dim == 0) {
      s.start = 0;
      s.length = 0;
    } else {
      s.start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      s.length = ceil_div_positive(s.start - end, -step);
    }
  }
  return slices;
}

std::vector<AxisSlice> slices_from_tensors(const Shape& in, const std::vector<const Tensor*>& operands) {
  std::vector<int64_t> axes, steps;
  if (operands[2]) axes = operands[2]->to_int64s();
  if (operands[3]) steps = operands[3]->to_int64s();
  return compute_slices(in, operands[0]->to_int64s(), operands[1]->to_int64s(), operands[2] ? &axes : nullptr,
                        operands[3] ? &steps : nullptr);
}

// Position along a source axis of size `dim` for the padded coordinate `src` (may be outside).
int64_t reflect_index(int64_t src, int64_t dim) {
  if (dim == 1) return 0;
  const int64_t period = 2 * (dim - 1);
  int64_t m = ((src % period) + period) % period;
  return m < dim ? m : period - m;
}

std::vector<int64_t> require_pads(const InferContext& ctx, int64_t rank) {
  std::vector<int64_t> pads = ctx.require_ints(1, "pads");
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    throw Error("pads " + ints_str(pads) + " has " + std::to_string(pads.size()) + " entries; an input of rank " +
                std::to_string(rank) + " needs " + std::to_string(2 * rank) + " (begins then ends)");
  return pads;
}

}  // namespace

void SliceOp::infer(const Attrs&, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  std::vector<int64_t> axes, steps;
  if (ctx.has_input(3)) axes = ctx.require_ints(3, "axes");
  if (ctx.has_input(4)) steps = ctx.require_ints(4, "steps");
  std::vector<AxisSlice> slices =
      compute_slices(in, ctx.require_ints(1, "starts"), ctx.require_ints(2, "ends"), ctx.has_input(3) ? &axes : nullptr,
                     ctx.has_input(4) ? &steps : nullptr);
  Shape out;
  for (const AxisSlice& s : slices) out.push_back(s.length);
  ctx.set_output(0, ctx.input(0).dtype, out);
}

void SliceOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& in = args.in(0);
  std::vector<AxisSlice> slices = slices_from_tensors(
      in.shape(), {&args.in(1), &args.in(2), args.has(3) ? &args.in(3) : nullptr, args.has(4) ? &args.in(4) : nullptr});
  const Shape strides = contiguous_strides(in.shape());
  AxisOffsets offsets(slices.size());
  for (size_t k = 0; k < slices.size(); ++k)
    for (int64_t i = 0; i < slices[k].length; ++i)
      offsets[k].push_back((slices[k].start + i * slices[k].step) * strides[k]);
  copy_with_axis_offsets(in, args.out(0), offsets);
}

void PadOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(in.shape.size());
  const std::vector<int64_t> pads = require_pads(ctx, rank);
  if (ctx.has_input(2)) {
    const TensorType& c = ctx.input(2);
    if (c.dtype != in.dtype)
      throw Error("constant_value has dtype " + std::string(dtype_name(c.dtype)) + ", the data has " +
                  std::string(dtype_name(in.dtype)));
    if (shape_numel(c.shape) != 1) throw Error("constant_value must hold one element, got shape " + shape_str(c.shape));
  }
  Shape out;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t d = in.shape[k] + pads[k] + pads[k + rank];
    if (d < 0)
      throw Error("pads " + ints_str(pads) + " crop axis " + std::to_string(k) + " of size " +
                  std::to_string(in.shape[k]) + " below zero");
    // Reflect and edge copy existing elements: an empty axis has none to copy.
    if (a.mode != "constant" && in.shape[k] == 0 && d > 0)
      throw Error("cannot pad axis " + std::to_string(k) + " of size 0 in " + a.mode + " mode");
    out.push_back(d);
  }
  ctx.set_output(0, in.dtype, out);
}

void PadOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& in = args.in(0);
  Tensor& out = args.out(0);
  const int64_t rank = in.rank();
  const std::vector<int64_t> pads = args.in(1).to_int64s();
  const Shape strides = contiguous_strides(in.shape());
  AxisOffsets offsets(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t dim = in.shape()[k], begin = pads[k];
    for (int64_t o = 0; o < out.shape()[k]; ++o) {
      int64_t src = o - begin;
      if (src < 0 || src >= dim) {
        if (a.mode == "constant") {
          offsets[k].push_back(kFill);
          continue;
        }
        if (dim == 0) throw Error("cannot pad axis " + std::to_string(k) + " of size 0 in " + a.mode + " mode");
        src = a.mode == "edge" ? std::clamp<int64_t>(src, 0, dim - 1) : reflect_index(src, dim);
      }
      offsets[k].push_back(src * strides[k]);
    }
  }
  Tensor fill(in.dtype(), {});  // zero unless constant_value is given
  if (args.has(2)) std::memcpy(fill.raw_data(), args.in(2).raw_data(), dtype_size(in.dtype()));
  copy_with_axis_offsets(in, out, offsets, fill.raw_data());
}

void TileOp::infer(const Attrs&, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const std::vector<int64_t> repeats = ctx.require_ints(1, "repeats");
  if (repeats.size() != in.size())
    throw Error("repeats " + ints_str(repeats) + " has " + std::to_string(repeats.size()) +
                " entries for an input of rank " + std::to_string(in.size()));
  Shape out;
  for (size_t k = 0; k < in.size(); ++k) {
    if (repeats[k] < 0) throw Error("repeats " + ints_str(repeats) + " has a negative entry");
    out.push_back(in[k] * repeats[k]);
  }
  checked_numel(out, "output");
  ctx.set_output(0, ctx.input(0).dtype, out);
}

void TileOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& in = args.in(0);
  Tensor& out = args.out(0);
  const Shape strides = contiguous_strides(in.shape());
  AxisOffsets offsets(in.shape().size());
  for (size_t k = 0; k < offsets.size(); ++k)
    for (int64_t o = 0; o < out.shape()[k]; ++o) offsets[k].push_back((o % in.shape()[k]) * strides[k]);
  copy_with_axis_offsets(in, out, offsets);
}

void ExpandOp::infer(const Attrs&, InferContext& ctx) {
  if (ctx.input(1).shape.size() != 1) throw Error("shape (input 1) must be 1-D, got " + shape_str(ctx.input(1).shape));
  const std::vector<int64_t> shape = ctx.require_ints(1, "shape");
  for (int64_t d : shape)
    if (d < 0) throw Error("shape " + ints_str(shape) + " has a negative dimension");
  Shape out = broadcast_shapes(ctx.input(0).shape, shape);
  checked_numel(out, "output");
  ctx.set_output(0, ctx.input(0).dtype, out);
}

void ExpandOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& in = args.in(0);
  Tensor& out = args.out(0);
  const Shape strides = broadcast_strides(in.shape(), out.shape());
  AxisOffsets offsets(out.shape().size());
  for (size_t k = 0; k < offsets.size(); ++k)
    for (int64_t o = 0; o < out.shape()[k]; ++o) offsets[k].push_back(o * strides[k]);
  copy_with_axis_offsets(in, out, offsets);
}

}  // namespace tessel::ops
