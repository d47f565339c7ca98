#pragma once
// Shared by the shape-op tests: build a one-node graph, infer it, run the reference kernel.
#include <QtTest>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/op_table.h"
#include "core/runtime/reference_executor.h"
#include "core/support/error.h"

namespace shape_test {

using namespace tessel;

inline Tensor f32(Shape s, std::vector<float> v) { return Tensor::from_values<float>(std::move(s), v); }
inline Tensor i64(Shape s, std::vector<int64_t> v) { return Tensor::from_int64s(std::move(s), v); }
inline Tensor i32(Shape s, std::vector<int32_t> v) { return Tensor::from_values<int32_t>(std::move(s), v); }
inline Tensor ints(std::vector<int64_t> v) { return i64({static_cast<int64_t>(v.size())}, v); }
inline Tensor none() { return Tensor(); }

// 0, 1, 2, ... as a float tensor of `shape`.
inline Tensor iota(Shape shape) {
  Tensor t(DataType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

inline std::vector<float> floats(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<float>(t.get_double(i)));
  return v;
}

// One node of `op` over `inputs`: the first `runtime_inputs` are graph inputs (values given at run
// time), the rest constants (known at compile time, as shape operands must be). An undefined
// tensor is an omitted optional input.
struct OpRun {
  Graph graph;
  std::vector<Tensor> outputs;
};

inline OpRun run_op(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs, int num_outputs = 1,
                    int runtime_inputs = 1) {
  OpRun r;
  Graph& g = r.graph;
  const OpDef& def = get_op(op);
  std::vector<ValueId> ids;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      ids.push_back(kNoValue);
    } else if (static_cast<int>(i) < runtime_inputs) {
      ids.push_back(g.add_input("in" + std::to_string(i), {inputs[i].dtype(), inputs[i].shape()}));
      feeds.push_back(inputs[i]);
    } else {
      ids.push_back(g.add_constant("c" + std::to_string(i), inputs[i]));
    }
  }
  g.outputs = g.add_node("node", def, def.parse_attrs(op, attrs), ids, num_outputs);
  infer_types(g);
  r.outputs = run_reference(g, feeds);
  return r;
}

inline Tensor run1(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
                   int runtime_inputs = 1) {
  return run_op(op, attrs, inputs, 1, runtime_inputs).outputs.at(0);
}

// The message of the Error that `fn` throws (fails the test when it throws nothing).
template <class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace shape_test

#define EXPECT_ERROR(expr, fragment)                                                                 \
  do {                                                                                               \
    const std::string msg_ = shape_test::error_of([&] { (void)(expr); });                            \
    if (msg_.find(fragment) == std::string::npos)                                                    \
      QFAIL(("expected an error containing '" + std::string(fragment) + "', got: " + msg_).c_str()); \
  } while (0)
