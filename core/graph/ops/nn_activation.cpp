// Gelu (the opset-20 definition; exporters at lower opsets write it as an Erf subgraph instead).
#include <cmath>
#include <numbers>

#include "core/graph/ops/nn.h"
#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

void GeluOp::infer(const Attrs&, InferContext& ctx) {
  nn::require_dtype("Gelu", "X", ctx.input(0).dtype, nn::kFloatTypes);
  infer_like_input(ctx);
}

void GeluOp::reference(const Attrs& a, const KernelArgs& args) {
  std::vector<double> v = nn::to_doubles(args.in(0));
  if (a.approximate == "tanh") {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    for (double& x : v) x = 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
  } else {
    for (double& x : v) x = 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
  }
  nn::store_doubles(args.out(0), v);
}

// none: divide, erf, add, two multiplies; tanh: cube (2), multiply-add (2), scale, tanh, add, two multiplies.
int64_t GeluOp::flops(const Attrs& a, const OpTypes& t) {
  return flops_per_output_element(t, a.approximate == "tanh" ? 9 : 5);
}

}  // namespace tessel::ops
