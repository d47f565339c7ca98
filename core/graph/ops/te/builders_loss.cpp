// Tensor-expression builders of the losses and MaxUnpool (nn_loss.h).
//
//   NegativeLogLikelihoodLoss(x: f32[N,C,D], t: i64[N,D], mean)
//     ──▶  loss[n, d]   = select(t[n, d] == ignore, 0, -x[n, t[n, d], d] * w[t[n, d]])
//          weight[n, d] = select(t[n, d] == ignore, 0, w[t[n, d]])
//          out[]        = sum(loss) / sum(weight)
#include <cmath>

#include "core/graph/ops/nn_loss.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

namespace {

using Index = const std::vector<Expr>&;

// The loss of log-probabilities `logp` [N,C,d...] against the node's target (input 1) and weight
// (input 2), reduced as the attributes ask.
te::Tensor nll(BuildContext& c, const te::Tensor& logp) {
  const auto& a = c.attrs<ops::LossAttrs>();
  const te::Tensor& target = c.input(1);
  const DataType t = logp->dtype;
  const int64_t classes = logp->shape[1];
  const Shape& T = target->shape;
  auto cls = [&](Index p) { return convert(DataType::kInt64, te::at(target, p)); };
  auto ignored = [&](Index p) {
    return a.ignore_index == ops::kNoIgnoreIndex ? loopir::ne(make_int(0), make_int(0))
                                                 : loopir::eq(cls(p), make_int(a.ignore_index));
  };
  // The class index, 0 where ignored (any value is then valid), checked against [0, C).
  auto safe_class = [&](Index p) {
    Expr k = te::if_then_else(ignored(p), make_int(0), cls(p));
    return loopir::make_check(loopir::logical_and(loopir::ge(k, make_int(0)), loopir::lt(k, make_int(classes))), k, k,
                              "node '" + (c.node.name.empty() ? c.stage() : c.node.name) + "' (" + c.node.op->name +
                                  "): target {} out of range [0, " + std::to_string(classes) + ")");
  };
  auto weight_of = [&](Index p) { return c.has(2) ? te::at(c.in[2], {safe_class(p)}) : num(t, 1); };
  const bool none = a.reduction == "none";
  te::Tensor loss = te::compute(none ? c.stage() : c.stage("loss"), T, [&](Index p) {
    std::vector<Expr> src = p;
    src.insert(src.begin() + 1, safe_class(p));
    return te::if_then_else(ignored(p), num(t, 0), -(te::at(logp, src) * weight_of(p)));
  });
  if (none) return loss;
  std::vector<IterVar> r;
  for (size_t k = 0; k < T.size(); ++k) r.push_back(te::reduce_axis(T[k], "r" + std::to_string(k)));
  std::vector<Expr> all;
  for (const IterVar& v : r) all.push_back(v.var);
  if (a.reduction == "sum") return te::compute(c.stage(), {}, [&](Index) { return te::sum(te::at(loss, all), r); });
  te::Tensor total = te::compute(c.stage("total"), {}, [&](Index) { return te::sum(te::at(loss, all), r); });
  std::vector<IterVar> r2;
  for (size_t k = 0; k < T.size(); ++k) r2.push_back(te::reduce_axis(T[k], "w" + std::to_string(k)));
  std::vector<Expr> all2;
  for (const IterVar& v : r2) all2.push_back(v.var);
  te::Tensor weight = te::compute(c.stage("weight"), {}, [&](Index) {
    return te::sum(te::if_then_else(ignored(all2), num(t, 0), weight_of(all2)), r2);
  });
  return te::compute(c.stage(), {}, [&](Index) { return te::at(total, {}) / te::at(weight, {}); });
}

}  // namespace

Stages negative_log_likelihood_loss(BuildContext& c) {
  float_operand(c);
  return {nll(c, c.input(0))};
}

// LogSoftmax over axis 1 in three stages (max, sum of exponentials, the difference), then the loss.
Stages softmax_cross_entropy_loss(BuildContext& c) {
  float_operand(c);
  const te::Tensor& x = c.input(0);
  const Shape& X = x->shape;
  Shape rows = X;
  rows.erase(rows.begin() + 1);
  auto with_class = [](Index p, const Expr& k) {
    std::vector<Expr> src = p;
    src.insert(src.begin() + 1, k);
    return src;
  };
  IterVar m = te::reduce_axis(X[1], "c");
  te::Tensor max =
      te::compute(c.stage("max"), rows, [&](Index p) { return te::max_reduce(te::at(x, with_class(p, m.var)), {m}); });
  IterVar s = te::reduce_axis(X[1], "c");
  te::Tensor sum = te::compute(c.stage("sum"), rows, [&](Index p) {
    return te::sum(te::exp(te::at(x, with_class(p, s.var)) - te::at(max, p)), {s});
  });
  te::Tensor logp = te::compute(c.stage("log_prob"), X, [&](Index p) {
    std::vector<Expr> row = p;
    row.erase(row.begin() + 1);
    return te::at(x, p) - te::at(max, row) - te::log(te::at(sum, row));
  });
  te::Tensor loss = nll(c, logp);
  if (c.out.size() > 1) return {loss, logp};
  return {loss};
}

// Each output position looks back at the input positions whose windows could hold it (one per
// kernel tap and spatial axis) and takes the value whose index names it:
//   count[p] = sum(match), value[p] = max(select(match, X, -inf)), out[p] = count > 0 ? value : 0
Stages max_unpool(BuildContext& c) {
  const auto& a = c.attrs<ops::MaxUnpoolAttrs>();
  const DataType t = float_operand(c);
  const te::Tensor &x = c.input(0), &index = c.input(1);
  const Shape& X = x->shape;
  const Shape& out = c.shape();
  const size_t spatial = X.size() - 2;
  Shape pooled = X;  // MaxPool's input: where the indices count
  for (size_t k = 0; k < spatial; ++k) {
    const int64_t stride = a.strides.empty() ? 1 : a.strides[k];
    const int64_t pads = a.pads.empty() ? 0 : a.pads[k] + a.pads[k + spatial];
    pooled[k + 2] = (X[k + 2] - 1) * stride + a.kernel_shape[k] - pads;
  }
  auto taps = [&](const std::string& prefix) {
    std::vector<IterVar> r;
    for (size_t k = 0; k < spatial; ++k) r.push_back(te::reduce_axis(a.kernel_shape[k], prefix + std::to_string(k)));
    return r;
  };
  // Whether the input position reached through tap r holds output position p, and that position.
  auto candidate = [&](Index p, const std::vector<IterVar>& r, std::vector<Expr>* src) {
    Expr ok, flat = make_int(0);
    *src = {p[0], p[1]};
    for (size_t k = 0; k < pooled.size(); ++k) {
      Expr coordinate = convert(DataType::kInt64, p[k]);
      flat = flat * pooled[k] + coordinate;
      if (k < 2) continue;
      Expr inside_pooled = loopir::lt(coordinate, make_int(pooled[k]));
      ok = ok ? loopir::logical_and(ok, inside_pooled) : inside_pooled;
    }
    for (size_t k = 0; k < spatial; ++k) {
      const int64_t stride = a.strides.empty() ? 1 : a.strides[k];
      const int64_t pad = a.pads.empty() ? 0 : a.pads[k];
      Expr offset = convert(DataType::kInt64, p[k + 2]) + pad - Expr(r[k].var);
      Expr o = offset / stride;
      Expr fits = loopir::logical_and(
          loopir::ge(offset, make_int(0)),
          loopir::logical_and(loopir::eq(offset % stride, make_int(0)), loopir::lt(o, make_int(X[k + 2]))));
      ok = loopir::logical_and(ok, fits);
      src->push_back(loopir::min(loopir::max(o, make_int(0)), make_int(X[k + 2] - 1)));
    }
    return loopir::logical_and(ok, loopir::eq(convert(DataType::kInt64, te::at(index, *src)), flat));
  };
  std::vector<IterVar> rc = taps("c");
  te::Tensor count = te::compute(c.stage("count"), out, [&](Index p) {
    std::vector<Expr> src;
    return te::sum(te::if_then_else(candidate(p, rc, &src), make_int(1), make_int(0)), rc);
  });
  std::vector<IterVar> rv = taps("v");
  te::Tensor value = te::compute(c.stage("value"), out, [&](Index p) {
    std::vector<Expr> src;
    Expr hit = candidate(p, rv, &src);
    return te::max_reduce(te::if_then_else(hit, te::at(x, src), num(t, -HUGE_VAL)), rv);
  });
  return {te::compute(c.stage(), out, [&](Index p) {
    return te::if_then_else(loopir::gt(te::at(count, p), make_int(0)), te::at(value, p), num(t, 0));
  })};
}

}  // namespace tessel::ops::te_builder
