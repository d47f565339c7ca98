// If, Loop and Scan: inference over a typed copy of the body, and reference kernels that run the
// body with the reference executor (control_flow.h has the design).
#include "core/graph/ops/control_flow.h"

#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/support/run_limits.h"

namespace tessel::ops {

namespace {

// Filled by core/runtime/reference_executor.cpp when libtessel_core loads (control_flow.h says
// why). Zero before any dynamic initializer runs (constant initialization), so the order in which
// the library's files are initialized does not matter.
constinit std::atomic<SubgraphRunner> subgraph_runner{nullptr};

std::vector<RuntimeValue> run_subgraph(const Graph& body, const std::vector<RuntimeValue>& inputs) {
  const SubgraphRunner run = subgraph_runner.load(std::memory_order_acquire);
  if (!run)
    throw Error("body '" + body.name + "': no executor to run it (core/runtime/reference_executor.cpp " +
                "registers one when libtessel_core loads; is it linked in?)");
  return run(body, inputs);
}

std::string s(int64_t v) { return std::to_string(v); }

const Graph& require_body(const GraphPtr& g, const char* field) {
  if (!g) throw Error(std::string(field) + " is missing");
  return *g;
}

// Inputs of `body` that the node's formal inputs feed (the rest are captured outer values).
int64_t formal_inputs(const Graph& body) { return static_cast<int64_t>(body.inputs.size()) - body.captured_inputs; }

void require_input_count(const char* field, const Graph& body, int64_t node_formal, const InferContext& ctx) {
  const int64_t expected = node_formal + body.captured_inputs;
  if (ctx.num_inputs() != expected)
    throw Error(std::string(field) + " '" + body.name + "' takes " + s(formal_inputs(body)) + " inputs and reads " +
                s(body.captured_inputs) + " values from outside, so the node needs " + s(expected) +
                " inputs; it has " + s(ctx.num_inputs()));
}

void require_scalar(const char* what, const TensorType& t, DataType dtype) {
  if (!t.is_static_tensor() || t.dtype != dtype || shape_numel(t.shape) != 1)
    throw Error(std::string(what) + " must be one " + std::string(dtype_name(dtype)) + " value, it is " + type_str(t));
}

std::vector<TensorType> input_types(const InferContext& ctx, int from, int to) {
  std::vector<TensorType> out;
  for (int i = from; i < to; ++i) out.push_back(ctx.input(i));
  return out;
}

const TensorType& output_type(const Graph& g, size_t k) { return g.value(g.outputs[k]).type; }

// Copies `src` into the caller's output tensor (which may be a view of a compiled program's
// buffer, so it is written, not replaced). The types must match what inference promised.
void copy_into(Tensor& dst, const Tensor& src, const std::string& what) {
  if (dst.dtype() != src.dtype() || dst.shape() != src.shape())
    throw Error(what + " is " + type_str({src.dtype(), src.shape()}) + " at run time; inference gave " +
                type_str({dst.dtype(), dst.shape()}));
  if (src.nbytes() > 0) std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
}

// Sizes around `axis`: outer (product before), length, inner bytes (product after times element size).
struct AxisSplit {
  int64_t outer = 1, length = 1;
  size_t inner_bytes = 1;
};
AxisSplit split_at(const Shape& shape, int64_t axis, DataType dtype) {
  AxisSplit a;
  a.inner_bytes = dtype_size(dtype);
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis)
      a.outer *= shape[d];
    else if (d == axis)
      a.length = shape[d];
    else
      a.inner_bytes *= static_cast<size_t>(shape[d]);
  }
  return a;
}

Shape without_axis(Shape shape, int64_t axis) {
  shape.erase(shape.begin() + axis);
  return shape;
}

Shape with_axis(Shape shape, int64_t axis, int64_t length) {
  shape.insert(shape.begin() + axis, length);
  return shape;
}

// Slice `index` of `x` along `axis`, the axis removed.
Tensor slice_along(const Tensor& x, int64_t axis, int64_t index) {
  Tensor out(x.dtype(), without_axis(x.shape(), axis));
  const AxisSplit a = split_at(x.shape(), axis, x.dtype());
  for (int64_t o = 0; o < a.outer; ++o)
    std::memcpy(out.raw_data() + o * a.inner_bytes, x.raw_data() + (o * a.length + index) * a.inner_bytes,
                a.inner_bytes);
  return out;
}

// Writes `slice` as slice `index` of `out` along `axis`.
void place_along(Tensor& out, int64_t axis, int64_t index, const Tensor& slice) {
  const AxisSplit a = split_at(out.shape(), axis, out.dtype());
  for (int64_t o = 0; o < a.outer; ++o)
    std::memcpy(out.raw_data() + (o * a.length + index) * a.inner_bytes, slice.raw_data() + o * a.inner_bytes,
                a.inner_bytes);
}

int64_t normalized_axis(const char* what, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw Error(std::string(what) + " " + s(axis) + " is out of range for rank " + s(rank));
  return axis < 0 ? axis + rank : axis;
}

int64_t entry_or(const std::vector<int64_t>& list, size_t k, int64_t fallback) {
  return k < list.size() ? list[k] : fallback;
}

// Inputs up to this many elements are known to the body when it is typed (typed_body).
constexpr int64_t kMaxKnownInputElements = 8;

bool same_values(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].defined() != b[k].defined()) return false;
    if (a[k].defined() && std::memcmp(a[k].raw_data(), b[k].raw_data(), a[k].nbytes()) != 0) return false;
  }
  return true;
}

// The type of a value at run time. A sequence's shape is static when all its tensors share one; an
// empty sequence or optional tells no dtype, so it takes the one `declared` (the body's input), if any.
TensorType runtime_type(const RuntimeValue& v, const TensorType& declared) {
  if (v.is_tensor()) return {v.tensor.dtype(), v.tensor.shape()};
  const bool of_tensor = v.kind == ValueKind::kOptionalTensor;
  std::vector<Tensor> tensors = of_tensor ? std::vector<Tensor>{v.tensor} : v.sequence;
  if (!v.has_element) tensors.clear();
  TensorType t{declared.kind == v.kind ? declared.dtype : DataType::kFloat32, {}, v.kind, false};
  if (tensors.empty()) return t;
  t.dtype = tensors[0].dtype();
  t.shape_known = true;
  for (const Tensor& e : tensors) t.shape_known = t.shape_known && e.shape() == tensors[0].shape();
  if (t.shape_known) t.shape = tensors[0].shape();
  return t;
}

// The type of a value that is `a` on one path and `b` on another (If's branches, a Loop's carried
// value from one iteration to the next): a sequence or optional may differ in shape, and then its
// shape is not static; anything else must agree. nullopt when they do not.
std::optional<TensorType> joined_type(const TensorType& a, const TensorType& b) {
  if (a == b) return a;
  if (a.is_tensor() || a.kind != b.kind || a.dtype != b.dtype) return std::nullopt;
  return TensorType{a.dtype, {}, a.kind, false};
}

// Input i of a control-flow kernel as a value: KernelArgs carries values when the executor runs the
// node, tensors only when inference folds it into a constant.
RuntimeValue input_at(const KernelArgs& args, size_t i) {
  if (i < args.values.size()) return *args.values[i];
  return RuntimeValue::of_tensor(*args.inputs[i]);
}

// Output k of a control-flow kernel: a tensor of static shape is copied into the caller's buffer,
// which may be a view of a compiled program's memory; anything else is handed over.
void set_output(const KernelArgs& args, size_t k, RuntimeValue v, const std::string& what) {
  const int i = static_cast<int>(k);
  if (!v.is_tensor()) {
    if (!args.value_outputs || args.value_out(i).kind != v.kind)
      throw Error(what + " is " + std::string(is_optional(v.kind) ? "an " : "a ") +
                  std::string(value_kind_name(v.kind)) + " at run time; inference gave a tensor");
    args.value_out(i) = std::move(v);
  } else if (args.out(i).defined()) {
    copy_into(args.out(i), v.tensor, what);
  } else {
    args.out(i) = std::move(v.tensor);
  }
}

// Runs one body many times, typing it again only when its inputs' types or small values change
// (a Loop's iteration number does: it is typed once per iteration, which costs little next to
// running reference kernels).
class BodyRunner {
 public:
  explicit BodyRunner(const Graph& body) : body_(body) {}
  std::vector<RuntimeValue> run(const std::vector<RuntimeValue>& inputs) {
    std::vector<TensorType> types;
    std::vector<Tensor> small;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const RuntimeValue& v = inputs[k];
      types.push_back(runtime_type(v, body_.value(body_.inputs.at(k)).type));
      small.push_back(v.is_tensor() && v.tensor.numel() <= kMaxKnownInputElements ? v.tensor : Tensor());
    }
    if (!typed_ || types != types_ || !same_values(small, small_)) {
      std::vector<const Tensor*> values;
      for (const Tensor& t : small) values.push_back(t.defined() ? &t : nullptr);
      typed_ = typed_body(body_, types, values);
      types_ = std::move(types);
      small_ = std::move(small);
    }
    return run_subgraph(*typed_, inputs);
  }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) {
    std::vector<RuntimeValue> values;
    for (const Tensor& t : inputs) values.push_back(RuntimeValue::of_tensor(t));
    std::vector<Tensor> out;
    for (RuntimeValue& v : run(values)) out.push_back(std::move(v.tensor));
    return out;
  }

 private:
  const Graph& body_;
  std::optional<Graph> typed_;
  std::vector<TensorType> types_;
  std::vector<Tensor> small_;
};

std::vector<const Tensor*> input_values(const InferContext& ctx, int from, int to) {
  std::vector<const Tensor*> out;
  for (int i = from; i < to; ++i) out.push_back(ctx.input_value(i));
  return out;
}

// How many times a Loop runs, when that is known before it runs: M known, the first condition
// known (or absent), and a body that hands its condition on unchanged or gives a constant. (Not a
// value inferred for iteration 0: that holds for the first iteration only.)
std::optional<int64_t> known_trip_count(const InferContext& ctx, const Graph& typed) {
  if (!ctx.has_input(0) || !ctx.input_value(0)) return std::nullopt;
  const int64_t m = std::max<int64_t>(ctx.input_value(0)->to_int64s()[0], 0);
  if (ctx.has_input(1)) {
    if (!ctx.input_value(1)) return std::nullopt;
    if (ctx.input_value(1)->get_double(0) == 0) return 0;
  }
  const ValueId cond_in = typed.inputs[1], cond_out = typed.outputs[0];
  const Value& out = typed.value(cond_out);
  if (typed.is_constant(cond_out)) return out.value.get_double(0) != 0 ? m : std::min<int64_t>(m, 1);
  if (cond_out == cond_in) return m;
  if (out.producer >= 0) {
    const Node& n = typed.nodes[out.producer];
    if (n.op->name == "Identity" && n.inputs.size() == 1 && n.inputs[0] == cond_in) return m;
  }
  return std::nullopt;
}

// Typed bodies, remembered for the extent of the outermost typed_body call on this thread.
//
//   If_1.infer ─▶ typed_body(then_1) ─▶ infer_types ─▶ If_2.infer ─▶ typed_body(then_2) ─▶ …
//                                                   └▶ If_2 folded (inputs known) ─▶ If_2.reference
//                                                        └▶ typed_body(then_2)   ◀── the same call again
//
// Inference types a branch, and when the branch's inputs are known it also runs the node, which
// types the same branch with the same inputs once more; at every level of a chain of Ifs that
// doubles the work below (2^depth, issue 40). The key is the body's address, its input types and
// its known input values: within the outermost call every body is held by the graph being typed
// (attributes are shared, never copied), so an address cannot be reused for another body; when
// that call returns the cache is emptied. It is bounded, since a Loop folded during inference
// types its body once per iteration.
struct TypedBodyCache {
  int depth = 0;
  std::unordered_map<std::string, std::shared_ptr<const Graph>> typed;
};
thread_local TypedBodyCache typed_body_cache;
constexpr size_t kMaxTypedBodies = 256;

std::string typed_body_key(const Graph& body, const std::vector<TensorType>& types,
                           const std::vector<const Tensor*>& values) {
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(&body));
  for (size_t k = 0; k < types.size(); ++k) {
    key += '|' + type_str(types[k]);
    const Tensor* v = k < values.size() ? values[k] : nullptr;
    if (!v) continue;
    key += '=' + std::string(dtype_name(v->dtype())) + shape_str(v->shape()) + ':';
    key.append(reinterpret_cast<const char*>(v->raw_data()), v->nbytes());
  }
  return key;
}

}  // namespace

Graph typed_body(const Graph& body, const std::vector<TensorType>& input_types,
                 const std::vector<const Tensor*>& input_values) {
  if (input_types.size() != body.inputs.size())
    throw Error("body '" + body.name + "' takes " + s(static_cast<int64_t>(body.inputs.size())) + " inputs, given " +
                s(static_cast<int64_t>(input_types.size())));
  TypedBodyCache& cache = typed_body_cache;
  const std::string key = typed_body_key(body, input_types, input_values);
  if (auto hit = cache.typed.find(key); hit != cache.typed.end()) return *hit->second;
  struct Extent {
    TypedBodyCache& cache;
    explicit Extent(TypedBodyCache& c) : cache(c) { ++cache.depth; }
    ~Extent() {
      if (--cache.depth == 0) cache.typed.clear();
    }
  } extent(cache);
  Graph typed = body;
  for (size_t k = 0; k < input_types.size(); ++k) {
    Value& v = typed.value(typed.inputs[k]);
    v.type = input_types[k];
    v.unknown_type.clear();
    v.value = k < input_values.size() && input_values[k] ? *input_values[k] : Tensor();
  }
  try {
    infer_types(typed);
  } catch (const Error& e) {
    rethrow_with_context(e, "body '" + body.name + "'");
  }
  for (ValueId id : typed.outputs)
    if (!typed.value(id).type_known())
      throw Error("body '" + body.name + "': output '" + typed.value(id).name +
                  "' has no type: " + typed.value(id).unknown_type);
  if (cache.typed.size() >= kMaxTypedBodies) cache.typed.clear();
  cache.typed.emplace(key, std::make_shared<const Graph>(typed));
  return typed;
}

std::vector<Tensor> run_body(const Graph& body, const std::vector<Tensor>& inputs) {
  return BodyRunner(body).run(inputs);
}

void set_subgraph_runner(SubgraphRunner runner) { subgraph_runner.store(runner, std::memory_order_release); }

// ----- If -----

void IfOp::infer(const Attrs& a, InferContext& ctx) {
  const Graph& then_body = require_body(a.then_branch, "then_branch");
  const Graph& else_body = require_body(a.else_branch, "else_branch");
  require_input_count("then_branch", then_body, 1, ctx);
  require_input_count("else_branch", else_body, 1, ctx);
  require_scalar("cond", ctx.input(0), DataType::kBool);
  const std::vector<TensorType> captured = input_types(ctx, 1, ctx.num_inputs());
  const std::vector<const Tensor*> known = input_values(ctx, 1, ctx.num_inputs());
  const Graph then_typed = typed_body(then_body, captured, known), else_typed = typed_body(else_body, captured, known);
  for (const Graph* g : {&then_typed, &else_typed})
    if (static_cast<int>(g->outputs.size()) != ctx.num_outputs())
      throw Error((g == &then_typed ? "then_branch" : "else_branch") + std::string(" has ") +
                  s(static_cast<int64_t>(g->outputs.size())) + " outputs; the node has " + s(ctx.num_outputs()));
  const Tensor* cond = ctx.input_value(0);
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    const TensorType &t = output_type(then_typed, k), &e = output_type(else_typed, k);
    if (cond)
      ctx.set_output(k, cond->get_double(0) != 0 ? t : e);
    else if (const std::optional<TensorType> both = joined_type(t, e))
      ctx.set_output(k, *both);
    else
      throw Error("output " + s(k) + " is " + type_str(t) + " from then_branch and " + type_str(e) +
                  " from else_branch; its type would depend on cond at run time");
  }
}

void IfOp::reference(const Attrs& a, const KernelArgs& args) {
  const bool cond = args.in(0).get_double(0) != 0;
  const Graph& branch = cond ? *a.then_branch : *a.else_branch;
  const char* field = cond ? "then_branch" : "else_branch";
  std::vector<RuntimeValue> captured;
  for (size_t i = 1; i < args.inputs.size(); ++i) captured.push_back(input_at(args, i));
  std::vector<RuntimeValue> outs;
  try {
    outs = BodyRunner(branch).run(captured);
  } catch (const Error& e) {
    rethrow_with_context(e, field);
  }
  for (size_t k = 0; k < outs.size(); ++k)
    set_output(args, k, std::move(outs[k]), std::string(field) + " output " + s(static_cast<int64_t>(k)));
}

// ----- Loop -----

namespace {

struct LoopShape {
  int64_t carried = 0, scanned = 0;
};

LoopShape loop_shape(const Graph& body, int num_outputs) {
  const int64_t formal = formal_inputs(body);
  if (formal < 2) throw Error("body '" + body.name + "' must take (iteration, cond, carried...)");
  LoopShape l;
  l.carried = formal - 2;
  l.scanned = static_cast<int64_t>(body.outputs.size()) - 1 - l.carried;
  if (l.scanned < 0)
    throw Error("body '" + body.name + "' has " + s(static_cast<int64_t>(body.outputs.size())) +
                " outputs; it needs cond and the " + s(l.carried) + " carried values at least");
  if (num_outputs != l.carried + l.scanned)
    throw Error("the node has " + s(num_outputs) + " outputs; its body gives " + s(l.carried) + " carried values and " +
                s(l.scanned) + " scan outputs");
  return l;
}

}  // namespace

void LoopOp::infer(const Attrs& a, InferContext& ctx) {
  const Graph& body = require_body(a.body, "body");
  const LoopShape l = loop_shape(body, ctx.num_outputs());
  require_input_count("body", body, 2 + l.carried, ctx);
  if (ctx.has_input(0)) require_scalar("M", ctx.input(0), DataType::kInt64);
  if (ctx.has_input(1)) require_scalar("cond", ctx.input(1), DataType::kBool);
  std::vector<TensorType> types = {{DataType::kInt64, {}}, {DataType::kBool, {}}};
  for (const TensorType& t : input_types(ctx, 2, ctx.num_inputs())) types.push_back(t);
  // Typed for the first iteration: number 0, cond true (else the body never runs).
  const Tensor first_iteration = Tensor::scalar<int64_t>(0), running = Tensor::scalar<bool>(true);
  std::vector<const Tensor*> values = {&first_iteration, &running};
  for (const Tensor* v : input_values(ctx, 2, ctx.num_inputs())) values.push_back(v);
  const Graph typed = typed_body(body, types, values);
  require_scalar("the body's cond output", output_type(typed, 0), DataType::kBool);
  for (int64_t k = 0; k < l.carried; ++k) {
    const TensorType &in = types[2 + k], &out = output_type(typed, 1 + k);
    // A sequence may grow from one iteration to the next: then its shape is not static. An optional
    // may leave the body as what it holds (a sequence started on the first iteration).
    std::optional<TensorType> both = joined_type(in, out);
    const bool unwrapped = (in.kind == ValueKind::kOptionalSequence && out.kind == ValueKind::kSequence) ||
                           (in.kind == ValueKind::kOptionalTensor && out.kind == ValueKind::kTensor);
    if (!both && unwrapped && in.dtype == out.dtype) both = out;
    if (!both)
      throw Error("carried value " + s(k) + " ('" + typed.value(typed.inputs[2 + k]).name + "') enters the body as " +
                  type_str(in) + " and leaves it as " + type_str(out) + "; Tessel needs it to keep its type");
    ctx.set_output(static_cast<int>(k), *both);
  }
  if (l.scanned == 0) return;
  const std::optional<int64_t> trips = known_trip_count(ctx, typed);
  if (!trips)
    throw Error(
        "the number of iterations is known only at run time (M or the first cond is not known at compile "
        "time, or the body computes its condition), so the scan outputs have no static shape");
  for (int64_t k = 0; k < l.scanned; ++k) {
    const TensorType& slice = output_type(typed, 1 + l.carried + k);
    if (!slice.is_static_tensor())
      throw Error("scan output " + s(k) + " is " + type_str(slice) + "; Loop stacks tensors of a static shape only");
    ctx.set_output(static_cast<int>(l.carried + k), slice.dtype, with_axis(slice.shape, 0, *trips));
  }
}

void LoopOp::reference(const Attrs& a, const KernelArgs& args) {
  const Graph& body = *a.body;
  const LoopShape l = loop_shape(body, static_cast<int>(args.outputs->size()));
  const int64_t m = args.has(0) ? args.in(0).to_int64s()[0] : std::numeric_limits<int64_t>::max();
  bool cond = args.has(1) ? args.in(1).get_double(0) != 0 : true;
  std::vector<RuntimeValue> carried, captured;
  for (int64_t k = 0; k < l.carried; ++k) carried.push_back(input_at(args, static_cast<size_t>(2 + k)));
  for (size_t i = static_cast<size_t>(2 + l.carried); i < args.inputs.size(); ++i)
    captured.push_back(input_at(args, i));

  BodyRunner runner(body);
  std::vector<std::vector<Tensor>> slices(static_cast<size_t>(l.scanned));
  int64_t iteration = 0;
  const int64_t limit = max_loop_iterations();
  for (; iteration < m && cond; ++iteration) {
    if (iteration == limit)
      throw Error("the loop would run more than " + s(limit) + " iterations" +
                  (m == std::numeric_limits<int64_t>::max() ? std::string() : " (M = " + s(m) + ")") +
                  ": stopped at the limit (--max-loop-iterations raises it)");
    std::vector<RuntimeValue> inputs = {RuntimeValue::of_tensor(Tensor::scalar<int64_t>(iteration)),
                                        RuntimeValue::of_tensor(Tensor::scalar<bool>(cond))};
    inputs.insert(inputs.end(), carried.begin(), carried.end());
    inputs.insert(inputs.end(), captured.begin(), captured.end());
    std::vector<RuntimeValue> outs;
    try {
      outs = runner.run(inputs);
    } catch (const Error& e) {
      rethrow_with_context(e, "iteration " + s(iteration));
    }
    cond = outs[0].tensor.get_double(0) != 0;
    for (int64_t k = 0; k < l.carried; ++k) carried[k] = std::move(outs[1 + k]);
    for (int64_t k = 0; k < l.scanned; ++k) slices[k].push_back(std::move(outs[1 + l.carried + k].tensor));
  }
  for (int64_t k = 0; k < l.carried; ++k)
    set_output(args, static_cast<size_t>(k), std::move(carried[k]), "carried value " + s(k));
  for (int64_t k = 0; k < l.scanned; ++k) {
    Tensor& out = args.out(static_cast<int>(l.carried + k));
    const std::string what = "scan output " + s(k);
    if (out.rank() == 0 || out.shape()[0] != iteration)
      throw Error(what + ": the loop ran " + s(iteration) + " times; inference expected " +
                  (out.rank() == 0 ? std::string("a stacked output") : s(out.shape()[0])));
    for (int64_t i = 0; i < iteration; ++i) {
      const Tensor& slice = slices[k][i];
      if (slice.dtype() != out.dtype() || slice.shape() != without_axis(out.shape(), 0))
        throw Error(what + ": iteration " + s(i) + " gave " + type_str({slice.dtype(), slice.shape()}) +
                    "; the other slices are " + type_str({out.dtype(), without_axis(out.shape(), 0)}));
      place_along(out, 0, i, slice);
    }
  }
}

// ----- Scan -----

namespace {

struct ScanPlan {
  int64_t states = 0, scanned_inputs = 0, scanned_outputs = 0, length = 0;
  std::vector<int64_t> input_axes, output_axes;  // normalized
  std::vector<bool> input_reversed, output_reversed;
};

// Checks the node against its body and resolves the scan inputs' axes, the directions and the
// number of steps (the scan outputs' axes need the body's output ranks: the callers resolve them).
ScanPlan plan_scan(const ScanAttrs& a, const Graph& body, const std::vector<const TensorType*>& inputs,
                   int num_outputs) {
  ScanPlan p;
  const int64_t formal = formal_inputs(body);
  p.scanned_inputs = a.num_scan_inputs;
  p.states = formal - p.scanned_inputs;
  if (p.states < 0)
    throw Error("num_scan_inputs is " + s(a.num_scan_inputs) + " but body '" + body.name + "' takes " + s(formal) +
                " inputs");
  p.scanned_outputs = static_cast<int64_t>(body.outputs.size()) - p.states;
  if (p.scanned_outputs < 0 || num_outputs != p.states + p.scanned_outputs)
    throw Error("the node has " + s(num_outputs) + " outputs; body '" + body.name + "' gives " +
                s(static_cast<int64_t>(body.outputs.size())) + " for " + s(p.states) + " states");
  for (const auto* list : {&a.scan_input_axes, &a.scan_input_directions})
    if (!list->empty() && static_cast<int64_t>(list->size()) != p.scanned_inputs)
      throw Error("scan_input_axes and scan_input_directions need one entry per scan input (" + s(p.scanned_inputs) +
                  ")");
  for (const auto* list : {&a.scan_output_axes, &a.scan_output_directions})
    if (!list->empty() && static_cast<int64_t>(list->size()) != p.scanned_outputs)
      throw Error("scan_output_axes and scan_output_directions need one entry per scan output (" +
                  s(p.scanned_outputs) + ")");
  for (int64_t j = 0; j < p.scanned_inputs; ++j) {
    const TensorType& t = *inputs[p.states + j];
    const int64_t rank = static_cast<int64_t>(t.shape.size());
    const int64_t axis = normalized_axis("scan_input_axes entry", entry_or(a.scan_input_axes, j, 0), rank);
    if (j == 0)
      p.length = t.shape[axis];
    else if (t.shape[axis] != p.length)
      throw Error("scan input " + s(j) + " has " + s(t.shape[axis]) + " slices along axis " + s(axis) +
                  "; scan input 0 has " + s(p.length));
    p.input_axes.push_back(axis);
    p.input_reversed.push_back(entry_or(a.scan_input_directions, j, 0) == 1);
  }
  for (int64_t k = 0; k < p.scanned_outputs; ++k)
    p.output_reversed.push_back(entry_or(a.scan_output_directions, k, 0) == 1);
  return p;
}

}  // namespace

void ScanOp::infer(const Attrs& a, InferContext& ctx) {
  const Graph& body = require_body(a.body, "body");
  std::vector<const TensorType*> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(&ctx.input(i));
  const ScanPlan p = plan_scan(a, body, inputs, ctx.num_outputs());
  require_input_count("body", body, p.states + p.scanned_inputs, ctx);
  std::vector<TensorType> types = input_types(ctx, 0, static_cast<int>(p.states));
  for (int64_t j = 0; j < p.scanned_inputs; ++j) {
    const TensorType& t = ctx.input(static_cast<int>(p.states + j));
    types.push_back({t.dtype, without_axis(t.shape, p.input_axes[j])});
  }
  for (const TensorType& t : input_types(ctx, static_cast<int>(p.states + p.scanned_inputs), ctx.num_inputs()))
    types.push_back(t);
  const Graph typed = typed_body(body, types);
  for (int64_t k = 0; k < p.states; ++k) {
    const TensorType& out = output_type(typed, k);
    if (out != types[k])
      throw Error("state " + s(k) + " enters the body as " + type_str(types[k]) + " and leaves it as " + type_str(out) +
                  "; Tessel needs it to keep its type");
    ctx.set_output(static_cast<int>(k), out);
  }
  for (int64_t k = 0; k < p.scanned_outputs; ++k) {
    const TensorType& slice = output_type(typed, p.states + k);
    const int64_t rank = static_cast<int64_t>(slice.shape.size()) + 1;
    const int64_t axis = normalized_axis("scan_output_axes entry", entry_or(a.scan_output_axes, k, 0), rank);
    ctx.set_output(static_cast<int>(p.states + k), slice.dtype, with_axis(slice.shape, axis, p.length));
  }
}

void ScanOp::reference(const Attrs& a, const KernelArgs& args) {
  const Graph& body = *a.body;
  std::vector<TensorType> types;
  for (const Tensor* t : args.inputs) types.push_back({t->dtype(), t->shape()});
  std::vector<const TensorType*> inputs;
  for (const TensorType& t : types) inputs.push_back(&t);
  const ScanPlan p = plan_scan(a, body, inputs, static_cast<int>(args.outputs->size()));
  std::vector<Tensor> states, captured;
  for (int64_t k = 0; k < p.states; ++k) states.push_back(args.in(static_cast<int>(k)));
  for (size_t i = static_cast<size_t>(p.states + p.scanned_inputs); i < args.inputs.size(); ++i)
    captured.push_back(*args.inputs[i]);

  BodyRunner runner(body);
  for (int64_t step = 0; step < p.length; ++step) {
    std::vector<Tensor> inputs = states;
    for (int64_t j = 0; j < p.scanned_inputs; ++j) {
      const int64_t index = p.input_reversed[j] ? p.length - 1 - step : step;
      inputs.push_back(slice_along(args.in(static_cast<int>(p.states + j)), p.input_axes[j], index));
    }
    inputs.insert(inputs.end(), captured.begin(), captured.end());
    std::vector<Tensor> outs;
    try {
      outs = runner.run(inputs);
    } catch (const Error& e) {
      rethrow_with_context(e, "step " + s(step));
    }
    for (int64_t k = 0; k < p.states; ++k) states[k] = std::move(outs[k]);
    for (int64_t k = 0; k < p.scanned_outputs; ++k) {
      Tensor& out = args.out(static_cast<int>(p.states + k));
      const Tensor& slice = outs[p.states + k];
      const int64_t axis = entry_or(a.scan_output_axes, k, 0) < 0 ? entry_or(a.scan_output_axes, k, 0) + out.rank()
                                                                  : entry_or(a.scan_output_axes, k, 0);
      if (slice.dtype() != out.dtype() || slice.shape() != without_axis(out.shape(), axis))
        throw Error("scan output " + s(k) + ": step " + s(step) + " gave " + type_str({slice.dtype(), slice.shape()}) +
                    "; inference expected slices of " + type_str({out.dtype(), without_axis(out.shape(), axis)}));
      place_along(out, axis, p.output_reversed[k] ? p.length - 1 - step : step, slice);
    }
  }
  for (int64_t k = 0; k < p.states; ++k) copy_into(args.out(static_cast<int>(k)), states[k], "state " + s(k));
}

namespace {

// The opset 9 Scan that one batch element of a ScanBatched runs.
ScanAttrs per_element_scan(const ScanBatchedAttrs& a) {
  ScanAttrs scan;
  scan.body = a.body;
  scan.num_scan_inputs = a.num_scan_inputs;
  scan.scan_input_directions = a.directions;
  return scan;
}

}  // namespace

void ScanBatchedOp::infer(const Attrs& a, InferContext& ctx) {
  if (ctx.num_inputs() < 2) throw Error("needs sequence_lens (or an empty slot) and at least one scanned input");
  int64_t batch = -1;
  std::vector<TensorType> element;  // the inputs after sequence_lens, without the batch axis
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    if (t.shape.empty()) throw Error("input " + s(i) + " has no batch axis (Scan before opset 9 batches every input)");
    if (batch >= 0 && t.shape[0] != batch)
      throw Error("input " + s(i) + " has batch " + s(t.shape[0]) + ", input 1 has " + s(batch));
    batch = t.shape[0];
    element.push_back({t.dtype, without_axis(t.shape, 0)});
  }
  std::vector<const TensorType*> types;
  for (const TensorType& t : element) types.push_back(&t);
  InferContext inner(types, std::vector<const Tensor*>(types.size(), nullptr), ctx.num_outputs());
  ScanOp::infer(per_element_scan(a), inner);
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    const TensorType& t = inner.outputs()[static_cast<size_t>(k)];
    ctx.set_output(k, t.dtype, with_axis(t.shape, 0, batch));
  }
}

void ScanBatchedOp::reference(const Attrs& a, const KernelArgs& args) {
  const ScanAttrs scan = per_element_scan(a);
  const int64_t batch = args.in(1).shape()[0];
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> element;
    for (size_t i = 1; i < args.inputs.size(); ++i) element.push_back(slice_along(*args.inputs[i], 0, b));
    if (args.has(0)) {
      // Every element's length must be the whole sequence (axis 1 of the first scan input).
      const int64_t states = static_cast<int64_t>(args.inputs.size()) - 1 - a.num_scan_inputs;
      const int64_t length = args.in(static_cast<int>(1 + states)).shape()[1];
      if (static_cast<int64_t>(args.in(0).get_double(b)) != length)
        throw Error("sequence_lens[" + s(b) + "] is " + s(static_cast<int64_t>(args.in(0).get_double(b))) +
                    ", not the sequence length " + s(length) + " (shorter sequences are not supported)");
    }
    std::vector<Tensor> outs;
    for (const Tensor& out : *args.outputs) outs.emplace_back(out.dtype(), without_axis(out.shape(), 0));
    KernelArgs inner;
    for (const Tensor& t : element) inner.inputs.push_back(&t);
    inner.outputs = &outs;
    ScanOp::reference(scan, inner);
    for (size_t k = 0; k < outs.size(); ++k) place_along(args.out(static_cast<int>(k)), 0, b, outs[k]);
  }
}

}  // namespace tessel::ops
