#include "core/graph/ops/training_ops.h"

#include <cmath>

namespace tessel::ops {

namespace {

// n, the tensors per group, after checking the counts and that every group matches X's types.
int group_size(const char* op, int kinds, const InferContext& ctx) {
  const int tensors = ctx.num_inputs() - 2;
  if (tensors % kinds != 0)
    throw Error(std::string(op) + " takes R, T and " + std::to_string(kinds) + " groups of n tensors; got " +
                std::to_string(ctx.num_inputs()) + " inputs");
  const int n = tensors / kinds;
  if (ctx.num_outputs() != (kinds - 1) * n)
    throw Error(std::string(op) + " with n = " + std::to_string(n) + " has " + std::to_string((kinds - 1) * n) +
                " outputs, not " + std::to_string(ctx.num_outputs()));
  for (int r = 0; r < 2; ++r)
    if (shape_numel(ctx.input(r).shape) != 1)
      throw Error(std::string(op) + ": " + (r == 0 ? "R" : "T") + " must hold one value, not " +
                  type_str(ctx.input(r)));
  for (int k = 1; k < kinds; ++k)
    for (int i = 0; i < n; ++i)
      if (ctx.input(2 + k * n + i) != ctx.input(2 + i))
        throw Error(std::string(op) + ": input " + std::to_string(2 + k * n + i) + " is " +
                    type_str(ctx.input(2 + k * n + i)) + " but its parameter is " + type_str(ctx.input(2 + i)));
  return n;
}

// The tensors of one step: element e of tensor i of group k is at(k, i)[e], as doubles.
struct Step {
  int n = 0;
  double rate = 0;
  int64_t count = 0;
  std::vector<std::vector<double>> in;  // by input index - 2

  Step(const KernelArgs& args, int kinds) {
    n = static_cast<int>(args.inputs.size() - 2) / kinds;
    rate = args.in(0).get_double(0);
    count = static_cast<int64_t>(args.in(1).get_double(0));
    for (size_t t = 2; t < args.inputs.size(); ++t) {
      const Tensor& x = args.in(static_cast<int>(t));
      std::vector<double> v(static_cast<size_t>(x.numel()));
      for (int64_t e = 0; e < x.numel(); ++e) v[static_cast<size_t>(e)] = x.get_double(e);
      in.push_back(std::move(v));
    }
  }
  const std::vector<double>& at(int kind, int i) const { return in[static_cast<size_t>(kind * n + i)]; }
};

}  // namespace

template <class A, int Kinds>
void OptimizerTraits<A, Kinds>::infer(const A&, InferContext& ctx) {
  const char* names[] = {"", "", "", "Adagrad or Momentum", "Adam"};
  const int n = group_size(names[Kinds], Kinds, ctx);
  for (int k = 0; k + 1 < Kinds; ++k)
    for (int i = 0; i < n; ++i) ctx.set_output(k * n + i, ctx.input(2 + i));
}

template <class A, int Kinds>
int64_t OptimizerTraits<A, Kinds>::flops(const A&, const OpTypes& t) {
  int64_t total = 0;
  for (const TensorType& out : t.outputs) total += 4 * shape_numel(out.shape);
  return total;
}

template struct OptimizerTraits<AdagradAttrs, 3>;
template struct OptimizerTraits<AdamAttrs, 4>;
template struct OptimizerTraits<MomentumAttrs, 3>;

void AdagradOp::reference(const Attrs& a, const KernelArgs& args) {
  const Step s(args, kinds);
  const double rate = s.rate / (1 + static_cast<double>(s.count) * a.decay_factor);
  for (int i = 0; i < s.n; ++i) {
    const auto &x = s.at(0, i), &g = s.at(1, i), &h = s.at(2, i);
    Tensor &x_new = args.out(i), &h_new = args.out(s.n + i);
    for (size_t e = 0; e < x.size(); ++e) {
      const double gr = a.norm_coefficient * x[e] + g[e];
      const double acc = h[e] + gr * gr;
      h_new.set_double(static_cast<int64_t>(e), acc);
      x_new.set_double(static_cast<int64_t>(e), x[e] - rate * gr / (std::sqrt(acc) + a.epsilon));
    }
  }
}

void AdamOp::reference(const Attrs& a, const KernelArgs& args) {
  const Step s(args, kinds);
  const double t = static_cast<double>(s.count);
  const double rate =
      s.count > 0 ? s.rate * std::sqrt(1 - std::pow(double{a.beta}, t)) / (1 - std::pow(double{a.alpha}, t)) : s.rate;
  for (int i = 0; i < s.n; ++i) {
    const auto &x = s.at(0, i), &g = s.at(1, i), &v = s.at(2, i), &h = s.at(3, i);
    Tensor &x_new = args.out(i), &v_new = args.out(s.n + i), &h_new = args.out(2 * s.n + i);
    for (size_t e = 0; e < x.size(); ++e) {
      const double gr = a.norm_coefficient * x[e] + g[e];
      const double vn = a.alpha * v[e] + (1 - double{a.alpha}) * gr;
      const double hn = a.beta * h[e] + (1 - double{a.beta}) * gr * gr;
      const double step = x[e] - rate * vn / (std::sqrt(hn) + a.epsilon);
      const auto k = static_cast<int64_t>(e);
      v_new.set_double(k, vn);
      h_new.set_double(k, hn);
      x_new.set_double(k, (1 - double{a.norm_coefficient_post}) * step);
    }
  }
}

void MomentumOp::reference(const Attrs& a, const KernelArgs& args) {
  const Step s(args, kinds);
  const double beta = s.count > 0 ? double{a.beta} : 1.0;
  const bool nesterov = a.mode == "nesterov";
  for (int i = 0; i < s.n; ++i) {
    const auto &x = s.at(0, i), &g = s.at(1, i), &v = s.at(2, i);
    Tensor &x_new = args.out(i), &v_new = args.out(s.n + i);
    for (size_t e = 0; e < x.size(); ++e) {
      const double gr = a.norm_coefficient * x[e] + g[e];
      const double vn = a.alpha * v[e] + beta * gr;
      const auto k = static_cast<int64_t>(e);
      v_new.set_double(k, vn);
      x_new.set_double(k, x[e] - s.rate * (nesterov ? gr + a.alpha * vn : vn));
    }
  }
}

}  // namespace tessel::ops
