#pragma once
// Random generators: RandomUniform, RandomNormal, their *Like forms and Bernoulli. Every draw is
// seeded and deterministic: the same seed gives the same values on every target, because the
// values come from one reference kernel (no code generator draws random numbers), and the stream
// is Tessel's own (a 64-bit Mersenne Twister, seeded from the seed's float bits, uniforms from its
// top 53 bits, normals by Box-Muller), not the standard library's distributions, whose algorithms
// differ between implementations. Without a seed the draw is the one of seed 0, so a run repeats.
// The values are not numpy's: ONNX test data drawn by numpy cannot be matched.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct RandomUniformAttrs {
  int64_t dtype = 1;  // ONNX code; FLOAT
  float high = 1.0f, low = 0.0f, seed = 0.0f;
  std::vector<int64_t> shape;
  template <class V>
  void visit(V& v) {
    v(dtype, {.name = "dtype", .doc = "ONNX element type of the output (float types)", .def = int64_t{1}});
    v(high, {.name = "high", .doc = "Upper bound (exclusive)", .def = 1.0f});
    v(low, {.name = "low", .doc = "Lower bound", .def = 0.0f});
    v(seed, {.name = "seed", .doc = "Seed of the draw; absent: 0", .def = 0.0f});
    v(shape, {.name = "shape", .doc = "Shape of the output", .min = 0});
  }
};

struct RandomNormalAttrs {
  int64_t dtype = 1;
  float mean = 0.0f, scale = 1.0f, seed = 0.0f;
  std::vector<int64_t> shape;
  template <class V>
  void visit(V& v) {
    v(dtype, {.name = "dtype", .doc = "ONNX element type of the output (float types)", .def = int64_t{1}});
    v(mean, {.name = "mean", .doc = "Mean of the normal distribution", .def = 0.0f});
    v(scale, {.name = "scale", .doc = "Standard deviation", .def = 1.0f});
    v(seed, {.name = "seed", .doc = "Seed of the draw; absent: 0", .def = 0.0f});
    v(shape, {.name = "shape", .doc = "Shape of the output", .min = 0});
  }
};

// The *Like forms and Bernoulli: dtype 0 (absent) takes the input's type.
struct RandomUniformLikeAttrs {
  int64_t dtype = 0;
  float high = 1.0f, low = 0.0f, seed = 0.0f;
  template <class V>
  void visit(V& v) {
    v(dtype, {.name = "dtype", .doc = "ONNX element type of the output; absent: the input's", .def = int64_t{0}});
    v(high, {.name = "high", .doc = "Upper bound (exclusive)", .def = 1.0f});
    v(low, {.name = "low", .doc = "Lower bound", .def = 0.0f});
    v(seed, {.name = "seed", .doc = "Seed of the draw; absent: 0", .def = 0.0f});
  }
};

struct RandomNormalLikeAttrs {
  int64_t dtype = 0;
  float mean = 0.0f, scale = 1.0f, seed = 0.0f;
  template <class V>
  void visit(V& v) {
    v(dtype, {.name = "dtype", .doc = "ONNX element type of the output; absent: the input's", .def = int64_t{0}});
    v(mean, {.name = "mean", .doc = "Mean of the normal distribution", .def = 0.0f});
    v(scale, {.name = "scale", .doc = "Standard deviation", .def = 1.0f});
    v(seed, {.name = "seed", .doc = "Seed of the draw; absent: 0", .def = 0.0f});
  }
};

struct BernoulliAttrs {
  int64_t dtype = 0;
  float seed = 0.0f;
  template <class V>
  void visit(V& v) {
    v(dtype, {.name = "dtype", .doc = "ONNX element type of the output; absent: the input's", .def = int64_t{0}});
    v(seed, {.name = "seed", .doc = "Seed of the draw; absent: 0", .def = 0.0f});
  }
};

// What the five ops share: opaque, one output, no flops; `Inputs` is 0 or 1.
template <class A, int Inputs>
struct RandomOpTraits {
  using Attrs = A;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = Inputs, max_inputs = Inputs, min_outputs = 1, max_outputs = 1;
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

struct RandomUniformOp : RandomOpTraits<RandomUniformAttrs, 0> {
  static constexpr const char* doc = "Values drawn uniformly from [low, high), seeded";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};
struct RandomNormalOp : RandomOpTraits<RandomNormalAttrs, 0> {
  static constexpr const char* doc = "Values drawn from a normal distribution, seeded";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};
struct RandomUniformLikeOp : RandomOpTraits<RandomUniformLikeAttrs, 1> {
  static constexpr const char* doc = "Uniform draws in the input's shape, seeded";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};
struct RandomNormalLikeOp : RandomOpTraits<RandomNormalLikeAttrs, 1> {
  static constexpr const char* doc = "Normal draws in the input's shape, seeded";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};
struct BernoulliOp : RandomOpTraits<BernoulliAttrs, 1> {
  static constexpr const char* doc = "1 with the probability the input gives, else 0, seeded";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
};

}  // namespace tessel::ops
