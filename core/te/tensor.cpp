#include "core/te/tensor.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>
#include <sstream>

#include "core/loopir/functor.h"
#include "core/loopir/printer.h"
#include "core/support/error.h"

namespace tessel::te {
using namespace loopir;

namespace {
// Tensors read while a compute body is being built: `at` records them, `compute` collects them.
thread_local std::vector<Tensor>* g_reads = nullptr;
std::atomic<uint64_t> g_serial{0};

// The buffers a body loads, in the order a left-to-right walk of the expression meets them.
class LoadOrder : public IRVisitor {
 public:
  std::vector<const BufferNode*> buffers;

 protected:
  bool enter(const Load& n) override {
    buffers.push_back(n.buffer.get());
    return true;
  }
};

// The tensors `reads` recorded, once each, in the order the finished body reads them. The order
// `at` ran in is the C++ compiler's: `A(i) * B(j)` evaluates its operands in an unspecified order
// (GCC builds read B first, clang builds A), which moved op->inputs, the DAG's op order, its print
// and kernel keys between builds. A tensor read while building but absent from the body (an
// expression built and dropped) keeps its place after those the body reads.
std::vector<Tensor> inputs_in_body_order(const Expr& body, const std::vector<Tensor>& reads) {
  LoadOrder order;
  order.visit(body);
  std::vector<Tensor> inputs;
  std::set<const OperationNode*> seen;
  auto add = [&](const Tensor& t) {
    if (seen.insert(t.get()).second) inputs.push_back(t);
  };
  for (const BufferNode* b : order.buffers)
    for (const Tensor& t : reads)
      if (t->buffer.get() == b) add(t);
  for (const Tensor& t : reads) add(t);
  return inputs;
}
}  // namespace

Tensor placeholder(std::string name, Shape shape, DataType dtype) {
  auto op = std::make_shared<OperationNode>();
  op->name = std::move(name);
  op->dtype = dtype;
  op->shape = std::move(shape);
  op->is_placeholder = true;
  op->serial = ++g_serial;
  op->buffer = make_buffer(op->name, dtype, op->shape);
  return op;
}

Tensor compute(std::string name, Shape shape, const std::function<Expr(const std::vector<Expr>&)>& f,
               std::vector<std::string> axis_names) {
  auto op = std::make_shared<OperationNode>();
  op->name = std::move(name);
  op->shape = std::move(shape);
  op->serial = ++g_serial;
  std::vector<Expr> indices;
  for (size_t d = 0; d < op->shape.size(); ++d) {
    std::string n = d < axis_names.size() ? axis_names[d] : "i" + std::to_string(d);
    IterVar iv{make_var(n), op->shape[d]};
    op->axes.push_back(iv);
    indices.push_back(iv.var);
  }
  std::vector<Tensor> reads;
  std::vector<Tensor>* saved = g_reads;
  g_reads = &reads;
  try {
    op->body = f(indices);
  } catch (...) {
    g_reads = saved;
    throw;
  }
  g_reads = saved;
  op->inputs = inputs_in_body_order(op->body, reads);
  op->dtype = op->body->dtype;
  op->buffer = make_buffer(op->name, op->dtype, op->shape);
  return op;
}

Tensor with_body(const Tensor& op, Expr body, std::vector<Tensor> inputs) {
  auto copy = std::make_shared<OperationNode>(*op);
  copy->body = std::move(body);
  copy->inputs = std::move(inputs);
  return copy;
}

Expr at(const Tensor& t, std::vector<Expr> indices) {
  if (indices.size() != t->shape.size())
    throw Error("tensor expression: " + t->name + " has rank " + std::to_string(t->shape.size()) +
                " but is read with " + std::to_string(indices.size()) + " indices");
  if (g_reads) g_reads->push_back(t);
  return make_load(t->buffer, std::move(indices));
}

IterVar reduce_axis(int64_t extent, std::string name) {
  if (extent < 1)
    throw Error("tensor expression: reduce axis " + name + " needs an extent >= 1, got " + std::to_string(extent));
  return IterVar{make_var(std::move(name)), extent};
}

Reducer make_reducer(std::string name, DataType dtype, const std::function<Expr(Expr, Expr)>& combine, Expr identity) {
  auto r = std::make_shared<CommReducer>();
  r->name = std::move(name);
  r->lhs = make_var("lhs", dtype);
  r->rhs = make_var("rhs", dtype);
  r->combine = combine(r->lhs, r->rhs);
  r->identity = std::move(identity);
  return r;
}

Expr reduce(const Reducer& r, Expr source, std::vector<IterVar> axes) {
  if (axes.empty()) throw Error("tensor expression: reduction '" + r->name + "' needs at least one axis");
  return make_reduce(r, std::move(source), std::move(axes));
}

namespace {
Reducer standard_reducer(const std::string& name, DataType t) {
  double inf = std::numeric_limits<double>::infinity();
  if (name == "sum")
    return make_reducer(
        "sum", t, [](Expr a, Expr b) { return a + b; }, make_const(t, 0));
  if (name == "max") {
    double lowest = dtype_is_float(t) ? -inf : static_cast<double>(std::numeric_limits<int32_t>::min());
    return make_reducer(
        "max", t, [](Expr a, Expr b) { return loopir::max(a, b); }, make_const(t, lowest));
  }
  double highest = dtype_is_float(t) ? inf : static_cast<double>(std::numeric_limits<int32_t>::max());
  return make_reducer(
      "min", t, [](Expr a, Expr b) { return loopir::min(a, b); }, make_const(t, highest));
}
}  // namespace

Expr sum(Expr source, std::vector<IterVar> axes) {
  DataType t = source->dtype;
  return reduce(standard_reducer("sum", t), std::move(source), std::move(axes));
}
Expr max_reduce(Expr source, std::vector<IterVar> axes) {
  DataType t = source->dtype;
  return reduce(standard_reducer("max", t), std::move(source), std::move(axes));
}
Expr min_reduce(Expr source, std::vector<IterVar> axes) {
  DataType t = source->dtype;
  return reduce(standard_reducer("min", t), std::move(source), std::move(axes));
}

Expr if_then_else(Expr cond, Expr t, Expr f) { return make_select(std::move(cond), std::move(t), std::move(f)); }
Expr cast(DataType t, Expr v) { return make_cast(t, std::move(v)); }
Expr float_const(double v, DataType t) { return make_float(v, t); }

Expr intrinsic(std::string name, std::vector<Expr> args) {
  static const std::set<std::string> known = {"exp",  "log",  "sqrt", "rsqrt", "tanh",  "erf",  "sigmoid", "pow",
                                              "fma",  "abs",  "fmod", "sin",   "cos",   "tan",  "asin",    "acos",
                                              "atan", "sinh", "cosh", "asinh", "acosh", "atanh"};
  if (!known.count(name))
    throw Error("tensor expression: unknown intrinsic '" + name +
                "' (known: exp, log, sqrt, rsqrt, tanh, erf, sigmoid, pow, fma, abs, fmod and the trigonometric and "
                "hyperbolic functions with their inverses)");
  if (args.empty()) throw Error("tensor expression: intrinsic '" + name + "' needs arguments");
  DataType t = args[0]->dtype;
  return make_call(std::move(name), std::move(args), t);
}
Expr exp(Expr x) { return intrinsic("exp", {std::move(x)}); }
Expr log(Expr x) { return intrinsic("log", {std::move(x)}); }
Expr sqrt(Expr x) { return intrinsic("sqrt", {std::move(x)}); }
Expr tanh(Expr x) { return intrinsic("tanh", {std::move(x)}); }
Expr erf(Expr x) { return intrinsic("erf", {std::move(x)}); }
Expr sigmoid(Expr x) { return intrinsic("sigmoid", {std::move(x)}); }
Expr pow(Expr x, Expr y) { return intrinsic("pow", {std::move(x), std::move(y)}); }

std::vector<Tensor> ComputeDag::inputs() const {
  std::vector<Tensor> out;
  for (auto& t : ops)
    if (t->is_placeholder) out.push_back(t);
  return out;
}

const Tensor* ComputeDag::find(const std::string& name) const {
  for (auto& t : ops)
    if (t->name == name) return &t;
  return nullptr;
}

ComputeDag make_dag(std::string name, std::vector<Tensor> outputs) {
  ComputeDag dag;
  dag.name = std::move(name);
  dag.outputs = outputs;
  std::set<const OperationNode*> visited;
  std::set<std::string> names;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (!visited.insert(t.get()).second) return;
    for (auto& in : t->inputs) visit(in);
    if (!names.insert(t->name).second)
      throw Error("compute DAG " + dag.name + ": two tensors are named '" + t->name + "'");
    dag.ops.push_back(t);
  };
  for (auto& o : outputs) visit(o);
  // Placeholders first, in creation order (C++ leaves the order of reads in `a * b` unspecified).
  std::stable_partition(dag.ops.begin(), dag.ops.end(), [](const Tensor& t) { return t->is_placeholder; });
  auto last_input = std::find_if(dag.ops.begin(), dag.ops.end(), [](const Tensor& t) { return !t->is_placeholder; });
  std::sort(dag.ops.begin(), last_input, [](const Tensor& a, const Tensor& b) { return a->serial < b->serial; });
  return dag;
}

std::string to_string(const ComputeDag& dag) {
  std::ostringstream os;
  for (auto& t : dag.ops) {
    if (t->is_placeholder) {
      os << t->name << " = placeholder(" << buffer_type_string(*t->buffer) << ")\n";
      continue;
    }
    os << t->name << '[';
    for (size_t d = 0; d < t->axes.size(); ++d) os << (d ? ", " : "") << t->axes[d].var->name;
    os << "] = " << to_string(t->body) << '\n';
  }
  return os.str();
}

}  // namespace tessel::te
