// The random generators: shape inference and the seeded reference kernels (random_ops.h).
#include "core/graph/ops/random_ops.h"

#include <bit>
#include <cmath>
#include <numbers>
#include <random>

#include "core/graph/ops/elementwise_support.h"

namespace tessel::ops {

namespace {

// The stream of a seed: the float's bits (so 1.0 and 2.0 give unrelated streams), spread by
// splitmix64 so that nearby seeds do not start the twister in nearby states.
class Stream {
 public:
  explicit Stream(float seed) {
    uint64_t z = std::bit_cast<uint32_t>(seed) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    engine_.seed(z ^ (z >> 31));
  }
  // Uniform in [0, 1): the top 53 bits of one draw.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Standard normal by Box-Muller, one value per pair of uniforms (the second is not kept, so a
  // value depends on its position alone).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 engine_;
};

DataType output_type(const char* op, int64_t code, DataType like) {
  const DataType t = code == 0 ? like : dtype_from_onnx(code);
  require_dtype(op, "the output (dtype)", t, kFloatTypes);
  return t;
}

template <class Draw>
void fill(Tensor& y, Draw draw) {
  for (int64_t i = 0, n = y.numel(); i < n; ++i) y.set_double(i, draw(i));
}

}  // namespace

void RandomUniformOp::infer(const Attrs& a, InferContext& ctx) {
  ctx.set_output(0, output_type("RandomUniform", a.dtype, DataType::kFloat32), a.shape);
}
void RandomUniformOp::reference(const Attrs& a, const KernelArgs& args) {
  Stream s(a.seed);
  fill(args.out(0), [&](int64_t) { return a.low + (double{a.high} - a.low) * s.uniform(); });
}

void RandomNormalOp::infer(const Attrs& a, InferContext& ctx) {
  ctx.set_output(0, output_type("RandomNormal", a.dtype, DataType::kFloat32), a.shape);
}
void RandomNormalOp::reference(const Attrs& a, const KernelArgs& args) {
  Stream s(a.seed);
  fill(args.out(0), [&](int64_t) { return a.mean + double{a.scale} * s.normal(); });
}

void RandomUniformLikeOp::infer(const Attrs& a, InferContext& ctx) {
  ctx.set_output(0, output_type("RandomUniformLike", a.dtype, ctx.input(0).dtype), ctx.input(0).shape);
}
void RandomUniformLikeOp::reference(const Attrs& a, const KernelArgs& args) {
  Stream s(a.seed);
  fill(args.out(0), [&](int64_t) { return a.low + (double{a.high} - a.low) * s.uniform(); });
}

void RandomNormalLikeOp::infer(const Attrs& a, InferContext& ctx) {
  ctx.set_output(0, output_type("RandomNormalLike", a.dtype, ctx.input(0).dtype), ctx.input(0).shape);
}
void RandomNormalLikeOp::reference(const Attrs& a, const KernelArgs& args) {
  Stream s(a.seed);
  fill(args.out(0), [&](int64_t) { return a.mean + double{a.scale} * s.normal(); });
}

void BernoulliOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& p = ctx.input(0);
  require_dtype("Bernoulli", "input 0", p.dtype, kFloatTypes);
  const DataType t = a.dtype == 0 ? p.dtype : dtype_from_onnx(a.dtype);
  require_dtype("Bernoulli", "the output (dtype)", t, kNumericTypes | kBoolType);
  ctx.set_output(0, t, p.shape);
}
void BernoulliOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& p = args.in(0);
  Stream s(a.seed);
  fill(args.out(0), [&](int64_t i) { return s.uniform() < p.get_double(i) ? 1.0 : 0.0; });
}

}  // namespace tessel::ops
