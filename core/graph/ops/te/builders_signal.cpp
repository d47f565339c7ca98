// Tensor-expression builder of STFT (signal_ops.h): one reduction over the frame's samples,
// in double, the angle reduced modulo N exactly as DFT's builder does:
//
//   out[b, f, k, c] = Σn w[n] · (c == 0 ? re·cos θ + im·sin θ : im·cos θ - re·sin θ),
//   re, im = signal[b, f·step + n, 0|1],  θ = 2π · (k·n mod N) / N
#include <numbers>

#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/signal_ops.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

Stages stft(BuildContext& c) {
  const DataType t = float_operand(c);
  const DataType acc = DataType::kFloat64;
  std::vector<TensorType> types(c.in.size());
  std::vector<const TensorType*> pointers;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (c.has(i)) types[i] = TensorType{c.in[i]->dtype, c.in[i]->shape};
    pointers.push_back(c.has(i) ? &types[i] : nullptr);
    values.push_back(i == 1 || i == 3 ? (c.has(i) ? &c.known(i, i == 1 ? "frame_step" : "frame_length") : nullptr)
                                      : nullptr);
  }
  const ops::STFTPlan p = ops::plan_stft(c.attrs<ops::STFTAttrs>(), InferContext(pointers, values, 1));
  const te::Tensor& x = c.input(0);
  IterVar n = te::reduce_axis(p.length, "n");
  const double turn = 2.0 * std::numbers::pi / static_cast<double>(p.length);
  te::Tensor sum = te::compute(c.stage("sum"), c.shape(), [&](const std::vector<Expr>& o) {
    const Expr at = o[1] * p.step + n.var;
    Expr re = convert(acc, te::at(x, {o[0], at, make_int(0)}));
    Expr im = p.complex ? convert(acc, te::at(x, {o[0], at, make_int(1)})) : num(acc, 0);
    if (c.has(2)) {
      const Expr w = convert(acc, te::at(c.in[2], {n.var}));
      re = re * w;
      im = im * w;
    }
    const Expr theta = convert(acc, (convert(DataType::kInt64, o[2]) * n.var) % p.length) * num(acc, turn);
    const Expr cosine = te::intrinsic("cos", {theta}), sine = te::intrinsic("sin", {theta});
    const Expr part = te::if_then_else(loopir::eq(convert(DataType::kInt64, o[3]), make_int(0)),
                                       re * cosine + im * sine, im * cosine - re * sine);
    return te::sum(part, {n});
  });
  if (t == acc) return {sum};
  return {te::compute(c.stage(), c.shape(), [&](const std::vector<Expr>& o) { return convert(t, te::at(sum, o)); })};
}

}  // namespace tessel::ops::te_builder
