#include "core/graph/ops/layout_ops.h"

#include "core/graph/layout.h"
#include "core/graph/ops/nn_matmul.h"

namespace tessel::ops {

namespace {

// The plain layouts the blocked ones unfold to.
const Layout& plain_data() {
  static const Layout l("NCHW");
  return l;
}
const Layout& plain_kernel() {
  static const Layout l("OIHW");
  return l;
}
const Layout& plain_bias() {
  static const Layout l("C");
  return l;
}
Layout bias_layout(const Layout& out) { return Layout("C" + std::to_string(out.factor('C')) + "c"); }

// Types of the plain Conv's inputs and output.
struct PlainTypes {
  TensorType x, w, b, y;
  bool has_bias = false;
};

PlainTypes plain_types(const Conv2dNchwcAttrs& a, const std::vector<const TensorType*>& in) {
  const Layout data(a.data_layout), kernel(a.kernel_layout);
  PlainTypes t;
  t.x = {in[0]->dtype, convert_layout_shape(data, plain_data(), in[0]->shape)};
  t.w = {in[1]->dtype, convert_layout_shape(kernel, plain_kernel(), in[1]->shape)};
  if (in.size() > 2 && in[2]) {
    t.has_bias = true;
    t.b = {in[2]->dtype, convert_layout_shape(bias_layout(Layout(a.out_layout)), plain_bias(), in[2]->shape)};
  }
  return t;
}

void check_layouts(const Conv2dNchwcAttrs& a) {
  const Layout data(a.data_layout), kernel(a.kernel_layout), out(a.out_layout);
  if (data.primal_axes() != "NCHW" || out.primal_axes() != "NCHW")
    throw Error("conv2d_nchwc: data_layout and out_layout must block NCHW, got " + a.data_layout + " and " + a.out_layout);
  if (kernel.primal_axes() != "OIHW") throw Error("conv2d_nchwc: kernel_layout must block OIHW, got " + a.kernel_layout);
}

// Blocked convolutions are dense (group 1) or depthwise: one input and one output channel per
// group, the kernel OIHW{b}o (its I axis of extent 1 left unblocked).
void check_groups(const Conv2dNchwcAttrs& a, const PlainTypes& t) {
  if (a.conv.group == 1) return;
  const int64_t group = a.conv.group;
  if (t.x.shape[1] != group || t.w.shape[0] != group || t.w.shape[1] != 1 || Layout(a.kernel_layout).factor('I') != 1)
    throw Error("conv2d_nchwc: only dense (group=1) and depthwise convolutions are blocked, got group=" +
                std::to_string(group) + " on " + std::to_string(t.x.shape[1]) + " channels");
}

}  // namespace

void Conv2dNchwcOp::infer(const Attrs& a, InferContext& ctx) {
  check_layouts(a);
  std::vector<const TensorType*> in;
  for (int i = 0; i < ctx.num_inputs(); ++i) in.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  PlainTypes t = plain_types(a, in);
  check_groups(a, t);
  InferContext plain({&t.x, &t.w, t.has_bias ? &t.b : nullptr}, {nullptr, nullptr, nullptr}, 1);
  ConvOp::infer(a.conv, plain);
  const TensorType& y = plain.outputs()[0];
  ctx.set_output(0, y.dtype, convert_layout_shape(plain_data(), Layout(a.out_layout), y.shape));
}

void Conv2dNchwcOp::reference(const Attrs& a, const KernelArgs& args) {
  const Layout data(a.data_layout), kernel(a.kernel_layout), out(a.out_layout);
  Tensor x = convert_layout(args.in(0), data, plain_data());
  Tensor w = convert_layout(args.in(1), kernel, plain_kernel());
  Tensor b;
  if (args.has(2)) b = convert_layout(args.in(2), bias_layout(out), plain_bias());
  TensorType xt{x.dtype(), x.shape()}, wt{w.dtype(), w.shape()}, bt{b.dtype(), b.shape()};
  InferContext plain({&xt, &wt, b.defined() ? &bt : nullptr}, {nullptr, nullptr, nullptr}, 1);
  ConvOp::infer(a.conv, plain);
  std::vector<Tensor> y{Tensor(plain.outputs()[0].dtype, plain.outputs()[0].shape)};
  ConvOp::reference(a.conv, KernelArgs{{&x, &w, b.defined() ? &b : nullptr}, &y});
  convert_layout_into(y[0], args.out(0), plain_data(), out);
}

int64_t Conv2dNchwcOp::flops(const Attrs& a, const OpTypes& types) {
  PlainTypes t = plain_types(a, types.inputs);
  OpTypes plain;
  plain.inputs = {&t.x, &t.w, t.has_bias ? &t.b : nullptr};
  plain.outputs = {{types.outputs[0].dtype, convert_layout_shape(Layout(a.out_layout), plain_data(), types.outputs[0].shape)}};
  return ConvOp::flops(a.conv, plain);
}

namespace {

Layout packed_weights(int64_t block) { return Layout("NK" + std::to_string(block) + "n"); }
const Layout& plain_weights() {
  static const Layout l("KN");
  return l;
}

// The plain MatMul's operand types, after checking the packed one: B [N/b, K, b] with b = block.
std::pair<TensorType, TensorType> plain_matmul_types(const MatMulPackedAttrs& a, const TensorType& x,
                                                     const TensorType& w) {
  const std::string got = " (A " + shape_str(x.shape) + ", B " + shape_str(w.shape) + ")";
  if (x.shape.size() < 2) throw Error("matmul_packed: A must have rank 2 or more" + got);
  if (w.shape.size() != 3 || w.shape[2] != a.block)
    throw Error("matmul_packed: B must be [N/" + std::to_string(a.block) + ", K, " + std::to_string(a.block) + "]" +
                got);
  if (w.shape[1] != x.shape.back()) throw Error("matmul_packed: A's columns differ from B's rows" + got);
  return {x, TensorType{w.dtype, {w.shape[1], w.shape[0] * w.shape[2]}}};
}

}  // namespace

void MatMulPackedOp::infer(const Attrs& a, InferContext& ctx) {
  auto [x, w] = plain_matmul_types(a, ctx.input(0), ctx.input(1));
  InferContext plain({&x, &w}, {nullptr, nullptr}, 1);
  MatMulOp::infer(NoAttrs{}, plain);
  ctx.set_output(0, plain.outputs()[0].dtype, plain.outputs()[0].shape);
}

void MatMulPackedOp::reference(const Attrs& a, const KernelArgs& args) {
  Tensor w = convert_layout(args.in(1), packed_weights(a.block), plain_weights());
  MatMulOp::reference(NoAttrs{}, KernelArgs{{&args.in(0), &w}, args.outputs});
}

int64_t MatMulPackedOp::flops(const Attrs& a, const OpTypes& types) {
  auto [x, w] = plain_matmul_types(a, *types.inputs[0], *types.inputs[1]);
  OpTypes plain;
  plain.inputs = {&x, &w};
  plain.outputs = types.outputs;
  return MatMulOp::flops(NoAttrs{}, plain);
}

}  // namespace tessel::ops
