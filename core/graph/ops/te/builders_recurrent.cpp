// Tensor-expression builders of RNN, GRU and LSTM (recurrent.h): the recurrence unrolled over its
// static sequence length, a few stages per time step and direction. For an LSTM step s of
// direction d (stage names lstm_7_d0_s2_xw, ...):
//
//   xw[b, row] = Σk X[t(b,s), b, k] · W[d, row, k]          one product per step (a reduction)
//   hr[b, row] = Σk H_{s-1}[b, k] · R[d, row, k]            the recurrent product (a reduction)
//   C_s[b, j]  = active ? f·C_{s-1} + i·g(...) : C_{s-1}    gates read xw, hr, B and P inline
//   H_s[b, j]  = active ? o·h(C_s) : H_{s-1}
//
// where t(b,s) is s forwards and L_b-1-s backwards, and `active` is s < L_b (L_b = sequence_lens[b],
// else T). Inactive steps hold the state, so the last step's state is Y_h; Y gathers each H_s at its
// time index and is zero beyond L_b. The state stages are written as sums over one element: a
// reduction stage is computed into its own buffer, where an element-wise one would be substituted
// into its consumers and the whole recurrence would grow into one expression per step.
// More than kMaxSteps steps (T · D) are declined: the node then runs its reference kernel.
#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/recurrent.h"
#include "core/graph/ops/te/builder_support.h"
#include "core/graph/ops/te_builders.h"

namespace tessel::ops::te_builder {

namespace {

using Index = const std::vector<Expr>&;
using ops::RecurrentActivation;
using ops::RecurrentCell;

constexpr int64_t kMaxSteps = 64;

Expr activate(const RecurrentActivation& f, const Expr& x) {
  const DataType t = x->dtype;
  const Expr zero = num(t, 0), one = num(t, 1), alpha = num(t, f.alpha), beta = num(t, f.beta);
  switch (f.kind) {
    case RecurrentActivation::kRelu:
      return loopir::max(x, zero);
    case RecurrentActivation::kTanh:
      return te::tanh(x);
    case RecurrentActivation::kSigmoid:
      return te::sigmoid(x);
    case RecurrentActivation::kAffine:
      return alpha * x + beta;
    case RecurrentActivation::kLeakyRelu:
      return te::if_then_else(loopir::lt(x, zero), alpha * x, x);
    case RecurrentActivation::kThresholdedRelu:
      return te::if_then_else(loopir::gt(x, alpha), x, zero);
    case RecurrentActivation::kScaledTanh:
      return alpha * te::tanh(beta * x);
    case RecurrentActivation::kHardSigmoid:
      return loopir::max(zero, loopir::min(one, alpha * x + beta));
    case RecurrentActivation::kElu:
      return te::if_then_else(loopir::lt(x, zero), alpha * (te::exp(x) - one), x);
    case RecurrentActivation::kSoftsign:
      return x / (te::intrinsic("abs", {x}) + one);
    case RecurrentActivation::kSoftplus:
      return te::log(te::exp(x) + one);
  }
  return x;
}

class Unroller {
 public:
  Unroller(BuildContext& c, RecurrentCell cell, const ops::RecurrentAttrs& a) : c_(c), t_(float_operand(c)) {
    std::vector<TensorType> types(c.in.size());
    OpTypes op_types;
    for (size_t i = 0; i < c.in.size(); ++i) {
      if (c.has(i)) types[i] = TensorType{c.in[i]->dtype, c.in[i]->shape};
      op_types.inputs.push_back(c.has(i) ? &types[i] : nullptr);
    }
    p_ = ops::plan_recurrent(cell, a, ops::nn::TypesContext(op_types).get());
    if (p_.seq < 1) c.unsupported("an empty sequence");
    if (p_.seq * p_.directions > kMaxSteps)
      c.unsupported(std::to_string(p_.seq * p_.directions) + " time steps (more than " + std::to_string(kMaxSteps) +
                    " are not unrolled)");
  }

  Stages build() {
    for (int64_t d = 0; d < p_.directions; ++d) {
      h_.emplace_back();
      c_state_.emplace_back();
      for (int64_t s = 0; s < p_.seq; ++s) step(d, s);
    }
    Stages outs;
    if (c_.out.size() > 0) outs.push_back(output_y());
    if (c_.out.size() > 1) outs.push_back(final_state(h_, 1, "y_h"));
    if (c_.out.size() > 2) outs.push_back(final_state(c_state_, 2, "y_c"));
    return outs;
  }

 private:
  const te::Tensor* input(size_t i) const { return c_.has(i) ? &c_.in[i] : nullptr; }
  std::string name(int64_t d, int64_t s, const char* what) const {
    return c_.stage("d" + std::to_string(d) + "_s" + std::to_string(s) + "_" + what);
  }
  Expr zero() const { return num(t_, 0); }
  Expr length(const Expr& b) const {
    return input(4) ? convert(DataType::kInt64, te::at(*input(4), {b})) : make_int(p_.seq);
  }
  // Whether step s of batch item b lies inside its sequence (always, without sequence_lens).
  Expr active(const Expr& b, int64_t s) const { return loopir::lt(make_int(s), length(b)); }
  // The time index step s of direction d reads (clamped to 0 past the end of a reversed sequence).
  Expr time_of(int64_t d, const Expr& b, int64_t s) const {
    if (!p_.backwards(d)) return make_int(s);
    if (!input(4)) return make_int(p_.seq - 1 - s);
    return loopir::max(length(b) - (s + 1), make_int(0));
  }
  // Element (d, b, j) of a [D,B,H] state, [B,D,H] batch-first.
  std::vector<Expr> state_index(int64_t d, const Expr& b, const Expr& j) const {
    return p_.batch_first ? std::vector<Expr>{b, make_int(d), j} : std::vector<Expr>{make_int(d), b, j};
  }
  // The state before step s: the previous step's, else the initial input, else zeros.
  Expr previous(const std::vector<te::Tensor>& states, size_t initial, int64_t d, int64_t s, const Expr& b,
                const Expr& j) const {
    if (s > 0) return te::at(states[static_cast<size_t>(s - 1)], {b, j});
    return input(initial) ? te::at(*input(initial), state_index(d, b, j)) : zero();
  }
  bool starts_at_zero(size_t initial, int64_t s) const { return s == 0 && !input(initial); }
  Expr bias(int64_t d, const Expr& row, bool recurrent) const {
    if (!input(3)) return zero();
    return te::at(*input(3), {make_int(d), recurrent ? row + p_.gates * p_.hidden : row});
  }
  Expr clipped(const Expr& x) const {
    if (p_.clip <= 0) return x;
    return loopir::max(loopir::min(x, num(t_, p_.clip)), num(t_, -p_.clip));
  }
  // A [B,H] stage computed into its own buffer (see the file comment).
  te::Tensor state(const std::string& stage, const std::function<Expr(const Expr& b, const Expr& j)>& f) const {
    IterVar one = te::reduce_axis(1, "one");
    return te::compute(stage, {p_.batch, p_.hidden}, [&](Index i) { return te::sum(f(i[0], i[1]), {one}); });
  }

  void step(int64_t d, int64_t s) {
    const int64_t H = p_.hidden, rows = p_.gates * H;
    const auto& act = p_.activations[static_cast<size_t>(d)];
    const te::Tensor &x = c_.in[0], &w = c_.in[1], &r = c_.in[2];
    std::vector<te::Tensor>& hs = h_[static_cast<size_t>(d)];
    std::vector<te::Tensor>& cs = c_state_[static_cast<size_t>(d)];
    auto prev_h = [&](const Expr& b, const Expr& j) { return previous(hs, 5, d, s, b, j); };
    auto prev_c = [&](const Expr& b, const Expr& j) { return previous(cs, 6, d, s, b, j); };

    IterVar kx = te::reduce_axis(p_.input, "k");
    te::Tensor xw = te::compute(name(d, s, "xw"), {p_.batch, rows}, [&](Index i) {
      const Expr t = time_of(d, i[0], s);
      std::vector<Expr> xi = p_.batch_first ? std::vector<Expr>{i[0], t, kx.var} : std::vector<Expr>{t, i[0], kx.var};
      return te::sum(te::at(x, xi) * te::at(w, {make_int(d), i[1], kx.var}), {kx});
    });
    te::Tensor hr;
    if (!starts_at_zero(5, s)) {
      IterVar kh = te::reduce_axis(H, "k");
      hr = te::compute(name(d, s, "hr"), {p_.batch, rows}, [&](Index i) {
        return te::sum(prev_h(i[0], kh.var) * te::at(r, {make_int(d), i[1], kh.var}), {kh});
      });
    }
    auto recur = [&](const Expr& b, const Expr& row) { return hr ? te::at(hr, {b, row}) : zero(); };
    // Gate `g` before its activation, less the peephole: X·W + H·R + Wb + Rb.
    auto gate = [&](int64_t g, const Expr& b, const Expr& j) {
      const Expr row = j + g * H;
      return te::at(xw, {b, row}) + recur(b, row) + bias(d, row, false) + bias(d, row, true);
    };
    auto keep_or = [&](const Expr& b, const Expr& next, const Expr& held) {
      return input(4) ? te::if_then_else(active(b, s), next, held) : next;
    };

    if (p_.cell == RecurrentCell::kRnn) {
      hs.push_back(state(name(d, s, "h"), [&](const Expr& b, const Expr& j) {
        return keep_or(b, activate(act[0], clipped(gate(0, b, j))), prev_h(b, j));
      }));
    } else if (p_.cell == RecurrentCell::kGru) {
      auto reset = [&](const Expr& b, const Expr& j) { return activate(act[0], clipped(gate(1, b, j))); };
      te::Tensor reset_h;  // Σk (r ⊙ H_{s-1})[b, k] · R_h[j, k], without linear_before_reset
      if (!p_.linear_before_reset && !starts_at_zero(5, s)) {
        IterVar k = te::reduce_axis(H, "k");
        reset_h = te::compute(name(d, s, "rh"), {p_.batch, H}, [&](Index i) {
          return te::sum(reset(i[0], k.var) * prev_h(i[0], k.var) * te::at(r, {make_int(d), i[1] + 2 * H, k.var}), {k});
        });
      }
      hs.push_back(state(name(d, s, "h"), [&](const Expr& b, const Expr& j) {
        const Expr row = j + 2 * H;
        Expr candidate;
        if (p_.linear_before_reset)
          candidate = te::at(xw, {b, row}) + bias(d, row, false) + reset(b, j) * (recur(b, row) + bias(d, row, true));
        else
          candidate = te::at(xw, {b, row}) + (reset_h ? te::at(reset_h, {b, j}) : zero()) + bias(d, row, true) +
                      bias(d, row, false);
        const Expr z = activate(act[0], clipped(gate(0, b, j)));
        const Expr next = (num(t_, 1) - z) * activate(act[1], clipped(candidate)) + z * prev_h(b, j);
        return keep_or(b, next, prev_h(b, j));
      }));
    } else {
      auto peephole = [&](int64_t g, const Expr& j) {
        return input(7) ? te::at(*input(7), {make_int(d), j + g * H}) : zero();
      };
      cs.push_back(state(name(d, s, "c"), [&](const Expr& b, const Expr& j) {
        const Expr c_prev = prev_c(b, j);
        const Expr in = activate(act[0], clipped(gate(0, b, j) + peephole(0, j) * c_prev));
        const Expr forget =
            p_.input_forget ? num(t_, 1) - in : activate(act[0], clipped(gate(2, b, j) + peephole(2, j) * c_prev));
        const Expr next = forget * c_prev + in * activate(act[1], clipped(gate(3, b, j)));
        return keep_or(b, next, c_prev);
      }));
      const te::Tensor& cell = cs.back();
      hs.push_back(state(name(d, s, "h"), [&](const Expr& b, const Expr& j) {
        const Expr c_now = te::at(cell, {b, j});
        const Expr out = activate(act[0], clipped(gate(1, b, j) + peephole(1, j) * c_now));
        return keep_or(b, out * activate(act[2], c_now), prev_h(b, j));
      }));
    }
  }

  // Y [T,D,B,H] ([B,T,D,H] batch-first): H_s of the step that visited time t, zero past the end.
  te::Tensor output_y() const {
    return te::compute(c_.stage(), c_.shape(0), [&](Index i) {
      const Expr t = p_.batch_first ? i[1] : i[0], d = p_.batch_first ? i[2] : i[1];
      const Expr b = p_.batch_first ? i[0] : i[2], j = i[3];
      Expr v = zero();
      for (int64_t dd = p_.directions - 1; dd >= 0; --dd)
        for (int64_t s = p_.seq - 1; s >= 0; --s) {
          Expr visited = loopir::eq(time_of(dd, b, s), t);
          if (input(4)) visited = loopir::logical_and(visited, active(b, s));
          if (p_.directions > 1) visited = loopir::logical_and(loopir::eq(d, make_int(dd)), visited);
          v = te::if_then_else(visited, te::at(h_[static_cast<size_t>(dd)][static_cast<size_t>(s)], {b, j}), v);
        }
      return v;
    });
  }

  // Y_h or Y_c: the state after the last step of each direction.
  te::Tensor final_state(const std::vector<std::vector<te::Tensor>>& states, size_t out, const char* what) const {
    return te::compute(c_.stage(what), c_.shape(out), [&](Index i) {
      const Expr d = p_.batch_first ? i[1] : i[0], b = p_.batch_first ? i[0] : i[1], j = i[2];
      Expr v = te::at(states.back().back(), {b, j});
      for (int64_t dd = p_.directions - 2; dd >= 0; --dd)
        v = te::if_then_else(loopir::eq(d, make_int(dd)), te::at(states[static_cast<size_t>(dd)].back(), {b, j}), v);
      return v;
    });
  }

  BuildContext& c_;
  DataType t_;
  ops::RecurrentPlan p_;
  std::vector<std::vector<te::Tensor>> h_, c_state_;  // [direction][step]
};

}  // namespace

Stages rnn(BuildContext& c) { return Unroller(c, RecurrentCell::kRnn, c.attrs<ops::RnnAttrs>()).build(); }
Stages gru(BuildContext& c) { return Unroller(c, RecurrentCell::kGru, c.attrs<ops::GruAttrs>()).build(); }
Stages lstm(BuildContext& c) { return Unroller(c, RecurrentCell::kLstm, c.attrs<ops::LstmAttrs>()).build(); }

}  // namespace tessel::ops::te_builder
