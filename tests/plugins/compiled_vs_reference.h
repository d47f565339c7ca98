#pragma once
// What the tensor-expression builder tests check on each small graph: it compiles for the target
// with no kernel falling back to the reference kernels, and the compiled outputs match the
// reference executor's (the oracle) in dtype, shape and every element.
//
//   const QString failure = compiled_vs_reference(g, inputs, "llvm", kFloat32Rounding);
//   QVERIFY2(failure.isEmpty(), qPrintable(name + " on llvm: " + failure));
//
// Each test file keeps its own cases and inputs; the graph of one node over them comes from
// one_node_graph, the rows of a data-driven test, case × CPU backend, from add_case_rows.
#include <QString>
#include <QtTest>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/compile/compiled_model.h"
#include "core/graph/op_table.h"
#include "core/runtime/reference_executor.h"
#include "core/target/target.h"

namespace tessel::testing {

// |compiled − reference| ≤ abs + rel·|reference|; both 0: equal.
struct Tolerance {
  double abs = 0, rel = 0;
};
// The reference computes in double and rounds once; kernels compute in float32.
inline constexpr Tolerance kFloat32Rounding{1e-5, 1e-4};
inline constexpr Tolerance kExact{0, 0};

// One node `op` (attributes parsed from `attrs`) over graph inputs x0, x1, ... typed like `inputs`
// (an undefined tensor: an optional input left out), with `outputs` outputs; types inferred.
inline Graph one_node_graph(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
                            int outputs = 1) {
  Graph g;
  std::vector<ValueId> in;
  for (size_t i = 0; i < inputs.size(); ++i)
    in.push_back(inputs[i].defined() ? g.add_input("x" + std::to_string(i), {inputs[i].dtype(), inputs[i].shape()})
                                     : kNoValue);
  const OpDef& def = get_op(op);
  g.outputs = g.add_node("n", def, def.parse_attrs(op, attrs), in, outputs);
  infer_types(g);
  return g;
}

// The defined ones of `inputs`: what a graph made by one_node_graph takes.
inline std::vector<Tensor> defined_inputs(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  for (const Tensor& t : inputs)
    if (t.defined()) out.push_back(t);
  return out;
}

// "" when the graph compiled without fallback and its outputs match; else what did not.
inline QString compiled_vs_reference(const Graph& g, const std::vector<Tensor>& inputs, const QString& target,
                                     Tolerance tolerance) {
  auto compiled =
      compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
  if (compiled->kernels().empty()) return "no kernel was made";
  for (const compile::CompiledKernel& kernel : compiled->kernels())
    if (!kernel.compiled) return QString::fromStdString(kernel.name + " fell back: " + kernel.fallback_reason);
  const std::vector<Tensor> got = compiled->run(inputs), want = run_reference(g, inputs);
  if (got.size() != want.size()) return QString("%1 outputs, the reference has %2").arg(got.size()).arg(want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    if (got[o].dtype() != want[o].dtype() || got[o].shape() != want[o].shape())
      return QString::fromStdString("output " + std::to_string(o) + " is " + std::string(dtype_name(got[o].dtype())) +
                                    shape_str(got[o].shape()) + ", the reference's is " +
                                    std::string(dtype_name(want[o].dtype())) + shape_str(want[o].shape()));
    const size_t element = dtype_size(want[o].dtype());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      if (!dtype_is_float(want[o].dtype())) {  // integers bit for bit: a double holds no u64 near 2^64
        if (std::memcmp(got[o].raw_data() + i * element, want[o].raw_data() + i * element, element) != 0)
          return QString("output %1 element %2 is %3, expected %4")
              .arg(o)
              .arg(i)
              .arg(got[o].get_double(i), 0, 'g', 20)
              .arg(want[o].get_double(i), 0, 'g', 20);
        continue;
      }
      const double w = want[o].get_double(i), g_i = got[o].get_double(i);
      if (!(std::abs(g_i - w) <= tolerance.abs + tolerance.rel * std::abs(w)))
        return QString("output %1 element %2 is %3, expected %4").arg(o).arg(i).arg(g_i).arg(w);
    }
  }
  return {};
}

// The backends a data-driven test runs on: llvm, c and interp; in a ctest entry labelled opencl
// that sets TESSEL_TEST_OPENCL=1 (it needs an OpenCL device), opencl alone.
inline std::vector<const char*> backends_under_test() {
  if (std::getenv("TESSEL_TEST_OPENCL")) return {"opencl"};
  return {"llvm", "c", "interp"};
}

// Every integer type, signed then unsigned, narrow to wide.
inline const std::vector<DataType>& integer_types() {
  static const std::vector<DataType> all = {DataType::kInt8,  DataType::kInt16,  DataType::kInt32,  DataType::kInt64,
                                            DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64};
  return all;
}

// The rows "NAME@TARGET" (columns index, target) for every case on llvm, c and interp.
inline void add_case_rows(const std::vector<std::string>& case_names) {
  QTest::addColumn<int>("index");
  QTest::addColumn<QString>("target");
  for (size_t i = 0; i < case_names.size(); ++i)
    for (const char* t : {"llvm", "c", "interp"})
      QTest::newRow((case_names[i] + "@" + t).c_str()) << static_cast<int>(i) << QString(t);
}

}  // namespace tessel::testing
