// Inference and reference kernels of Einsum, Det and the window functions (math_ops.h).
#include "core/graph/ops/math_ops.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numbers>

#include "core/graph/ops/elementwise_support.h"

namespace tessel::ops {

// ---------------------------------------------------------------- Einsum

namespace {

std::string without_spaces(const std::string& s) {
  std::string out;
  for (char ch : s)
    if (ch != ' ') out += ch;
  return out;
}

std::vector<std::string> split_terms(const std::string& s) {
  std::vector<std::string> out(1);
  for (char ch : s) {
    if (ch == ',')
      out.emplace_back();
    else
      out.back() += ch;
  }
  return out;
}

// A term's letters, with -1 where its ellipsis stands.
std::vector<int> term_letters(const std::string& term, const std::string& equation) {
  std::vector<int> out;
  bool ellipsis = false;
  for (size_t k = 0; k < term.size(); ++k) {
    if (term.compare(k, 3, "...") == 0) {
      if (ellipsis) throw Error("Einsum: a term of '" + equation + "' has two ellipses");
      ellipsis = true;
      out.push_back(-1);
      k += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[k]))) {
      out.push_back(static_cast<unsigned char>(term[k]));
    } else {
      throw Error("Einsum: unexpected character '" + std::string(1, term[k]) + "' in equation '" + equation + "'");
    }
  }
  return out;
}

}  // namespace

EinsumPlan plan_einsum(const std::string& raw, const std::vector<Shape>& inputs) {
  const std::string eq = without_spaces(raw);
  const size_t arrow = eq.find("->");
  const std::vector<std::string> terms = split_terms(eq.substr(0, arrow));
  if (terms.size() != inputs.size())
    throw Error("Einsum: the equation '" + raw + "' names " + std::to_string(terms.size()) +
                " operands, the node has " + std::to_string(inputs.size()));
  EinsumPlan plan;
  std::map<int, int> label_of;  // letter -> label
  std::map<int, int> count;     // letter -> occurrences in the inputs
  int ellipsis_rank = 0;
  std::vector<std::vector<int>> letters;
  for (size_t i = 0; i < terms.size(); ++i) {
    letters.push_back(term_letters(terms[i], raw));
    int named = 0;
    bool has_ellipsis = false;
    for (int l : letters.back()) {
      if (l < 0)
        has_ellipsis = true;
      else
        ++named;
    }
    const int rank = static_cast<int>(inputs[i].size());
    if (has_ellipsis ? rank < named : rank != named)
      throw Error("Einsum: operand " + std::to_string(i) + " has rank " + std::to_string(rank) +
                  ", the equation gives it " + std::to_string(named) + " labels");
    if (has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - named);
  }
  // The ellipsis axes come first as labels 0..e-1 (right-aligned across operands), letters after.
  plan.extents.assign(static_cast<size_t>(ellipsis_rank), 1);
  auto set_extent = [&](int label, int64_t extent, size_t operand) {
    int64_t& e = plan.extents[static_cast<size_t>(label)];
    if (e == 1 || extent == e)
      e = std::max(e, extent);
    else if (extent != 1)
      throw Error("Einsum: operand " + std::to_string(operand) + " has extent " + std::to_string(extent) +
                  " where another has " + std::to_string(e));
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape& s = inputs[i];
    const int named =
        static_cast<int>(std::count_if(letters[i].begin(), letters[i].end(), [](int l) { return l >= 0; }));
    const int spread = static_cast<int>(s.size()) - named;
    std::vector<int> labels;
    for (int l : letters[i]) {
      if (l < 0) {
        for (int k = 0; k < spread; ++k) labels.push_back(ellipsis_rank - spread + k);
        continue;
      }
      ++count[l];
      if (!label_of.count(l)) {
        label_of[l] = static_cast<int>(plan.extents.size());
        plan.extents.push_back(1);
      }
      labels.push_back(label_of[l]);
    }
    for (size_t k = 0; k < labels.size(); ++k) set_extent(labels[k], s[k], i);
    plan.input_labels.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    for (int l : term_letters(eq.substr(arrow + 2), raw)) {
      if (l < 0) {
        for (int k = 0; k < ellipsis_rank; ++k) plan.output_labels.push_back(k);
        continue;
      }
      if (!label_of.count(l))
        throw Error("Einsum: output label '" + std::string(1, static_cast<char>(l)) + "' appears in no operand");
      plan.output_labels.push_back(label_of[l]);
    }
  } else {  // implicit: the ellipsis, then the letters used once, alphabetically
    for (int k = 0; k < ellipsis_rank; ++k) plan.output_labels.push_back(k);
    for (const auto& [l, n] : count)
      if (n == 1) plan.output_labels.push_back(label_of[l]);
  }
  for (int l = 0; l < static_cast<int>(plan.extents.size()); ++l)
    if (std::find(plan.output_labels.begin(), plan.output_labels.end(), l) == plan.output_labels.end())
      plan.summed_labels.push_back(l);
  return plan;
}

namespace {
std::vector<Shape> input_shapes(const InferContext& ctx) {
  std::vector<Shape> s;
  for (int i = 0; i < ctx.num_inputs(); ++i) s.push_back(ctx.input(i).shape);
  return s;
}
}  // namespace

void EinsumOp::infer(const Attrs& a, InferContext& ctx) {
  const DataType t = ctx.input(0).dtype;
  require_dtype("Einsum", "input 0", t, kNumericTypes);
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.input(i).dtype != t)
      throw Error("Einsum: input " + std::to_string(i) + " has dtype " + std::string(dtype_name(ctx.input(i).dtype)) +
                  ", input 0 has " + std::string(dtype_name(t)));
  const EinsumPlan plan = plan_einsum(a.equation, input_shapes(ctx));
  Shape out;
  for (int l : plan.output_labels) out.push_back(plan.extents[static_cast<size_t>(l)]);
  ctx.set_output(0, t, out);
}

void EinsumOp::reference(const Attrs& a, const KernelArgs& args) {
  std::vector<Shape> shapes;
  std::vector<std::vector<double>> values;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const Tensor& x = args.in(static_cast<int>(i));
    shapes.push_back(x.shape());
    std::vector<double> v(static_cast<size_t>(x.numel()));
    for (int64_t e = 0; e < x.numel(); ++e) v[static_cast<size_t>(e)] = x.get_double(e);
    values.push_back(std::move(v));
  }
  const EinsumPlan plan = plan_einsum(a.equation, shapes);
  Tensor& y = args.out(0);
  std::vector<int64_t> at(plan.extents.size(), 0);  // the current value of every label
  std::vector<int> order = plan.output_labels;      // visit output labels, then summed ones
  order.insert(order.end(), plan.summed_labels.begin(), plan.summed_labels.end());
  int64_t total = 1;
  for (int l : order) total *= plan.extents[static_cast<size_t>(l)];
  std::vector<double> out(static_cast<size_t>(y.numel()), 0.0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t rest = n;
    for (size_t k = order.size(); k-- > 0;) {
      const int64_t e = plan.extents[static_cast<size_t>(order[k])];
      at[static_cast<size_t>(order[k])] = rest % e;
      rest /= e;
    }
    double product = 1.0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      int64_t offset = 0;
      for (size_t k = 0; k < shapes[i].size(); ++k)
        offset = offset * shapes[i][k] + (shapes[i][k] == 1 ? 0 : at[static_cast<size_t>(plan.input_labels[i][k])]);
      product *= values[i][static_cast<size_t>(offset)];
    }
    int64_t o = 0;
    for (int l : plan.output_labels) o = o * plan.extents[static_cast<size_t>(l)] + at[static_cast<size_t>(l)];
    out[static_cast<size_t>(o)] += product;
  }
  for (int64_t e = 0; e < y.numel(); ++e) y.set_double(e, out[static_cast<size_t>(e)]);
}

int64_t EinsumOp::flops(const Attrs& a, const OpTypes& t) {
  std::vector<Shape> shapes;
  for (const TensorType* in : t.inputs)
    if (in) shapes.push_back(in->shape);
  try {
    const EinsumPlan plan = plan_einsum(a.equation, shapes);
    int64_t n = 1;
    for (int64_t e : plan.extents) n *= e;
    return n * static_cast<int64_t>(shapes.size());  // the multiplications and the addition
  } catch (const Error&) {
    return 0;
  }
}

// ---------------------------------------------------------------- Det

void DetOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype("Det", "input 0", x.dtype, kFloatTypes);
  const size_t r = x.shape.size();
  if (r < 2 || x.shape[r - 1] != x.shape[r - 2])
    throw Error("Det: the input must end in square matrices [..., M, M], it has shape " + shape_str(x.shape));
  ctx.set_output(0, x.dtype, Shape(x.shape.begin(), x.shape.end() - 2));
}

void DetOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const int64_t m = x.shape().back();
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < y.numel(); ++b) {
    for (int64_t e = 0; e < m * m; ++e) a[static_cast<size_t>(e)] = x.get_double(b * m * m + e);
    auto el = [&](int64_t i, int64_t j) -> double& { return a[static_cast<size_t>(i * m + j)]; };
    double det = 1.0;
    for (int64_t col = 0; col < m; ++col) {
      int64_t pivot = col;
      for (int64_t i = col + 1; i < m; ++i)
        if (std::fabs(el(i, col)) > std::fabs(el(pivot, col))) pivot = i;
      if (el(pivot, col) == 0.0) {
        det = 0.0;
        break;
      }
      if (pivot != col) {
        for (int64_t j = 0; j < m; ++j) std::swap(el(pivot, j), el(col, j));
        det = -det;
      }
      det *= el(col, col);
      for (int64_t i = col + 1; i < m; ++i) {
        const double f = el(i, col) / el(col, col);
        for (int64_t j = col; j < m; ++j) el(i, j) -= f * el(col, j);
      }
    }
    y.set_double(b, det);
  }
}

int64_t DetOp::flops(const Attrs&, const OpTypes& t) {
  if (!t.inputs[0]) return 0;
  const Shape& s = t.inputs[0]->shape;
  const int64_t m = s.back();
  return shape_numel(s) / std::max<int64_t>(m * m, 1) * (2 * m * m * m / 3);
}

// ---------------------------------------------------------------- windows

template <class Kind>
void WindowOp<Kind>::infer(const Attrs& a, InferContext& ctx) {
  const Tensor& size = ctx.require_value(0, "size");
  if (size.numel() != 1) throw Error(std::string(Kind::name) + ": size must be a scalar");
  const int64_t n = size.to_int64s()[0];
  if (n < 0) throw Error(std::string(Kind::name) + ": size " + std::to_string(n) + " is negative");
  ctx.set_output(0, dtype_from_onnx(a.output_datatype), {n});
}

template <class Kind>
void WindowOp<Kind>::reference(const Attrs& a, const KernelArgs& args) {
  Tensor& y = args.out(0);
  const int64_t n = y.numel();
  const double d = static_cast<double>(a.periodic ? n : n - 1);
  const WindowCoefficients w = Kind::coefficients;
  for (int64_t i = 0; i < n; ++i) {
    const double phase = d == 0 ? 0.0 : 2.0 * std::numbers::pi * static_cast<double>(i) / d;
    y.set_double(i, w.a0 - w.a1 * std::cos(phase) + w.a2 * std::cos(2.0 * phase));
  }
}

template struct WindowOp<HannKind>;
template struct WindowOp<HammingKind>;
template struct WindowOp<BlackmanKind>;

// ---------------------------------------------------------------- DFT

DFTPlan plan_dft(const DFTAttrs& a, const Shape& input, const Tensor* dft_length) {
  const int64_t rank = static_cast<int64_t>(input.size());
  if (rank < 2 || (input.back() != 1 && input.back() != 2))
    throw Error("DFT: the input must end in an axis of 1 (real) or 2 (complex), it has shape " + shape_str(input));
  DFTPlan p;
  p.axis = a.axis < 0 ? a.axis + rank : a.axis;
  if (p.axis < 0 || p.axis >= rank - 1)
    throw Error("DFT: axis " + std::to_string(a.axis) + " is out of range for input " + shape_str(input));
  p.length = input[p.axis];
  if (dft_length) {
    if (dft_length->numel() != 1) throw Error("DFT: dft_length must be a scalar");
    p.length = dft_length->to_int64s()[0];
    if (p.length < 1) throw Error("DFT: dft_length " + std::to_string(p.length) + " must be positive");
  }
  if (a.onesided && a.inverse) throw Error("DFT: onesided is defined for the forward transform only");
  p.out_length = a.onesided ? p.length / 2 + 1 : p.length;
  return p;
}

void DFTOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  require_dtype("DFT", "input 0", x.dtype, kFloatTypes);
  const DFTPlan p = plan_dft(a, x.shape, ctx.has_input(1) ? &ctx.require_value(1, "dft_length") : nullptr);
  Shape out = x.shape;
  out[p.axis] = p.out_length;
  out.back() = 2;
  ctx.set_output(0, x.dtype, out);
}

void DFTOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  const DFTPlan p = plan_dft(a, x.shape(), args.has(1) ? &args.in(1) : nullptr);
  const Shape& s = x.shape();
  const int64_t parts = s.back(), n_in = s[p.axis];
  int64_t outer = 1, inner = 1;  // around the signal axis, without the last one
  for (int64_t k = 0; k < p.axis; ++k) outer *= s[k];
  for (int64_t k = p.axis + 1; k < static_cast<int64_t>(s.size()) - 1; ++k) inner *= s[k];
  const int64_t used = std::min(n_in, p.length);
  const double sign = a.inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in)
      for (int64_t k = 0; k < p.out_length; ++k) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < used; ++j) {
          const int64_t at = ((o * n_in + j) * inner + in) * parts;
          const double xr = x.get_double(at), xi = parts == 2 ? x.get_double(at + 1) : 0.0;
          const double theta =
              sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % p.length) / static_cast<double>(p.length);
          re += xr * std::cos(theta) - xi * std::sin(theta);
          im += xr * std::sin(theta) + xi * std::cos(theta);
        }
        if (a.inverse) {
          re /= static_cast<double>(p.length);
          im /= static_cast<double>(p.length);
        }
        const int64_t to = ((o * p.out_length + k) * inner + in) * 2;
        y.set_double(to, re);
        y.set_double(to + 1, im);
      }
}

int64_t DFTOp::flops(const Attrs& a, const OpTypes& t) {
  if (!t.inputs[0] || t.outputs.empty()) return 0;
  const Shape& in = t.inputs[0]->shape;
  const int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(in.size()) : a.axis;
  if (axis < 0 || axis >= static_cast<int64_t>(in.size())) return 0;
  return 4 * shape_numel(t.outputs[0].shape) * in[axis];  // a complex multiply-add per tap and output
}

}  // namespace tessel::ops
