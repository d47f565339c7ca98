#pragma once
// What the tensor-expression builders share (core/graph/ops/te_builders.h lists them; the op
// table names each op's builder). A builder turns one graph node into tensor expressions over its
// inputs' tensors:
//
//   BuildContext{node Floor, in = {p0}, out = {f32[2,3]}}  ──floor builder──▶  {floor_7 = compute(...)}
//
// and throws Unsupported (caught by build_group_dag, which reports it) for what it cannot express.
#include <functional>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/support/error.h"
#include "core/te/tensor.h"

namespace tessel::ops::te_builder {

using loopir::Expr;
using loopir::IterVar;
using loopir::make_const;
using loopir::make_int;

// Thrown by a builder that cannot express this node (its attributes, types or rank); caught by
// build_group_dag, which reports the reason.
struct Unsupported {
  std::string why;
};

// Thrown by a builder that finds the node itself invalid whatever the backend (a constant index
// out of range): it is not caught as Unsupported is, so compiling the model fails with it.
struct InvalidNode : Error {
  using Error::Error;
};

struct BuildContext {
  const Graph& g;
  const Node& node;
  NodeId id;
  std::vector<te::Tensor> in;   // nullptr for an omitted optional input
  std::vector<TensorType> out;  // output types

  [[noreturn]] void unsupported(const std::string& why) const { throw Unsupported{node.op->name + ": " + why}; }
  bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
  const te::Tensor& input(size_t i) const {
    if (!has(i)) unsupported("input " + std::to_string(i) + " is absent");
    return in[i];
  }
  // The compile-time value of input i (a constant or a value inference computed).
  const Tensor& known(size_t i, const char* what) const {
    ValueId v = i < node.inputs.size() ? node.inputs[i] : kNoValue;
    if (v == kNoValue || !g.value(v).value.defined()) unsupported(std::string(what) + " is not known at compile time");
    return g.value(v).value;
  }
  template <class A>
  const A& attrs() const {
    return attrs_as<A>(node.attrs);
  }
  DataType dtype(size_t k = 0) const { return out[k].dtype; }
  const Shape& shape(size_t k = 0) const { return out[k].shape; }
  std::string stage(const std::string& suffix = "") const {
    std::string op;
    for (char c : node.op->name) op += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return op + "_" + std::to_string(id) + (suffix.empty() ? "" : "_" + suffix);
  }
};

// Shared helpers (te_from_graph.cpp).
Expr convert(DataType t, const Expr& e);
Expr num(DataType t, double v);
// Reads t at `idx` (an index of a possibly higher-rank output) with numpy broadcasting.
Expr broadcast_read(const te::Tensor& t, const std::vector<Expr>& idx);
// One compute stage over the output shape whose element is fn(broadcast reads of every input,
// converted to `operand` type).
te::Tensor elementwise(BuildContext& c, DataType operand, const std::function<Expr(const std::vector<Expr>&)>& fn);
DataType float_operand(BuildContext& c);  // the input's float type; Unsupported for others
std::vector<int64_t> normalized_axes(const BuildContext& c, std::vector<int64_t> axes, int64_t rank);
// out[kept...] = reduce(pre(x[...])) over `axes` (kept as size-1 dims when keepdims); kind: sum, max, min.
te::Tensor reduction(BuildContext& c, const te::Tensor& x, const std::vector<int64_t>& axes, bool keepdims,
                     const std::string& kind, const std::function<Expr(const Expr&)>& pre, const std::string& name,
                     const Shape& out_shape);

// An index into `axis` of extent `extent`, read from the node's indices input `input` as int64
// `raw` and counted from the end when negative (ONNX), checked to lie in [-extent, extent). Where
// the indices are known at compile time every one is checked here (InvalidNode naming the node and
// the first out of range) and the index carries no check; otherwise it is a loopir Check naming the
// node and the index, which the kernel evaluates as it gathers:
//
//   check(w in [0, 5), "node 'g' (Gather): index {raw} out of range [-5, 5) on axis 0")
//       where w = select(raw < 0, raw + 5, raw)
Expr checked_index(const BuildContext& c, size_t input, const Expr& raw, int64_t extent, int64_t axis);

// Rounding without a rounding intrinsic (builders_rounding.cpp).
Expr floor_of(const Expr& x);
Expr ceil_of(const Expr& x);
Expr round_half_even(const Expr& x);
Expr sign_of(const Expr& x);

}  // namespace tessel::ops::te_builder
