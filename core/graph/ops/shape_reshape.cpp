// Reshape, Flatten, Squeeze, Unsqueeze: a new shape over the same row-major bytes.
#include "core/graph/ops/shape_copy.h"
#include "core/graph/ops/shape_ops.h"

namespace tessel::ops {

namespace {

std::vector<int64_t> require_1d_ints(const InferContext& ctx, int i, const char* what) {
  if (ctx.input(i).shape.size() != 1)
    throw Error(std::string(what) + " (input " + std::to_string(i) + ") must be 1-D, got shape " +
                shape_str(ctx.input(i).shape));
  return ctx.require_ints(i, what);
}

}  // namespace

void ReshapeOp::infer(const Attrs& a, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const std::vector<int64_t> target = require_1d_ints(ctx, 1, "shape");
  const int64_t in_numel = checked_numel(in, "input");
  Shape out;
  int64_t infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      if (infer_at >= 0) throw Error("shape " + ints_str(target) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      out.push_back(1);
    } else if (d == 0 && a.allowzero == 0) {
      if (i >= in.size())
        throw Error("shape " + ints_str(target) + ": the 0 at position " + std::to_string(i) +
                    " copies an input dimension, but the input " + shape_str(in) + " has rank " +
                    std::to_string(in.size()));
      out.push_back(in[i]);
    } else if (d < 0) {
      throw Error("shape " + ints_str(target) + " has the invalid dimension " + std::to_string(d));
    } else {
      has_zero = has_zero || d == 0;
      out.push_back(d);
    }
  }
  if (has_zero && infer_at >= 0)
    throw Error("shape " + ints_str(target) + " has both 0 and -1, which allowzero=1 forbids");
  const int64_t known = checked_numel(out, "shape");
  if (infer_at >= 0) {
    if (known == 0 || in_numel % known != 0)
      throw Error("cannot reshape " + shape_str(in) + " (" + std::to_string(in_numel) + " elements) to " +
                  ints_str(target) + ": the -1 cannot be inferred");
    out[infer_at] = in_numel / known;
  } else if (known != in_numel) {
    throw Error("cannot reshape " + shape_str(in) + " (" + std::to_string(in_numel) + " elements) to " +
                shape_str(out) + " (" + std::to_string(known) + " elements)");
  }
  ctx.set_output(0, ctx.input(0).dtype, out);
}

void ReshapeOp::reference(const Attrs&, const KernelArgs& args) { copy_bytes(args.in(0), args.out(0)); }

void FlattenOp::infer(const Attrs& a, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  if (a.axis < -rank || a.axis > rank)
    throw Error("axis " + std::to_string(a.axis) + " is out of range for rank " + std::to_string(rank) + " (allowed " +
                std::to_string(-rank) + ".." + std::to_string(rank) + ")");
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  Shape rows(in.begin(), in.begin() + axis), cols(in.begin() + axis, in.end());
  ctx.set_output(0, ctx.input(0).dtype, {checked_numel(rows, "input"), checked_numel(cols, "input")});
}

void FlattenOp::reference(const Attrs&, const KernelArgs& args) { copy_bytes(args.in(0), args.out(0)); }

void SqueezeOp::infer(const Attrs&, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (ctx.has_input(1)) {
    for (int64_t axis : normalize_axes(require_1d_ints(ctx, 1, "axes"), rank, "axes")) {
      if (in[axis] != 1)
        throw Error("cannot squeeze axis " + std::to_string(axis) + " of shape " + shape_str(in) + ": its size is " +
                    std::to_string(in[axis]) + ", not 1");
      drop[axis] = true;
    }
  } else {
    for (size_t k = 0; k < in.size(); ++k) drop[k] = in[k] == 1;
  }
  Shape out;
  for (size_t k = 0; k < in.size(); ++k)
    if (!drop[k]) out.push_back(in[k]);
  ctx.set_output(0, ctx.input(0).dtype, out);
}

void SqueezeOp::reference(const Attrs&, const KernelArgs& args) { copy_bytes(args.in(0), args.out(0)); }

void UnsqueezeOp::infer(const Attrs&, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  // A scalar is read as one axis, as ONNX Runtime does (ONNX's own Loop tests, test_loop13_seq, give one).
  const std::vector<int64_t> axes =
      ctx.input(1).shape.empty() ? ctx.require_ints(1, "axes") : require_1d_ints(ctx, 1, "axes");
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t axis : normalize_axes(axes, out_rank, "axes")) inserted[axis] = true;
  Shape out;
  size_t next = 0;
  for (int64_t k = 0; k < out_rank; ++k) out.push_back(inserted[k] ? 1 : in[next++]);
  ctx.set_output(0, ctx.input(0).dtype, out);
}

void UnsqueezeOp::reference(const Attrs&, const KernelArgs& args) { copy_bytes(args.in(0), args.out(0)); }

}  // namespace tessel::ops
