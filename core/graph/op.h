#pragma once
// What an op is: the contract every entry of the op table (op_table.h) fulfils.
//
// An op is implemented by a class with static members (see core/graph/ops/README.md):
//
//   struct ReluOp {
//     using Attrs = NoAttrs;
//     static constexpr PatternKind pattern = PatternKind::kElemWise;
//     static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
//     static constexpr const char* doc = "max(x, 0), element-wise";
//     static void infer(const Attrs&, InferContext& ctx);         // output dtypes and shapes
//     static void reference(const Attrs&, const KernelArgs& args);  // the correctness oracle
//     static int64_t flops(const Attrs&, const OpTypes& types);    // floating-point operations
//     // optional: static constexpr int shape_inputs[] = {1};  inputs whose *values* shape the output
//     // optional: static constexpr bool takes_any_kind = true;  takes sequences and optionals too
//   };
//
// The table turns each class into an OpDef (type-erased) with make_op_def<ReluOp>("Relu", ...), the
// second argument saying how the op compiles: its tensor-expression builder (core/graph/ops/te/).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/attrs/attrs.h"
#include "core/graph/runtime_value.h"
#include "core/support/tensor.h"

namespace tessel {

namespace te {
struct OperationNode;
using Tensor = std::shared_ptr<const OperationNode>;  // as in core/te/tensor.h
}  // namespace te
namespace ops::te_builder {
struct BuildContext;  // core/graph/ops/te/builder_support.h
}

// TVM's op pattern kinds; ordered: a larger value is "more complex" (fuse_ops.h shows how fusion uses them).
enum class PatternKind : int {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kTuple = 7,
  kOpaque = 8,
};
std::string_view pattern_name(PatternKind k);  // "elemwise", "broadcast", ...

// The type of a value. For a tensor, its dtype and shape. For a sequence or an optional, the dtype
// and shape of its tensors. shape_known is false when the shape is not one static shape: the
// tensors of a sequence differ in shape, or a tensor taken out of one has a shape only the run
// decides; ops that take tensors refuse such a value as input.
struct TensorType {
  DataType dtype = DataType::kFloat32;
  Shape shape;
  ValueKind kind = ValueKind::kTensor;
  bool shape_known = true;
  bool is_tensor() const { return kind == ValueKind::kTensor; }
  // A tensor whose shape is static: what every op but the sequence ops takes.
  bool is_static_tensor() const { return is_tensor() && shape_known; }
  bool operator==(const TensorType&) const = default;
};
// "f32[1,3,224,224]"; "seq(f32[2,3])", "opt(f32[4])", "opt(seq(f32[?]))" ("?": shape not static).
std::string type_str(const TensorType& t);

// What an op's `infer` sees: its inputs' types, the values known at compile time (constants and
// shape computations), and where to put output types. Errors are thrown as tessel::Error with a
// plain reason; the caller adds the node's name.
class InferContext {
 public:
  InferContext(std::vector<const TensorType*> input_types, std::vector<const Tensor*> input_values,
               int num_outputs);

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  bool has_input(int i) const { return i < num_inputs() && input_types_[i] != nullptr; }
  const TensorType& input(int i) const;          // throws when the (optional) input is absent
  const Tensor* input_value(int i) const;        // nullptr when not known at compile time
  // The value of input i, which must be known at compile time (shapes, axes, pads...).
  const Tensor& require_value(int i, const char* what) const;
  std::vector<int64_t> require_ints(int i, const char* what) const { return require_value(i, what).to_int64s(); }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void set_output(int i, TensorType type);
  void set_output(int i, DataType dtype, Shape shape) { set_output(i, TensorType{dtype, std::move(shape)}); }
  // For ops whose output value is known from types alone (Shape, Size).
  void set_output_value(int i, Tensor value);

  const std::vector<TensorType>& outputs() const { return outputs_; }
  const std::vector<Tensor>& output_values() const { return output_values_; }
  bool all_outputs_set() const;

 private:
  std::vector<const TensorType*> input_types_;
  std::vector<const Tensor*> input_values_;
  std::vector<TensorType> outputs_;
  std::vector<bool> output_set_;
  std::vector<Tensor> output_values_;
};

// A reference kernel's arguments. Outputs are allocated by the caller from the inferred types
// (zero-filled); the kernel writes them. Absent optional inputs are nullptr.
//
// An op that takes sequences or optionals (OpDef::takes_any_kind) also gets every input as a
// RuntimeValue (`values`, null where absent; `inputs` is then null for each input that is not a
// tensor) and writes its outputs that are not tensors to `value_outputs`. A tensor output whose shape
// is not static (TensorType::shape_known) is not allocated: the kernel assigns it.
struct KernelArgs {
  std::vector<const Tensor*> inputs;
  std::vector<Tensor>* outputs;
  std::vector<const RuntimeValue*> values = {};
  std::vector<RuntimeValue>* value_outputs = nullptr;
  const Tensor& in(int i) const { return *inputs[i]; }
  bool has(int i) const { return i < static_cast<int>(inputs.size()) && inputs[i] != nullptr; }
  Tensor& out(int i) const { return (*outputs)[i]; }
  const RuntimeValue& value(int i) const { return *values[i]; }
  RuntimeValue& value_out(int i) const { return (*value_outputs)[i]; }
};

// Input and output types of one node, for cost functions.
struct OpTypes {
  std::vector<const TensorType*> inputs;  // nullptr for absent optional inputs
  std::vector<TensorType> outputs;
};

// Turns one node into compute stages over its inputs' tensors (core/graph/ops/te_builders.h).
using TeBuilder = std::vector<te::Tensor> (*)(ops::te_builder::BuildContext&);

// Whether an op's nodes compile to kernels: always, for some attributes and types, or never (they
// run their reference kernel).
enum class Compiles { kYes, kPartial, kNo };
std::string_view compiles_name(Compiles c);  // "yes", "partial", "no"

struct OpCompilation {
  TeBuilder builder = nullptr;  // nullptr exactly when compiles is kNo
  Compiles compiles = Compiles::kNo;
  const char* why = "";  // partial: what the builder declines; no: why there is no builder
};

struct OpDef {
  std::string name;  // the ONNX op type ("Conv") or Tessel's own ("layout_transform")
  PatternKind pattern = PatternKind::kOpaque;
  int min_inputs = 0, max_inputs = 0, min_outputs = 1, max_outputs = 1;
  std::string doc;
  std::vector<int> shape_inputs;  // inputs that must be known at compile time
  bool takes_any_kind = false;    // takes sequences and optionals, not only tensors (KernelArgs)
  Attrs (*parse_attrs)(const std::string& op, const AttrMap& map) = nullptr;
  std::vector<FieldDoc> (*attr_doc)() = nullptr;
  void (*infer)(const Attrs&, InferContext&) = nullptr;
  void (*reference)(const Attrs&, const KernelArgs&) = nullptr;
  int64_t (*flops)(const Attrs&, const OpTypes&) = nullptr;
  OpCompilation compilation;
};

namespace op_detail {
template <class Op> concept HasShapeInputs = requires { Op::shape_inputs; };
template <class Op> concept TakesAnyKind = requires { requires Op::takes_any_kind; };
}

template <class Op> OpDef make_op_def(std::string name, OpCompilation compilation) {
  using A = typename Op::Attrs;
  OpDef d;
  d.name = std::move(name);
  d.pattern = Op::pattern;
  d.min_inputs = Op::min_inputs;
  d.max_inputs = Op::max_inputs;
  d.min_outputs = Op::min_outputs;
  d.max_outputs = Op::max_outputs;
  d.doc = Op::doc;
  if constexpr (op_detail::HasShapeInputs<Op>) d.shape_inputs.assign(std::begin(Op::shape_inputs), std::end(Op::shape_inputs));
  d.takes_any_kind = op_detail::TakesAnyKind<Op>;
  d.parse_attrs = [](const std::string& op, const AttrMap& map) -> Attrs { return make_attrs(attrs_from_map<A>(op, map)); };
  d.attr_doc = &attrs_doc<A>;
  d.infer = [](const Attrs& a, InferContext& ctx) { Op::infer(attrs_as<A>(a), ctx); };
  d.reference = [](const Attrs& a, const KernelArgs& args) { Op::reference(attrs_as<A>(a), args); };
  d.flops = [](const Attrs& a, const OpTypes& t) -> int64_t { return Op::flops(attrs_as<A>(a), t); };
  d.compilation = compilation;
  return d;
}

}  // namespace tessel
