// The element-wise ops that fit none of the three templates: Clip (optional bound inputs),
// Where (three-way broadcast), Cast/CastLike, Identity and Dropout.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/graph/ops/elementwise.h"

namespace tessel::ops {

namespace {

// Element conversion for Cast: float → integer follows float_to_int64 / float_to_uint64
// (core/support/dtype.h: truncate toward zero, NaN → 0, saturate at int64, keep the low bits),
// anything → bool is "non-zero" (NaN → true, as numpy), integer → float rounds once (not through
// double, which would round twice for large int64 → f32). All of it is `store`'s rule.
template <class D, class S>
D cast_element(S v) {
  if constexpr (std::is_same_v<S, D>) {
    return v;
  } else if constexpr (std::is_same_v<S, uint64_t>) {  // above 2^63 a u64 is no int64
    if constexpr (kIsFloatLike<D>)
      return store<D>(static_cast<double>(v));
    else
      return store<D>(static_cast<int64_t>(v));  // keeps the low bits, as narrowing does
  } else {
    return store<D>(load(v));
  }
}

void copy_bytes(const Tensor& from, Tensor& to) { std::memcpy(to.raw_data(), from.raw_data(), from.nbytes()); }

void require_scalar(const char* op, const char* what, const TensorType& t) {
  if (shape_numel(t.shape) != 1)
    throw Error(std::string(op) + ": " + what + " must be a scalar, got shape " + shape_str(t.shape));
}

}  // namespace

// ---------------------------------------------------------------- Clip

void ClipOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype("Clip", "input 0", x.dtype, kNumericTypes);
  const char* names[] = {"", "min (input 1)", "max (input 2)"};
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const TensorType& bound = ctx.input(i);
    if (bound.dtype != x.dtype)
      throw Error(std::string("Clip: ") + names[i] + " has dtype " + std::string(dtype_name(bound.dtype)) +
                  ", input has " + std::string(dtype_name(x.dtype)));
    require_scalar("Clip", names[i], bound);
  }
  infer_like_input(ctx);
}

void ClipOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  dispatch_dtype(x.dtype(), [&]<class T>() {
    using C = Compute<T>;
    // An absent bound is the widest value of the compute type: nothing is clipped on that side.
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if constexpr (std::is_same_v<C, double>) {
      lo = -std::numeric_limits<double>::infinity();
      hi = std::numeric_limits<double>::infinity();
    }
    if (args.has(1)) lo = load(args.in(1).data<T>()[0]);
    if (args.has(2)) hi = load(args.in(2).data<T>()[0]);
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      // min(max(x, lo), hi), as numpy's clip: when lo > hi every element becomes hi; NaN stays.
      C v = load(px[i]);
      if (v < lo) v = lo;
      if (v > hi) v = hi;
      py[i] = store<T>(v);
    }
  });
}

// ---------------------------------------------------------------- Where

void WhereOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& cond = ctx.input(0);
  const TensorType& x = ctx.input(1);
  const TensorType& y = ctx.input(2);
  require_dtype("Where", "condition (input 0)", cond.dtype, kBoolType);
  if (x.dtype != y.dtype)
    throw Error("Where: X and Y have different dtypes (" + std::string(dtype_name(x.dtype)) + " and " +
                std::string(dtype_name(y.dtype)) + ")");
  try {
    ctx.set_output(0, x.dtype, broadcast_shapes(broadcast_shapes(cond.shape, x.shape), y.shape));
  } catch (const Error& e) {
    throw Error(std::string("Where: ") + e.what());
  }
}

void WhereOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& cond = args.in(0);
  const Tensor& x = args.in(1);
  const Tensor& y = args.in(2);
  Tensor& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<class T>() {
    const bool* pc = cond.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out.data<T>();
    for_each_broadcast(out.shape(), {cond.shape(), x.shape(), y.shape()},
                       [&](int64_t o, const int64_t* in) { po[o] = pc[in[0]] ? px[in[1]] : py[in[2]]; });
  });
}

// ---------------------------------------------------------------- Cast, CastLike, Identity

namespace {
// A number as ONNX's Cast writes it: the shortest decimal that reads back to the same value of its
// own type (numpy's str of a float32 or float64), "NaN", "INF" and "-INF"; integers in decimal;
// bools as numpy writes them.
template <class S>
std::string number_text(S v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v ? "True" : "False";
  } else {
    char buf[64];
    std::to_chars_result r;
    if constexpr (std::is_integral_v<S>) {
      r = std::to_chars(buf, buf + sizeof buf, v);
    } else {
      const double d = load(v);
      if (std::isnan(d)) return "NaN";
      if (std::isinf(d)) return d > 0 ? "INF" : "-INF";
      if constexpr (std::is_same_v<S, double>)
        r = std::to_chars(buf, buf + sizeof buf, d);
      else
        r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(d));  // f16 and bf16 print as their float
    }
    return std::string(buf, r.ptr);
  }
}

// A string as ONNX's Cast reads it into type D: a decimal or scientific number with an optional
// sign, or NaN / INF (any case, with a sign). Integers read exactly when written as integers.
template <class D>
D parse_number(std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  bool negative = false;
  if (!t.empty() && (t.front() == '+' || t.front() == '-')) {
    negative = t.front() == '-';
    t.remove_prefix(1);
  }
  auto fail = [&]() -> D { throw Error("Cast: '" + std::string(text) + "' is not a number"); };
  if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>) {
    uint64_t magnitude = 0;
    auto r = std::from_chars(t.data(), t.data() + t.size(), magnitude);
    if (r.ec == std::errc() && r.ptr == t.data() + t.size())
      return static_cast<D>(negative ? uint64_t{0} - magnitude : magnitude);  // wraps as the narrow type would
  }
  double d = 0;
  auto r = std::from_chars(t.data(), t.data() + t.size(), d);  // also reads inf, infinity and nan in any case
  if (t.empty() || r.ec == std::errc::invalid_argument || r.ptr != t.data() + t.size()) return fail();
  if (r.ec == std::errc::result_out_of_range) d = std::strtod(std::string(t).c_str(), nullptr);  // ±inf or 0
  return store<D>(negative ? -d : d);
}

void cast_into(const Tensor& x, Tensor& y) {
  if (x.dtype() == DataType::kString && y.dtype() == DataType::kString) {
    std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
    return;
  }
  if (y.dtype() == DataType::kString) {
    dispatch_dtype(x.dtype(), [&]<class S>() {
      const S* src = x.data<S>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) y.set_string(i, number_text(src[i]));
    });
    return;
  }
  if (x.dtype() == DataType::kString) {
    dispatch_dtype(y.dtype(), [&]<class D>() {
      D* dst = y.data<D>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) dst[i] = parse_number<D>(x.string_at(i));
    });
    return;
  }
  dispatch_dtype(x.dtype(), [&]<class S>() {
    dispatch_dtype(y.dtype(), [&]<class D>() {
      const S* src = x.data<S>();
      D* dst = y.data<D>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) dst[i] = cast_element<D>(src[i]);
    });
  });
}
}  // namespace

void CastOp::infer(const Attrs& attrs, InferContext& ctx) { ctx.set_output(0, attrs.to, ctx.input(0).shape); }
void CastOp::reference(const Attrs&, const KernelArgs& args) { cast_into(args.in(0), args.out(0)); }

void CastLikeOp::infer(const Attrs&, InferContext& ctx) { ctx.set_output(0, ctx.input(1).dtype, ctx.input(0).shape); }
void CastLikeOp::reference(const Attrs&, const KernelArgs& args) { cast_into(args.in(0), args.out(0)); }

void IdentityOp::reference(const Attrs&, const KernelArgs& args) {
  if (!args.values.empty() && !args.value(0).is_tensor()) {
    args.value_out(0) = args.value(0);
    return;
  }
  if (!args.out(0).defined()) {  // a shape known only at run time (sequence_ops.h): not allocated
    args.out(0) = args.in(0);
    return;
  }
  copy_bytes(args.in(0), args.out(0));
}

// ---------------------------------------------------------------- Dropout

namespace {
// Throws when the known values ask for random training dropout. `ratio` is nullptr when absent
// (ONNX default 0.5).
void check_inference_dropout(const Tensor* ratio, const Tensor* training_mode) {
  double r = ratio ? ratio->get_double(0) : 0.5;
  char text[32];
  std::snprintf(text, sizeof text, "%g", r);
  if (!(r >= 0 && r < 1)) throw Error(std::string("Dropout: ratio ") + text + " is outside [0, 1)");
  if (training_mode && training_mode->get_double(0) != 0 && r != 0)
    throw Error(std::string("Dropout: training_mode=true with ratio ") + text +
                " drops elements at random; Tessel runs inference only (use training_mode=false or ratio 0)");
}
}  // namespace

void DropoutOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype("Dropout", "data (input 0)", x.dtype, kFloatTypes);
  if (ctx.has_input(1)) {
    require_dtype("Dropout", "ratio (input 1)", ctx.input(1).dtype, kFloatTypes);
    require_scalar("Dropout", "ratio (input 1)", ctx.input(1));
  }
  if (ctx.has_input(2)) {
    require_dtype("Dropout", "training_mode (input 2)", ctx.input(2).dtype, kBoolType);
    require_scalar("Dropout", "training_mode (input 2)", ctx.input(2));
  }
  // Decide now when the values are known; otherwise the kernel checks them when it runs.
  const Tensor* training = ctx.input_value(2);
  if (!ctx.has_input(1) || ctx.input_value(1)) check_inference_dropout(ctx.input_value(1), training);
  infer_like_input(ctx);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DataType::kBool, x.shape);
}

void DropoutOp::reference(const Attrs&, const KernelArgs& args) {
  check_inference_dropout(args.has(1) ? &args.in(1) : nullptr, args.has(2) ? &args.in(2) : nullptr);
  copy_bytes(args.in(0), args.out(0));
  if (args.outputs->size() > 1) {
    Tensor& mask = args.out(1);
    std::memset(mask.raw_data(), 1, mask.nbytes());  // bool is one byte; 1 = kept
  }
}

}  // namespace tessel::ops
