// MatMul and Gemm: shape rules and reference kernels. Floating-point types accumulate in double and
// round once; integer types accumulate exactly in 64 bits, wrapping on overflow like the hardware.
#include <cstring>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace {

constexpr std::initializer_list<DataType> kMatMulTypes = {DataType::kFloat16,  DataType::kFloat32, DataType::kFloat64,
                                                          DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};

std::string s(int64_t v) { return std::to_string(v); }

void check_operand_types(const char* op, const TensorType& a, const TensorType& b) {
  nn::require_dtype(op, "A", a.dtype, kMatMulTypes);
  if (b.dtype != a.dtype)
    throw Error(std::string(op) + ": B has dtype " + std::string(dtype_name(b.dtype)) + " but A has " +
                std::string(dtype_name(a.dtype)));
}

// A batched product: `batch` broadcast from the operands' leading dims, each item M×K · K×N.
struct MatMulPlan {
  Shape a_batch, b_batch, batch, out;
  int64_t m = 1, k = 1, n = 1;
};

MatMulPlan plan_matmul(const TensorType& a, const TensorType& b) {
  check_operand_types("MatMul", a, b);
  if (a.shape.empty() || b.shape.empty())
    throw Error("MatMul: operands must have rank 1 or more, got A " + shape_str(a.shape) + " and B " +
                shape_str(b.shape));
  // numpy: a 1-D A is a row vector [1,K], a 1-D B a column vector [K,1]; the unit axis is dropped
  // from the result.
  const bool a_vector = a.shape.size() == 1, b_vector = b.shape.size() == 1;
  const Shape as = a_vector ? Shape{1, a.shape[0]} : a.shape;
  const Shape bs = b_vector ? Shape{b.shape[0], 1} : b.shape;
  MatMulPlan p;
  p.m = as[as.size() - 2];
  p.k = as.back();
  p.n = bs.back();
  if (bs[bs.size() - 2] != p.k)
    throw Error("MatMul: inner dimensions differ: A " + shape_str(a.shape) + " has " + s(p.k) + " columns, B " +
                shape_str(b.shape) + " has " + s(bs[bs.size() - 2]) + " rows");
  p.a_batch.assign(as.begin(), as.end() - 2);
  p.b_batch.assign(bs.begin(), bs.end() - 2);
  try {
    p.batch = broadcast_shapes(p.a_batch, p.b_batch);
  } catch (const Error& e) {
    throw Error(std::string("MatMul: batch dimensions do not broadcast: ") + e.what());
  }
  p.out = p.batch;
  if (!a_vector) p.out.push_back(p.m);
  if (!b_vector) p.out.push_back(p.n);
  return p;
}

// y[i] (M×N) = a[i] (M×K) · b[i] (K×N) for every broadcast batch item. Acc is double or uint64_t
// (modular arithmetic: exact two's-complement wrap for integer types).
template <class Acc>
std::vector<Acc> batched_matmul(const MatMulPlan& p, const std::vector<Acc>& a, const std::vector<Acc>& b) {
  std::vector<Acc> y(static_cast<size_t>(shape_numel(p.batch) * p.m * p.n), Acc{0});
  for_each_broadcast(p.batch, {p.a_batch, p.b_batch}, [&](int64_t item, const int64_t* in) {
    const Acc* ai = a.data() + in[0] * p.m * p.k;
    const Acc* bi = b.data() + in[1] * p.k * p.n;
    Acc* yi = y.data() + item * p.m * p.n;
    // Row-wise (r, j, c) order so B is read contiguously; each y[r][c] still sums over j in order.
    for (int64_t r = 0; r < p.m; ++r)
      for (int64_t j = 0; j < p.k; ++j) {
        const Acc a_rj = ai[r * p.k + j];
        const Acc* b_row = bi + j * p.n;
        Acc* y_row = yi + r * p.n;
        for (int64_t c = 0; c < p.n; ++c) y_row[c] += a_rj * b_row[c];
      }
  });
  return y;
}

std::vector<uint64_t> as_unsigned(const std::vector<int64_t>& v) {
  std::vector<uint64_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<uint64_t>(v[i]);
  return out;
}

std::vector<int64_t> as_signed(const std::vector<uint64_t>& v) {
  std::vector<int64_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<int64_t>(v[i]);
  return out;
}

struct GemmPlan {
  int64_t m = 0, k = 0, n = 0;
};

GemmPlan plan_gemm(const GemmAttrs& attrs, const InferContext& ctx) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  check_operand_types("Gemm", a, b);
  if (a.shape.size() != 2 || b.shape.size() != 2)
    throw Error("Gemm: A and B must be 2-D, got A " + shape_str(a.shape) + " and B " + shape_str(b.shape));
  GemmPlan p;
  p.m = attrs.transA ? a.shape[1] : a.shape[0];
  p.k = attrs.transA ? a.shape[0] : a.shape[1];
  p.n = attrs.transB ? b.shape[0] : b.shape[1];
  const int64_t kb = attrs.transB ? b.shape[1] : b.shape[0];
  if (kb != p.k)
    throw Error("Gemm: inner dimensions differ: op(A) is " + s(p.m) + "×" + s(p.k) + " (A " + shape_str(a.shape) +
                (attrs.transA ? ", transposed" : "") + "), op(B) is " + s(kb) + "×" + s(p.n) + " (B " +
                shape_str(b.shape) + (attrs.transB ? ", transposed" : "") + ")");
  if (ctx.has_input(2)) {
    const TensorType& c = ctx.input(2);
    if (c.dtype != a.dtype)
      throw Error("Gemm: C has dtype " + std::string(dtype_name(c.dtype)) + " but A has " +
                  std::string(dtype_name(a.dtype)));
    const Shape y{p.m, p.n};
    bool ok = c.shape.size() <= 2;
    for (size_t i = 0; ok && i < c.shape.size(); ++i) {
      const int64_t want = y[2 - c.shape.size() + i];
      ok = c.shape[i] == want || c.shape[i] == 1;
    }
    if (!ok) throw Error("Gemm: C " + shape_str(c.shape) + " does not broadcast to the output " + shape_str(y));
  }
  return p;
}

// Copies A (or Aᵀ) into row-major M×K order, so one matmul loop serves every transpose flag.
template <class T>
std::vector<T> row_major(const std::vector<T>& v, int64_t rows, int64_t cols, bool transposed) {
  if (!transposed) return v;
  std::vector<T> out(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = v[c * rows + r];
  return out;
}

}  // namespace

void MatMulOp::infer(const Attrs&, InferContext& ctx) {
  ctx.set_output(0, ctx.input(0).dtype, plan_matmul(ctx.input(0), ctx.input(1)).out);
}

void MatMulOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& a = args.in(0);
  const Tensor& b = args.in(1);
  const MatMulPlan p = plan_matmul({a.dtype(), a.shape()}, {b.dtype(), b.shape()});
  if (dtype_is_integer(a.dtype())) {
    const auto y = batched_matmul(p, as_unsigned(nn::to_exact_int64s(a)), as_unsigned(nn::to_exact_int64s(b)));
    nn::store_int64s(args.out(0), as_signed(y));
  } else {
    nn::store_doubles(args.out(0), batched_matmul(p, nn::to_doubles(a), nn::to_doubles(b)));
  }
}

int64_t MatMulOp::flops(const Attrs&, const OpTypes& t) {
  const Shape& a = t.inputs[0]->shape;
  return 2 * shape_numel(t.outputs[0].shape) * (a.empty() ? 0 : a.back());
}

void GemmOp::infer(const Attrs& a, InferContext& ctx) {
  const GemmPlan p = plan_gemm(a, ctx);
  ctx.set_output(0, ctx.input(0).dtype, {p.m, p.n});
}

void GemmOp::reference(const Attrs& attrs, const KernelArgs& args) {
  const GemmPlan g = plan_gemm(attrs, nn::TypesContext(args).get());
  MatMulPlan p;
  p.m = g.m;
  p.k = g.k;
  p.n = g.n;
  const Shape out{g.m, g.n};
  const bool has_c = args.has(2);
  const Shape c_shape = has_c ? args.in(2).shape() : Shape{};
  const double alpha = attrs.alpha, beta = attrs.beta;
  if (dtype_is_integer(args.in(0).dtype())) {
    const auto ab = batched_matmul(p, row_major(as_unsigned(nn::to_exact_int64s(args.in(0))), g.m, g.k, attrs.transA),
                                   row_major(as_unsigned(nn::to_exact_int64s(args.in(1))), g.k, g.n, attrs.transB));
    const std::vector<int64_t> c = has_c ? nn::to_exact_int64s(args.in(2)) : std::vector<int64_t>{};
    std::vector<int64_t> y(ab.size());
    // alpha = beta = 1 (the usual case) stays exact; other factors go through double.
    const bool unit = alpha == 1.0 && beta == 1.0;
    for_each_broadcast(out, {c_shape}, [&](int64_t o, const int64_t* in) {
      const uint64_t cv = has_c ? static_cast<uint64_t>(c[in[0]]) : 0;
      y[o] = unit ? static_cast<int64_t>(ab[o] + cv)
                  : static_cast<int64_t>(alpha * static_cast<double>(static_cast<int64_t>(ab[o])) +
                                         beta * static_cast<double>(static_cast<int64_t>(cv)));
    });
    nn::store_int64s(args.out(0), y);
    return;
  }
  const auto ab = batched_matmul(p, row_major(nn::to_doubles(args.in(0)), g.m, g.k, attrs.transA),
                                 row_major(nn::to_doubles(args.in(1)), g.k, g.n, attrs.transB));
  const std::vector<double> c = has_c ? nn::to_doubles(args.in(2)) : std::vector<double>{};
  std::vector<double> y(ab.size());
  for_each_broadcast(out, {c_shape},
                     [&](int64_t o, const int64_t* in) { y[o] = alpha * ab[o] + (has_c ? beta * c[in[0]] : 0.0); });
  nn::store_doubles(args.out(0), y);
}

int64_t GemmOp::flops(const Attrs& a, const OpTypes& t) {
  const Shape& y = t.outputs[0].shape;
  const int64_t mn = shape_numel(y);
  const Shape& as = t.inputs[0]->shape;
  const int64_t k = as.size() == 2 ? (a.transA ? as[0] : as[1]) : 0;
  const bool has_c = t.inputs.size() > 2 && t.inputs[2] != nullptr;
  return 2 * mn * k + (a.alpha != 1.0f ? mn : 0) + (has_c ? mn * (a.beta != 1.0f ? 2 : 1) : 0);
}

}  // namespace tessel::ops
