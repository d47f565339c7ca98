// Conv and ConvTranspose: shape rules and reference kernels.
//
// Both kernels gather: for every output position they enumerate the (kernel tap, input position)
// pairs that meet there (nn_spatial.h), then sum over the group's channels (Conv through one
// im2col column, ConvTranspose tap by tap). For Conv, output o
// reads input o*s - pb + j*d; for ConvTranspose, input x writes output x*s - pb + j*d, so output o
// gathers every x with x*s = o + pb - j*d.
#include <algorithm>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace {

using nn::AutoPad;

// What both convolutions know once their inputs are checked.
struct ConvShapes {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  nn::WindowGeometry window;
};

std::string s(int64_t v) { return std::to_string(v); }

// Checks X, W and B; returns the kernel shape (W's spatial dims, cross-checked with kernel_shape).
Shape check_conv_operands(const char* op, const InferContext& ctx, const std::vector<int64_t>& kernel_shape) {
  const TensorType& x = ctx.input(0);
  const TensorType& w = ctx.input(1);
  nn::require_dtype(op, "X", x.dtype, nn::kConvFloatTypes);
  if (w.dtype != x.dtype)
    throw Error(std::string(op) + ": W has dtype " + std::string(dtype_name(w.dtype)) + " but X has " +
                std::string(dtype_name(x.dtype)));
  if (x.shape.size() < 3)
    throw Error(std::string(op) + ": X must have rank 3 or more (N×C×D1…), got " + shape_str(x.shape));
  if (w.shape.size() != x.shape.size())
    throw Error(std::string(op) + ": W " + shape_str(w.shape) + " must have the rank of X " + shape_str(x.shape));
  Shape kernel(w.shape.begin() + 2, w.shape.end());
  if (!kernel_shape.empty() && kernel_shape != kernel)
    throw Error(std::string(op) + ": kernel_shape " + shape_str(kernel_shape) + " does not match W's spatial shape " +
                shape_str(kernel));
  return kernel;
}

void check_bias(const char* op, const InferContext& ctx, int64_t out_channels) {
  if (!ctx.has_input(2)) return;
  const TensorType& b = ctx.input(2);
  if (b.dtype != ctx.input(0).dtype)
    throw Error(std::string(op) + ": B has dtype " + std::string(dtype_name(b.dtype)) + " but X has " +
                std::string(dtype_name(ctx.input(0).dtype)));
  if (b.shape != Shape{out_channels})
    throw Error(std::string(op) + ": B has shape " + shape_str(b.shape) + "; expected [" + s(out_channels) +
                "] (one per output channel)");
}

ConvShapes conv_shapes(const ConvAttrs& a, const InferContext& ctx) {
  Shape kernel = check_conv_operands("Conv", ctx, a.kernel_shape);
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  ConvShapes c{.batch = x[0], .in_channels = x[1], .out_channels = w[0], .group = a.group, .window = {}};
  if (c.in_channels != w[1] * a.group)
    throw Error("Conv: input channels " + s(c.in_channels) + " do not match weight channels " + s(w[1]) + " × group " +
                s(a.group));
  if (c.out_channels % a.group != 0)
    throw Error("Conv: output channels " + s(c.out_channels) + " (W dim 0) are not divisible by group " + s(a.group));
  check_bias("Conv", ctx, c.out_channels);
  c.window = nn::resolve_window(
      "Conv", Shape(x.begin() + 2, x.end()), kernel,
      {.auto_pad = a.auto_pad, .strides = a.strides, .dilations = a.dilations, .pads = a.pads, .ceil_mode = false});
  return c;
}

int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// ConvTranspose's output size and padding, per the ONNX definition:
//   out = stride*(in-1) + output_padding + ((k-1)*dilation + 1) - pad_begin - pad_end
// With output_shape (or SAME_*, which asks for out = in*stride) the total padding follows from
// `out`, split with Python's floor division as the ONNX reference does: SAME_UPPER puts the odd
// element at the end, everything else at the start. A negative total pads the end with zeros.
nn::WindowGeometry transposed_window(const ConvTransposeAttrs& a, const Shape& in, const Shape& kernel) {
  const char* op = "ConvTranspose";
  const size_t rank = in.size();
  nn::WindowGeometry g;
  g.input = in;
  g.kernel = kernel;
  g.stride = nn::per_axis(op, "strides", a.strides, rank, 1);
  g.dilation = nn::per_axis(op, "dilations", a.dilations, rank, 1);
  const Shape extra = nn::per_axis(op, "output_padding", a.output_padding, rank, 0);
  const AutoPad mode = nn::parse_auto_pad(a.auto_pad);
  if (mode != AutoPad::kNotSet && std::any_of(a.pads.begin(), a.pads.end(), [](int64_t p) { return p != 0; }))
    throw Error(std::string(op) + ": explicit pads cannot be combined with auto_pad=" + a.auto_pad);
  Shape wanted;
  if (!a.output_shape.empty()) {
    // Accept the spatial dims alone or, as some exporters write it, the full N×C×D… shape.
    if (a.output_shape.size() == rank + 2)
      wanted.assign(a.output_shape.begin() + 2, a.output_shape.end());
    else
      wanted = nn::per_axis(op, "output_shape", a.output_shape, rank, 0);
  }
  nn::split_pads(op, mode == AutoPad::kNotSet && wanted.empty() ? a.pads : std::vector<int64_t>{}, rank, g.pad_begin,
                 g.pad_end);
  g.output.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    if (extra[i] >= g.stride[i] && extra[i] >= g.dilation[i])
      throw Error(std::string(op) + ": output_padding " + s(extra[i]) + " on spatial axis " + s(int64_t(i)) +
                  " must be less than the stride (" + s(g.stride[i]) + ") or the dilation (" + s(g.dilation[i]) + ")");
    const int64_t full = g.stride[i] * (in[i] - 1) + extra[i] + g.effective_kernel(i);
    int64_t out = 0;
    if (!wanted.empty() || mode == AutoPad::kSameUpper || mode == AutoPad::kSameLower) {
      out = !wanted.empty() ? wanted[i] : in[i] * g.stride[i];
      const int64_t total = full - out;
      g.pad_begin[i] = mode == AutoPad::kSameUpper ? floor_half(total) : total - floor_half(total);
      g.pad_end[i] = total - g.pad_begin[i];
    } else {
      out = full - g.pad_begin[i] - g.pad_end[i];
    }
    if (out < 1)
      throw Error(std::string(op) + ": output size " + s(out) + " on spatial axis " + s(int64_t(i)) +
                  " is not positive (the pads exceed the transposed extent " + s(full) + ")");
    g.output[i] = out;
  }
  return g;
}

ConvShapes conv_transpose_shapes(const ConvTransposeAttrs& a, const InferContext& ctx) {
  Shape kernel = check_conv_operands("ConvTranspose", ctx, a.kernel_shape);
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  ConvShapes c{.batch = x[0], .in_channels = x[1], .out_channels = w[1] * a.group, .group = a.group, .window = {}};
  if (c.in_channels != w[0])
    throw Error("ConvTranspose: input channels " + s(c.in_channels) + " do not match weight dim 0 = " + s(w[0]) +
                " (W is C×M/group×k…)");
  if (c.in_channels % a.group != 0)
    throw Error("ConvTranspose: input channels " + s(c.in_channels) + " are not divisible by group " + s(a.group));
  check_bias("ConvTranspose", ctx, c.out_channels);
  c.window = transposed_window(a, Shape(x.begin() + 2, x.end()), kernel);
  return c;
}

Shape output_shape(const ConvShapes& c) {
  Shape out{c.batch, c.out_channels};
  out.insert(out.end(), c.window.output.begin(), c.window.output.end());
  return out;
}

// ConvTranspose as a gather: every output element is bias + Σ over the group's input channels and
// the taps that reach it. W is C × M/group × k…: the kernel linking input channel (grp, ci) to
// output channel m starts at ((grp*C/group + ci) * M/group + m mod M/group) * |k|.
void run_conv_transpose(const ConvShapes& c, const std::vector<nn::AxisTaps>& axes, const KernelArgs& args) {
  const std::vector<double> xs = nn::to_doubles(args.in(0)), ws = nn::to_doubles(args.in(1));
  const std::vector<double> bias =
      args.has(2) ? nn::to_doubles(args.in(2)) : std::vector<double>(static_cast<size_t>(c.out_channels), 0.0);
  const nn::WindowGeometry& g = c.window;
  const int64_t in_size = nn::product(g.input), out_size = nn::product(g.output);
  const int64_t in_per_group = c.in_channels / c.group, out_per_group = c.out_channels / c.group;
  const int64_t k_size = nn::product(g.kernel);
  std::vector<double> ys(static_cast<size_t>(c.batch * c.out_channels * out_size));
  nn::for_each_window(g.output, g.kernel, g.input, axes, [&](int64_t o, const int64_t*, const nn::WindowTaps& taps) {
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t m = 0; m < c.out_channels; ++m) {
        const int64_t grp = m / out_per_group;
        double acc = bias[m];
        for (int64_t ci = 0; ci < in_per_group; ++ci) {
          const double* x = xs.data() + (n * c.in_channels + grp * in_per_group + ci) * in_size;
          const double* w = ws.data() + ((grp * in_per_group + ci) * out_per_group + m % out_per_group) * k_size;
          for (size_t t = 0; t < taps.size(); ++t) acc += x[taps.input_offset[t]] * w[taps.kernel_index[t]];
        }
        ys[(n * c.out_channels + m) * out_size + o] = acc;
      }
  });
  nn::store_doubles(args.out(0), ys);
}

}  // namespace

void ConvOp::infer(const Attrs& a, InferContext& ctx) {
  ctx.set_output(0, ctx.input(0).dtype, output_shape(conv_shapes(a, ctx)));
}

void ConvOp::reference(const Attrs& a, const KernelArgs& args) {
  const ConvShapes c = conv_shapes(a, nn::TypesContext(args).get());
  std::vector<nn::AxisTaps> axes;
  for (size_t i = 0; i < c.window.rank(); ++i) axes.push_back(nn::forward_axis_taps(c.window, i));
  const std::vector<double> xs = nn::to_doubles(args.in(0)), ws = nn::to_doubles(args.in(1));
  const std::vector<double> bias =
      args.has(2) ? nn::to_doubles(args.in(2)) : std::vector<double>(static_cast<size_t>(c.out_channels), 0.0);
  const nn::WindowGeometry& g = c.window;
  const int64_t in_size = nn::product(g.input), out_size = nn::product(g.output), k_size = nn::product(g.kernel);
  const int64_t in_per_group = c.in_channels / c.group, out_per_group = c.out_channels / c.group;
  const int64_t row = in_per_group * k_size;  // one output channel's weights: C/group × k…
  std::vector<double> ys(static_cast<size_t>(c.batch * c.out_channels * out_size));
  // One im2col column at a time: the window's inputs (zero where it covers padding) laid out like
  // a row of W, so each output element is a contiguous dot product.
  std::vector<double> patch(static_cast<size_t>(row));
  nn::for_each_window(g.output, g.kernel, g.input, axes, [&](int64_t o, const int64_t*, const nn::WindowTaps& taps) {
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t grp = 0; grp < c.group; ++grp) {
        std::fill(patch.begin(), patch.end(), 0.0);
        for (int64_t ci = 0; ci < in_per_group; ++ci) {
          const double* x = xs.data() + (n * c.in_channels + grp * in_per_group + ci) * in_size;
          for (size_t t = 0; t < taps.size(); ++t) patch[ci * k_size + taps.kernel_index[t]] = x[taps.input_offset[t]];
        }
        for (int64_t m = grp * out_per_group; m < (grp + 1) * out_per_group; ++m) {
          const double* w = ws.data() + m * row;
          double acc = bias[m];
          for (int64_t j = 0; j < row; ++j) acc += w[j] * patch[j];
          ys[(n * c.out_channels + m) * out_size + o] = acc;
        }
      }
  });
  nn::store_doubles(args.out(0), ys);
}

int64_t ConvOp::flops(const Attrs&, const OpTypes& t) {
  const Shape& w = t.inputs[1]->shape;
  const int64_t out = shape_numel(t.outputs[0].shape);
  const int64_t macs_per_output = nn::product(w, 1);  // C/group × k…
  const bool bias = t.inputs.size() > 2 && t.inputs[2] != nullptr;
  return 2 * out * macs_per_output + (bias ? out : 0);
}

void ConvTransposeOp::infer(const Attrs& a, InferContext& ctx) {
  ctx.set_output(0, ctx.input(0).dtype, output_shape(conv_transpose_shapes(a, ctx)));
}

void ConvTransposeOp::reference(const Attrs& a, const KernelArgs& args) {
  const ConvShapes c = conv_transpose_shapes(a, nn::TypesContext(args).get());
  std::vector<nn::AxisTaps> axes;
  for (size_t i = 0; i < c.window.rank(); ++i) axes.push_back(nn::transposed_axis_taps(c.window, i));
  run_conv_transpose(c, axes, args);
}

int64_t ConvTransposeOp::flops(const Attrs&, const OpTypes& t) {
  const Shape& w = t.inputs[1]->shape;
  const int64_t macs = shape_numel(t.inputs[0]->shape) * nn::product(w, 1);  // each input × M/group × k…
  const bool bias = t.inputs.size() > 2 && t.inputs[2] != nullptr;
  return 2 * macs + (bias ? shape_numel(t.outputs[0].shape) : 0);
}

}  // namespace tessel::ops
