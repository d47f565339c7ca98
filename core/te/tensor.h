#pragma once
// Tensor expressions: an op's computation declared once as index formulas over tensors.
//
//   Tensor A = placeholder("A", {M, K});
//   Tensor B = placeholder("B", {K, N});
//   IterVar k = reduce_axis(K, "k");
//   Tensor C = compute("C", {M, N}, [&](auto& i) { return sum(at(A, {i[0], k.var}) * at(B, {k.var, i[1]}), {k}); },
//                      {"i", "j"});
//
// Formulas are loop-IR expressions (loopir::Expr); `at(T, idx)` reads tensor T. A compute body
// may be a reduction (sum/max/min or a user-defined commutative reducer) at its top.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/loopir/ir.h"

namespace tessel::te {

using loopir::Expr;
using loopir::IterVar;
using loopir::Reducer;
using loopir::VarRef;

struct OperationNode;
using Tensor = std::shared_ptr<const OperationNode>;

struct OperationNode {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Shape shape;
  bool is_placeholder = false;
  uint64_t serial = 0;         // creation order: placeholders become kernel parameters in this order
  std::vector<IterVar> axes;   // compute: one per output dimension
  Expr body;                   // compute: the value of element [axes...]
  loopir::Buffer buffer;       // where the tensor lives (named like the op)
  std::vector<Tensor> inputs;  // compute: tensors the body reads, in first-use order

  const loopir::Reduce* reduction() const { return loopir::as<loopir::Reduce>(body); }
};

Tensor placeholder(std::string name, Shape shape, DataType dtype = DataType::kFloat32);
// `f` receives the output indices (one variable per dimension, named by axis_names or i0, i1...).
Tensor compute(std::string name, Shape shape, const std::function<Expr(const std::vector<Expr>&)>& f,
               std::vector<std::string> axis_names = {});
// The same op with another body (schedules use it to redirect reads to cache stages).
Tensor with_body(const Tensor& op, Expr body, std::vector<Tensor> inputs);

// t[indices]; throws Error when the rank is wrong.
Expr at(const Tensor& t, std::vector<Expr> indices);

IterVar reduce_axis(int64_t extent, std::string name);
Reducer make_reducer(std::string name, DataType dtype, const std::function<Expr(Expr, Expr)>& combine, Expr identity);
Expr reduce(const Reducer& r, Expr source, std::vector<IterVar> axes);
Expr sum(Expr source, std::vector<IterVar> axes);
Expr max_reduce(Expr source, std::vector<IterVar> axes);
Expr min_reduce(Expr source, std::vector<IterVar> axes);

Expr if_then_else(Expr cond, Expr t, Expr f);
Expr cast(DataType t, Expr v);
Expr float_const(double v, DataType t = DataType::kFloat32);
// exp, log, sqrt, tanh, erf, sigmoid, pow, fma, abs, rsqrt
Expr intrinsic(std::string name, std::vector<Expr> args);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr sigmoid(Expr x);
Expr pow(Expr x, Expr y);

// A kernel: its tensors in topological order (inputs first), and its outputs.
struct ComputeDag {
  std::string name;
  std::vector<Tensor> ops;
  std::vector<Tensor> outputs;
  std::vector<Tensor> inputs() const;  // the placeholders, in order
  const Tensor* find(const std::string& name) const;
};
ComputeDag make_dag(std::string name, std::vector<Tensor> outputs);
// One line per tensor:  C[i, j] = sum(A[i, k] * B[k, j], axis=[k in 0..64])
std::string to_string(const ComputeDag& dag);

}  // namespace tessel::te
