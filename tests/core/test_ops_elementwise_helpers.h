#pragma once
// Helpers for the element-wise op tests: run one op on given tensors through the graph
// (infer_types + run_reference), and build tensors tersely.
#include <QtTest>
#include <functional>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/op_table.h"
#include "core/runtime/reference_executor.h"

namespace tessel::test {

// An operand: a graph input (the default), a constant (shape operands such as ReduceSum's axes),
// or absent (an omitted optional input).
struct Operand {
  Tensor value;
  bool constant = false;
  static Operand absent() { return {}; }
};
inline Operand constant(Tensor t) { return {std::move(t), true}; }

// Builds a graph holding one node of `op`, infers it and runs it with the reference executor.
inline std::vector<Tensor> run_op(const std::string& op, const AttrMap& attrs, const std::vector<Operand>& operands,
                                  int num_outputs = 1) {
  Graph g;
  const OpDef& def = get_op(op);
  std::vector<ValueId> ins;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand& o = operands[i];
    std::string name = "in" + std::to_string(i);
    if (!o.value.defined())
      ins.push_back(kNoValue);
    else if (o.constant)
      ins.push_back(g.add_constant(name, o.value));
    else {
      ins.push_back(g.add_input(name, TensorType{o.value.dtype(), o.value.shape()}));
      feeds.push_back(o.value);
    }
  }
  std::vector<ValueId> outs = g.add_node("node", def, def.parse_attrs(op, attrs), ins, num_outputs);
  g.outputs = outs;
  infer_types(g);
  return run_reference(g, feeds);
}

inline Tensor run1(const std::string& op, const std::vector<Operand>& operands, const AttrMap& attrs = {}) {
  return run_op(op, attrs, operands)[0];
}

// The message of the tessel::Error `fn` throws, or "" when it throws nothing.
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline Tensor f32(Shape shape, std::vector<float> v) { return Tensor::from_values<float>(std::move(shape), v); }
inline Tensor f64(Shape shape, std::vector<double> v) { return Tensor::from_values<double>(std::move(shape), v); }
inline Tensor i64(Shape shape, std::vector<int64_t> v) { return Tensor::from_values<int64_t>(std::move(shape), v); }
inline Tensor i32(Shape shape, std::vector<int32_t> v) { return Tensor::from_values<int32_t>(std::move(shape), v); }
inline Tensor i8(Shape shape, std::vector<int8_t> v) { return Tensor::from_values<int8_t>(std::move(shape), v); }
inline Tensor u8(Shape shape, std::vector<uint8_t> v) { return Tensor::from_values<uint8_t>(std::move(shape), v); }
inline Tensor boolean(Shape shape, std::vector<int> v) {
  Tensor t(DataType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i] != 0;
  return t;
}

// Deterministic pseudo-random floats in [lo, hi).
inline Tensor random_f32(Shape shape, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  Tensor t(DataType::kFloat32, std::move(shape));
  uint32_t s = seed * 2654435761u + 1u;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = lo + (hi - lo) * static_cast<float>(s >> 8) / 16777216.0f;
  }
  return t;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace tessel::test
