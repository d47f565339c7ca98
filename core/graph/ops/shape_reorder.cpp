// Transpose, DepthToSpace, SpaceToDepth, layout_transform: elements change places, count stays.
// DepthToSpace and SpaceToDepth are a reshape to 6-D, a transpose and a reshape back.
#include "core/graph/layout.h"
#include "core/graph/ops/shape_copy.h"
#include "core/graph/ops/shape_ops.h"

namespace tessel::ops {

namespace {

std::vector<int64_t> effective_perm(const TransposeAttrs& a, int64_t rank) {
  if (a.perm.empty()) {
    std::vector<int64_t> reversed;
    for (int64_t k = rank; k-- > 0;) reversed.push_back(k);
    return reversed;
  }
  if (static_cast<int64_t>(a.perm.size()) != rank)
    throw Error("perm " + ints_str(a.perm) + " has " + std::to_string(a.perm.size()) +
                " entries for an input of rank " + std::to_string(rank));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : a.perm) {
    if (p < 0 || p >= rank || seen[p])
      throw Error("perm " + ints_str(a.perm) + " is not a permutation of 0.." + std::to_string(rank - 1));
    seen[p] = true;
  }
  return a.perm;
}

void check_rank4(const Shape& in) {
  if (in.size() != 4) throw Error("input must be 4-D [N,C,H,W], got shape " + shape_str(in));
}

}  // namespace

void TransposeOp::infer(const Attrs& a, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  Shape out;
  for (int64_t p : effective_perm(a, static_cast<int64_t>(in.size()))) out.push_back(in[p]);
  ctx.set_output(0, ctx.input(0).dtype, out);
}

void TransposeOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& in = args.in(0);
  transpose_into(in, in.shape(), effective_perm(a, in.rank()), args.out(0));
}

void DepthToSpaceOp::infer(const Attrs& a, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  check_rank4(in);
  const int64_t b = a.blocksize;
  if (in[1] % (b * b) != 0)
    throw Error("channels " + std::to_string(in[1]) + " are not divisible by blocksize^2 = " + std::to_string(b * b));
  ctx.set_output(0, ctx.input(0).dtype, {in[0], in[1] / (b * b), in[2] * b, in[3] * b});
}

void DepthToSpaceOp::reference(const Attrs& a, const KernelArgs& args) {
  const Shape& s = args.in(0).shape();
  const int64_t b = a.blocksize, c = s[1] / (b * b);
  // Both modes produce [N, C, H, b, W, b]; they differ in where the block sits in the channels.
  if (a.mode == "DCR")
    transpose_into(args.in(0), {s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, args.out(0));
  else
    transpose_into(args.in(0), {s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, args.out(0));
}

void SpaceToDepthOp::infer(const Attrs& a, InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  check_rank4(in);
  const int64_t b = a.blocksize;
  if (in[2] % b != 0 || in[3] % b != 0)
    throw Error("spatial size " + std::to_string(in[2]) + "x" + std::to_string(in[3]) +
                " is not divisible by blocksize " + std::to_string(b));
  ctx.set_output(0, ctx.input(0).dtype, {in[0], in[1] * b * b, in[2] / b, in[3] / b});
}

void SpaceToDepthOp::reference(const Attrs& a, const KernelArgs& args) {
  const Shape& s = args.in(0).shape();
  const int64_t b = a.blocksize;
  // [N, C, H/b, b, W/b, b] → [N, b, b, C, H/b, W/b]
  transpose_into(args.in(0), {s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4}, args.out(0));
}

void LayoutTransformOp::infer(const Attrs& a, InferContext& ctx) {
  const Layout src(a.src_layout), dst(a.dst_layout);
  ctx.set_output(0, ctx.input(0).dtype, convert_layout_shape(src, dst, ctx.input(0).shape, a.logical_shape));
}

void LayoutTransformOp::reference(const Attrs& a, const KernelArgs& args) {
  convert_layout_into(args.in(0), args.out(0), Layout(a.src_layout), Layout(a.dst_layout), a.logical_shape);
}

}  // namespace tessel::ops
