#pragma once
// Machinery shared by the neural-network ops: the sliding-window geometry of Conv, ConvTranspose
// and the pools (ONNX padding and output-size rules), dtype checks, and conversion of tensors to
// plain double/int64 arrays that the reference kernels compute on.
//
// A window along one spatial axis (stride s, dilation d, kernel k, padding pb at the start):
//
//   input   ·  ·  x0 x1 x2 x3 x4 x5 x6  ·      (· = padding, pb = 2 here)
//   out o   reads x[o*s - pb + j*d] for j = 0..k-1, skipping taps that fall in the padding
//
// ConvTranspose runs the same relation backwards: input x feeds out[x*s - pb + j*d].
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/ops/common.h"

namespace tessel::ops::nn {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };
AutoPad parse_auto_pad(const std::string& s);  // the attrs' choices already restrict the text

// An optional per-axis attribute: empty means `fill` on every axis; otherwise its length must be
// `rank` ("Conv: strides has 3 values; the input has 2 spatial axes").
Shape per_axis(const char* op, const char* field, const std::vector<int64_t>& values, size_t rank, int64_t fill);

// Explicit pads: empty means zeros; otherwise 2*rank values [begin..., end...].
void split_pads(const char* op, const std::vector<int64_t>& pads, size_t rank, Shape& begin, Shape& end);

// Where a window op reads its input, per spatial axis.
struct WindowGeometry {
  Shape input, kernel, stride, dilation, pad_begin, pad_end, output;
  size_t rank() const { return input.size(); }
  int64_t effective_kernel(size_t i) const { return (kernel[i] - 1) * dilation[i] + 1; }
};

struct WindowAttrs {
  const std::string& auto_pad;
  const std::vector<int64_t>& strides;
  const std::vector<int64_t>& dilations;  // empty: ones (and pools without dilations pass empty)
  const std::vector<int64_t>& pads;
  bool ceil_mode = false;
};

// Conv / pool geometry from the input's spatial shape, the kernel and the attributes, with ONNX's
// rules: explicit pads, SAME_UPPER / SAME_LOWER (output = ceil(in / stride), the odd pad at the end
// or the start), VALID (no padding), floor or ceil rounding (ceil never starts a window inside the
// end padding). Throws Error naming `op` for inconsistent attributes or an empty output.
WindowGeometry resolve_window(const char* op, const Shape& input_spatial, const Shape& kernel, const WindowAttrs& a);

// Taps of one window: kernel positions (flat, row-major over the kernel) paired with the input
// positions they read (flat, row-major over the input's spatial axes). Out-of-range taps are absent.
struct WindowTaps {
  std::vector<int64_t> kernel_index;
  std::vector<int64_t> input_offset;
  size_t size() const { return kernel_index.size(); }
};

// Per axis and output coordinate: the (kernel position, input coordinate) pairs that meet there.
using AxisTaps = std::vector<std::vector<std::pair<int64_t, int64_t>>>;
// Convolution: output o reads input o*s - pb + j*d.
AxisTaps forward_axis_taps(const WindowGeometry& g, size_t axis);
// Transposed convolution: input x writes output x*s - pb + j*d (so output o gathers those x).
AxisTaps transposed_axis_taps(const WindowGeometry& g, size_t axis);

// Visits every output position (row-major) with its coordinates and its taps, the product of the
// per-axis tap lists.
void for_each_window(const Shape& output, const Shape& kernel, const Shape& input, const std::vector<AxisTaps>& axes,
                     const std::function<void(int64_t out_offset, const int64_t* coord, const WindowTaps&)>& fn);

// Throws "<op>: <what> has dtype i32; allowed: f16, f32, f64" unless `t` is allowed.
void require_dtype(const char* op, const char* what, DataType t, std::initializer_list<DataType> allowed);
inline constexpr std::initializer_list<DataType> kFloatTypes = {DataType::kFloat16, DataType::kFloat32,
                                                                DataType::kFloat64, DataType::kBFloat16};
inline constexpr std::initializer_list<DataType> kConvFloatTypes = {DataType::kFloat16, DataType::kFloat32,
                                                                    DataType::kFloat64};

// Every element as double (exact for all float dtypes and for integers up to 2^53).
std::vector<double> to_doubles(const Tensor& t);
// Writes `values` into `t` (same element count), rounding once to t's dtype.
void store_doubles(Tensor& t, const std::vector<double>& values);
// Every element of an integer tensor as int64, exactly (no trip through double).
std::vector<int64_t> to_exact_int64s(const Tensor& t);
// Writes int64 values into an integer tensor, wrapping to its width like C++ conversions do.
void store_int64s(Tensor& t, const std::vector<int64_t>& values);

int64_t product(const Shape& s, size_t from = 0, size_t to = SIZE_MAX);

// An InferContext over a kernel's (or a cost function's) actual inputs, so that reference kernels
// and flops re-derive their geometry with the very code `infer` uses. No input values are known.
class TypesContext {
 public:
  explicit TypesContext(const KernelArgs& args);
  explicit TypesContext(const OpTypes& types);
  const InferContext& get() const { return ctx_; }

 private:
  static std::vector<const TensorType*> pointers(const std::vector<TensorType>& types,
                                                 const std::vector<bool>& present);
  std::vector<TensorType> types_;
  std::vector<bool> present_;
  InferContext ctx_;
};

}  // namespace tessel::ops::nn
