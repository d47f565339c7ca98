// RNN, GRU and LSTM: checks, shape inference and the reference kernel (recurrent.h). The kernel
// walks one batch item at a time through its own sequence length, in double, exactly as the
// equations of the ONNX specification read.
#include "core/graph/ops/recurrent.h"

#include <algorithm>
#include <cmath>

#include "core/graph/ops/nn_spatial.h"

namespace tessel::ops {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

const char* cell_name(RecurrentCell c) {
  return c == RecurrentCell::kRnn ? "RNN" : c == RecurrentCell::kGru ? "GRU" : "LSTM";
}

// Names, and how many of alpha, beta each takes with their defaults (onnxruntime's values).
struct ActivationInfo {
  const char* name;
  RecurrentActivation::Kind kind;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  float alpha, beta;
};
constexpr ActivationInfo kActivations[] = {
    {"Relu", RecurrentActivation::kRelu, 0, 0.0f, 0.0f},
    {"Tanh", RecurrentActivation::kTanh, 0, 0.0f, 0.0f},
    {"Sigmoid", RecurrentActivation::kSigmoid, 0, 0.0f, 0.0f},
    {"Affine", RecurrentActivation::kAffine, 2, 1.0f, 0.0f},
    {"LeakyRelu", RecurrentActivation::kLeakyRelu, 1, 0.01f, 0.0f},
    {"ThresholdedRelu", RecurrentActivation::kThresholdedRelu, 1, 1.0f, 0.0f},
    {"ScaledTanh", RecurrentActivation::kScaledTanh, 2, 1.0f, 1.0f},
    {"HardSigmoid", RecurrentActivation::kHardSigmoid, 2, 0.2f, 0.5f},
    {"Elu", RecurrentActivation::kElu, 1, 1.0f, 0.0f},
    {"Softsign", RecurrentActivation::kSoftsign, 0, 0.0f, 0.0f},
    {"Softplus", RecurrentActivation::kSoftplus, 0, 0.0f, 0.0f},
};

// The activations per direction: the attribute's list (k per direction, forward first), alphas and
// betas consumed in order by the functions that take them; the cell's defaults when the list is empty.
std::vector<std::vector<RecurrentActivation>> resolve_activations(RecurrentCell cell, const RecurrentAttrs& a,
                                                                  int64_t directions) {
  const char* op = cell_name(cell);
  const size_t per_direction = cell == RecurrentCell::kRnn ? 1 : cell == RecurrentCell::kGru ? 2 : 3;
  std::vector<std::string> names = a.activations;
  if (names.empty()) {
    const std::vector<std::string> defaults = cell == RecurrentCell::kRnn ? std::vector<std::string>{"Tanh"}
                                              : cell == RecurrentCell::kGru
                                                  ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                  : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != per_direction * static_cast<size_t>(directions))
    throw Error(std::string(op) + ": activations has " + s(static_cast<int64_t>(names.size())) + " names; " +
                s(static_cast<int64_t>(per_direction)) + " per direction, " + s(directions) +
                (directions == 1 ? " direction" : " directions") + " need " +
                s(static_cast<int64_t>(per_direction) * directions));
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<RecurrentActivation>> out(static_cast<size_t>(directions));
  for (size_t k = 0; k < names.size(); ++k) {
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& candidate : kActivations)
      if (names[k] == candidate.name) info = &candidate;
    if (!info) {
      std::string known;
      for (const ActivationInfo& candidate : kActivations)
        known += (known.empty() ? "" : ", ") + std::string(candidate.name);
      throw Error(std::string(op) + ": unknown activation '" + names[k] + "' (known: " + known + ")");
    }
    RecurrentActivation act{info->kind, info->alpha, info->beta};
    if (info->params >= 1 && next_alpha < a.activation_alpha.size()) act.alpha = a.activation_alpha[next_alpha++];
    if (info->params >= 2 && next_beta < a.activation_beta.size()) act.beta = a.activation_beta[next_beta++];
    out[k / per_direction].push_back(act);
  }
  return out;
}

void require_shape(const char* op, const char* what, const TensorType& t, const Shape& expected) {
  if (t.shape != expected)
    throw Error(std::string(op) + ": " + what + " has shape " + shape_str(t.shape) + ", expected " +
                shape_str(expected));
}

void require_same_dtype(const char* op, const char* what, const TensorType& t, DataType expected) {
  if (t.dtype != expected)
    throw Error(std::string(op) + ": " + what + " has dtype " + std::string(dtype_name(t.dtype)) + ", X has " +
                std::string(dtype_name(expected)));
}

// A [D,B,H] state, or [B,D,H] batch-first.
Shape state_shape(const RecurrentPlan& p) {
  return p.batch_first ? Shape{p.batch, p.directions, p.hidden} : Shape{p.directions, p.batch, p.hidden};
}

// Flat offset of state element (d, b, j).
int64_t state_at(const RecurrentPlan& p, int64_t d, int64_t b, int64_t j) {
  return p.batch_first ? (b * p.directions + d) * p.hidden + j : (d * p.batch + b) * p.hidden + j;
}

}  // namespace

double RecurrentActivation::apply(double x) const {
  const double al = alpha, be = beta;
  switch (kind) {
    case kRelu:
      return x < 0 ? 0.0 : x;
    case kTanh:
      return std::tanh(x);
    case kSigmoid:
      return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
    case kAffine:
      return al * x + be;
    case kLeakyRelu:
      return x < 0 ? al * x : x;
    case kThresholdedRelu:
      return x > al ? x : 0.0;
    case kScaledTanh:
      return al * std::tanh(be * x);
    case kHardSigmoid:
      return std::max(0.0, std::min(1.0, al * x + be));
    case kElu:
      return x < 0 ? al * (std::exp(x) - 1.0) : x;
    case kSoftsign:
      return x / (1.0 + std::abs(x));
    case kSoftplus:
      return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

RecurrentPlan plan_recurrent(RecurrentCell cell, const RecurrentAttrs& a, const InferContext& ctx) {
  const char* op = cell_name(cell);
  RecurrentPlan p;
  p.cell = cell;
  p.gates = cell == RecurrentCell::kRnn ? 1 : cell == RecurrentCell::kGru ? 3 : 4;
  p.directions = a.direction == "bidirectional" ? 2 : 1;
  p.reverse_only = a.direction == "reverse";
  p.batch_first = a.layout == 1;
  p.clip = a.clip;
  p.input_forget = cell == RecurrentCell::kLstm && a.input_forget != 0;
  p.linear_before_reset = cell == RecurrentCell::kGru && a.linear_before_reset != 0;

  const TensorType& x = ctx.input(0);
  nn::require_dtype(op, "X", x.dtype, nn::kFloatTypes);
  if (x.shape.size() != 3)
    throw Error(std::string(op) + ": X must have rank 3 " + (p.batch_first ? "[B,T,I]" : "[T,B,I]") + ", it has " +
                shape_str(x.shape));
  p.seq = x.shape[p.batch_first ? 1 : 0];
  p.batch = x.shape[p.batch_first ? 0 : 1];
  p.input = x.shape[2];

  const TensorType& r = ctx.input(2);
  require_same_dtype(op, "R", r, x.dtype);
  if (r.shape.size() != 3)
    throw Error(std::string(op) + ": R must have rank 3 [D,G·H,H], it has " + shape_str(r.shape));
  p.hidden = a.hidden_size > 0 ? a.hidden_size : r.shape[2];
  const int64_t gh = p.gates * p.hidden;
  require_shape(op, "R", r, {p.directions, gh, p.hidden});
  require_same_dtype(op, "W", ctx.input(1), x.dtype);
  require_shape(op, "W", ctx.input(1), {p.directions, gh, p.input});
  if (ctx.has_input(3)) {
    require_same_dtype(op, "B", ctx.input(3), x.dtype);
    require_shape(op, "B", ctx.input(3), {p.directions, 2 * gh});
  }
  if (ctx.has_input(4)) {
    const TensorType& lens = ctx.input(4);
    if (lens.dtype != DataType::kInt32)
      throw Error(std::string(op) + ": sequence_lens has dtype " + std::string(dtype_name(lens.dtype)) +
                  "; allowed: i32");
    require_shape(op, "sequence_lens", lens, {p.batch});
  }
  for (int i : {5, 6}) {
    if (i == 6 && cell != RecurrentCell::kLstm) break;
    if (!ctx.has_input(i)) continue;
    const char* what = i == 5 ? "initial_h" : "initial_c";
    require_same_dtype(op, what, ctx.input(i), x.dtype);
    require_shape(op, what, ctx.input(i), state_shape(p));
  }
  if (cell == RecurrentCell::kLstm && ctx.has_input(7)) {
    require_same_dtype(op, "P", ctx.input(7), x.dtype);
    require_shape(op, "P", ctx.input(7), {p.directions, 3 * p.hidden});
  }
  p.activations = resolve_activations(cell, a, p.directions);
  return p;
}

template <RecurrentCell kCell, class A>
void RecurrentOp<kCell, A>::infer(const Attrs& a, InferContext& ctx) {
  const RecurrentPlan p = plan_recurrent(kCell, a, ctx);
  const DataType t = ctx.input(0).dtype;
  const Shape y =
      p.batch_first ? Shape{p.batch, p.seq, p.directions, p.hidden} : Shape{p.seq, p.directions, p.batch, p.hidden};
  for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, t, k == 0 ? y : state_shape(p));
}

template <RecurrentCell kCell, class A>
void RecurrentOp<kCell, A>::reference(const Attrs& a, const KernelArgs& args) {
  const RecurrentPlan p = plan_recurrent(kCell, a, nn::TypesContext(args).get());
  const int64_t H = p.hidden, I = p.input, G = p.gates, T = p.seq;
  const std::vector<double> x = nn::to_doubles(args.in(0)), w = nn::to_doubles(args.in(1)),
                            r = nn::to_doubles(args.in(2));
  const std::vector<double> bias = args.has(3) ? nn::to_doubles(args.in(3)) : std::vector<double>();
  const std::vector<int64_t> lens = args.has(4) ? args.in(4).to_int64s() : std::vector<int64_t>();
  const std::vector<double> h0 = args.has(5) ? nn::to_doubles(args.in(5)) : std::vector<double>();
  const std::vector<double> c0 = args.has(6) ? nn::to_doubles(args.in(6)) : std::vector<double>();
  const std::vector<double> peep = args.has(7) ? nn::to_doubles(args.in(7)) : std::vector<double>();
  const int num_outputs = static_cast<int>(args.outputs->size());

  std::vector<double> y(static_cast<size_t>(T * p.directions * p.batch * H), 0.0);
  std::vector<double> y_h(static_cast<size_t>(p.directions * p.batch * H), 0.0), y_c = y_h;
  auto y_at = [&](int64_t t, int64_t d, int64_t b, int64_t j) {
    return p.batch_first ? ((b * T + t) * p.directions + d) * H + j : ((t * p.directions + d) * p.batch + b) * H + j;
  };
  auto x_at = [&](int64_t t, int64_t b, int64_t k) {
    return p.batch_first ? (b * T + t) * I + k : (t * p.batch + b) * I + k;
  };
  auto clipped = [&](double v) { return p.clip > 0 ? std::clamp(v, -double{p.clip}, double{p.clip}) : v; };

  for (int64_t d = 0; d < p.directions; ++d) {
    const double* wd = w.data() + d * G * H * I;
    const double* rd = r.data() + d * G * H * H;
    const std::vector<RecurrentActivation>& act = p.activations[static_cast<size_t>(d)];
    // Wb[g·H + j] + Rb[g·H + j] (the two halves of B), or zero.
    auto wb = [&](int64_t row) { return bias.empty() ? 0.0 : bias[static_cast<size_t>(d * 2 * G * H + row)]; };
    auto rb = [&](int64_t row) { return bias.empty() ? 0.0 : bias[static_cast<size_t>(d * 2 * G * H + G * H + row)]; };
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = lens.empty() ? T : lens[static_cast<size_t>(b)];
      if (len < 0 || len > T)
        throw Error(std::string(cell_name(kCell)) + ": sequence_lens[" + s(b) + "] = " + s(len) + " is outside [0, " +
                    s(T) + "]");
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H), 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (!h0.empty()) h[j] = h0[static_cast<size_t>(state_at(p, d, b, j))];
        if (!c0.empty()) c[j] = c0[static_cast<size_t>(state_at(p, d, b, j))];
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = p.backwards(d) ? len - 1 - step : step;
        // xw[row] = X_t · W[row], hr[row] = H_{t-1} · R[row] for every gate row.
        std::vector<double> xw(static_cast<size_t>(G * H), 0.0), hr(static_cast<size_t>(G * H), 0.0);
        for (int64_t row = 0; row < G * H; ++row) {
          for (int64_t k = 0; k < I; ++k) xw[row] += x[static_cast<size_t>(x_at(t, b, k))] * wd[row * I + k];
          for (int64_t k = 0; k < H; ++k) hr[row] += h[k] * rd[row * H + k];
        }
        std::vector<double> next(static_cast<size_t>(H));
        if (kCell == RecurrentCell::kRnn) {
          for (int64_t j = 0; j < H; ++j) next[j] = act[0].apply(clipped(xw[j] + hr[j] + wb(j) + rb(j)));
        } else if (kCell == RecurrentCell::kGru) {
          // Rows: z [0,H), r [H,2H), h [2H,3H).
          std::vector<double> reset(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j)
            reset[j] = act[0].apply(clipped(xw[H + j] + hr[H + j] + wb(H + j) + rb(H + j)));
          for (int64_t j = 0; j < H; ++j) {
            const double z = act[0].apply(clipped(xw[j] + hr[j] + wb(j) + rb(j)));
            double recur = 0;
            if (p.linear_before_reset) {
              recur = reset[j] * (hr[2 * H + j] + rb(2 * H + j));
            } else {
              for (int64_t k = 0; k < H; ++k) recur += reset[k] * h[k] * rd[(2 * H + j) * H + k];
              recur += rb(2 * H + j);
            }
            const double cand = act[1].apply(clipped(xw[2 * H + j] + recur + wb(2 * H + j)));
            next[j] = (1.0 - z) * cand + z * h[j];
          }
        } else {
          // Rows: i [0,H), o [H,2H), f [2H,3H), c [3H,4H); peepholes P: i, o, f.
          auto pe = [&](int64_t gate, int64_t j) {
            return peep.empty() ? 0.0 : peep[static_cast<size_t>(d * 3 * H + gate * H + j)];
          };
          auto pre = [&](int64_t gate, int64_t j) {
            return xw[gate * H + j] + hr[gate * H + j] + wb(gate * H + j) + rb(gate * H + j);
          };
          for (int64_t j = 0; j < H; ++j) {
            const double in = act[0].apply(clipped(pre(0, j) + pe(0, j) * c[j]));
            const double forget = p.input_forget ? 1.0 - in : act[0].apply(clipped(pre(2, j) + pe(2, j) * c[j]));
            const double cand = act[1].apply(clipped(pre(3, j)));
            c[j] = forget * c[j] + in * cand;
            const double out = act[0].apply(clipped(pre(1, j) + pe(1, j) * c[j]));
            next[j] = out * act[2].apply(c[j]);
          }
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) y[static_cast<size_t>(y_at(t, d, b, j))] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        y_h[static_cast<size_t>(state_at(p, d, b, j))] = h[j];
        y_c[static_cast<size_t>(state_at(p, d, b, j))] = c[j];
      }
    }
  }
  if (num_outputs > 0) nn::store_doubles(args.out(0), y);
  if (num_outputs > 1) nn::store_doubles(args.out(1), y_h);
  if (num_outputs > 2) nn::store_doubles(args.out(2), y_c);
}

template <RecurrentCell kCell, class A>
int64_t RecurrentOp<kCell, A>::flops(const Attrs& a, const OpTypes& t) {
  try {
    const RecurrentPlan p = plan_recurrent(kCell, a, nn::TypesContext(t).get());
    // Per step and direction: the two products, then a few operations per gate element.
    const int64_t rows = p.gates * p.hidden;
    return p.seq * p.directions * p.batch * (2 * rows * (p.input + p.hidden) + 8 * rows);
  } catch (const Error&) {
    return 0;
  }
}

template struct RecurrentOp<RecurrentCell::kRnn, RnnAttrs>;
template struct RecurrentOp<RecurrentCell::kGru, GruAttrs>;
template struct RecurrentOp<RecurrentCell::kLstm, LstmAttrs>;

}  // namespace tessel::ops
