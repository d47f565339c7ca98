// IsInf, IsNaN, Mod and BitShift: element-wise ops whose output type or integer rule does not fit
// the UnaryOp/BinaryOp templates of elementwise.cpp.
#include <cmath>

#include "core/graph/ops/elementwise.h"

namespace tessel::ops {

namespace {

// The common shape of a and b, named after the op when they do not broadcast.
Shape broadcast_pair(const char* op, const Shape& a, const Shape& b) {
  try {
    return broadcast_shapes(a, b);
  } catch (const Error& e) {
    throw Error(std::string(op) + ": " + e.what());
  }
}

void require_same_dtype(const char* op, DataType a, DataType b) {
  if (a != b)
    throw Error(std::string(op) + ": inputs have different dtypes (" + std::string(dtype_name(a)) + " and " +
                std::string(dtype_name(b)) + "); ONNX requires the same type");
}

// Python's a % b on integers: the remainder takes the divisor's sign.
int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 would trap
  int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

}  // namespace

// ---------------------------------------------------------------- IsInf, IsNaN

void IsInfOp::infer(const Attrs&, InferContext& ctx) {
  require_dtype("IsInf", "input 0", ctx.input(0).dtype, kFloatTypes);
  ctx.set_output(0, DataType::kBool, ctx.input(0).shape);
}

void IsInfOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  bool* y = args.out(0).data<bool>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const double v = x.get_double(i);
    y[i] = std::isinf(v) && (v > 0 ? a.detect_positive != 0 : a.detect_negative != 0);
  }
}

void IsNaNOp::infer(const Attrs&, InferContext& ctx) {
  require_dtype("IsNaN", "input 0", ctx.input(0).dtype, kFloatTypes);
  ctx.set_output(0, DataType::kBool, ctx.input(0).shape);
}

void IsNaNOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  bool* y = args.out(0).data<bool>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) y[i] = std::isnan(x.get_double(i));
}

// ---------------------------------------------------------------- Mod

void ModOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& y = ctx.input(1);
  require_dtype("Mod", "input 0", x.dtype, kNumericTypes);
  require_same_dtype("Mod", x.dtype, y.dtype);
  if (dtype_is_float(x.dtype) && a.fmod == 0)
    throw Error("Mod: fmod 0 is defined for integers only; input 0 has dtype " + std::string(dtype_name(x.dtype)));
  ctx.set_output(0, x.dtype, broadcast_pair("Mod", x.shape, y.shape));
}

void ModOp::reference(const Attrs& attrs, const KernelArgs& args) {
  const Tensor& a = args.in(0);
  const Tensor& b = args.in(1);
  Tensor& y = args.out(0);
  dispatch_dtype(a.dtype(), [&]<class T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* py = y.data<T>();
    for_each_broadcast(y.shape(), {a.shape(), b.shape()}, [&](int64_t o, const int64_t* in) {
      if constexpr (kIsFloatLike<T>) {
        py[o] = store<T>(std::fmod(load(pa[in[0]]), load(pb[in[1]])));
      } else if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
        // Both rules agree without signs; u64 stays out of int64, where it would turn negative.
        if (pb[in[1]] == 0) throw Error("Mod: integer remainder by zero");
        py[o] = static_cast<T>(pa[in[0]] % pb[in[1]]);
      } else {
        const int64_t u = load(pa[in[0]]), v = load(pb[in[1]]);
        if (v == 0) throw Error("Mod: integer remainder by zero");
        py[o] = store<T>(attrs.fmod != 0 ? (v == -1 ? 0 : u % v) : floor_mod(u, v));
      }
    });
  });
}

// ---------------------------------------------------------------- BitShift

void BitShiftOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const TensorType& y = ctx.input(1);
  require_dtype("BitShift", "input 0", x.dtype, kUnsignedIntTypes);
  require_same_dtype("BitShift", x.dtype, y.dtype);
  ctx.set_output(0, x.dtype, broadcast_pair("BitShift", x.shape, y.shape));
}

void BitShiftOp::reference(const Attrs& attrs, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const Tensor& s = args.in(1);
  Tensor& y = args.out(0);
  const bool left = attrs.direction == "LEFT";
  dispatch_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      constexpr uint64_t bits = sizeof(T) * 8;
      const T* px = x.data<T>();
      const T* ps = s.data<T>();
      T* py = y.data<T>();
      for_each_broadcast(y.shape(), {x.shape(), s.shape()}, [&](int64_t o, const int64_t* in) {
        const uint64_t v = px[in[0]], by = ps[in[1]];
        py[o] = by >= bits ? T{0} : static_cast<T>(left ? v << by : v >> by);  // a shift by the width leaves nothing
      });
    }
  });
}

}  // namespace tessel::ops
