#pragma once
// Helpers for the nn op tests: run one op on concrete tensors through the real graph path
// (add_node → infer_types → run_reference), capture error messages, fill deterministic data.
#include <QtTest>
#include <cmath>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/op_table.h"
#include "core/runtime/reference_executor.h"

namespace nn_test {

using namespace tessel;

// Graph inputs for defined tensors, an omitted optional input for an undefined one.
inline Graph single_node_graph(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
                               int num_outputs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i)
    ids.push_back(inputs[i].defined()
                      ? g.add_input("in" + std::to_string(i), TensorType{inputs[i].dtype(), inputs[i].shape()})
                      : kNoValue);
  const OpDef& def = get_op(op);
  auto outs = g.add_node("node", def, def.parse_attrs(op, attrs), ids, num_outputs);
  g.outputs = outs;
  infer_types(g);
  return g;
}

inline std::vector<Tensor> run_op(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
                                  int num_outputs = 1) {
  Graph g = single_node_graph(op, attrs, inputs, num_outputs);
  std::vector<Tensor> fed;
  for (const Tensor& t : inputs)
    if (t.defined()) fed.push_back(t);
  return run_reference(g, fed);
}

inline Tensor run1(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs) {
  return run_op(op, attrs, inputs)[0];
}

// The inferred output types, without running.
inline std::vector<TensorType> infer_op(const std::string& op, const AttrMap& attrs,
                                        const std::vector<TensorType>& inputs, int num_outputs = 1) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) ids.push_back(g.add_input("in" + std::to_string(i), inputs[i]));
  const OpDef& def = get_op(op);
  auto outs = g.add_node("node", def, def.parse_attrs(op, attrs), ids, num_outputs);
  infer_types(g);
  std::vector<TensorType> types;
  for (ValueId v : outs) types.push_back(g.value(v).type);
  return types;
}

// The message of the Error that parsing, inferring or running throws; empty when none is thrown.
inline QString error_of(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
                        int num_outputs = 1) {
  try {
    run_op(op, attrs, inputs, num_outputs);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

inline Tensor f32(Shape shape, const std::vector<float>& v) { return Tensor::from_values<float>(std::move(shape), v); }

// Deterministic pseudo-random values in [-1, 1) (a 64-bit LCG), different per seed.
inline Tensor random_f32(Shape shape, uint64_t seed) {
  Tensor t(DataType::kFloat32, std::move(shape));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<float>(static_cast<double>(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  return t;
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.get_double(i);
  return v;
}

// Element-wise comparison with a relative+absolute tolerance; reports the first mismatch.
inline bool close(const std::vector<double>& actual, const std::vector<double>& expected, double tol = 1e-5) {
  if (actual.size() != expected.size()) {
    qWarning("size %zu != expected %zu", actual.size(), expected.size());
    return false;
  }
  for (size_t i = 0; i < actual.size(); ++i)
    if (!(std::abs(actual[i] - expected[i]) <= tol * (1.0 + std::abs(expected[i])))) {
      qWarning("element %zu: %.9g, expected %.9g", i, actual[i], expected[i]);
      return false;
    }
  return true;
}

inline double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

inline AttrMap ints(const std::string& name, std::vector<int64_t> v, AttrMap m = {}) {
  m[name] = std::move(v);
  return m;
}

}  // namespace nn_test
