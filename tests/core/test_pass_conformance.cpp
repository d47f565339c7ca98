// Semantics preserved on the ONNX node tests that pass (tests/conformance/passing.txt): each test
// model is imported as `tessel run` imports it, the full pipeline runs with the verifier, and the
// graph after every pass gives the imported graph's outputs (rtol 1e-4). `tessel run` itself runs
// the optimized graph, so ctest onnx_conformance checks the final graph against the stored outputs.
#include <QtTest>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/frontend/onnx_import.h"
#include "core/graph/passes/pipeline.h"
#include "core/runtime/reference_executor.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

std::vector<std::string> passing_tests() {
  std::vector<std::string> names;
  std::ifstream in(fs::path(TESSEL_SOURCE_DIR) / "tests/conformance/passing.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    names.push_back(line.substr(0, line.find_first_of(" \t")));
  }
  return names;
}

// Elements equal within rtol (NaN matches NaN; integers and bools exactly, through double; strings
// as text).
std::string compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double rtol) {
  if (got.size() != want.size()) return "output count differs";
  for (size_t k = 0; k < want.size(); ++k) {
    if (got[k].dtype() != want[k].dtype() || got[k].shape() != want[k].shape())
      return "output " + std::to_string(k) + " type differs";
    if (want[k].dtype() == DataType::kString) {
      if (got[k].strings() != want[k].strings()) return "output " + std::to_string(k) + ": the strings differ";
      continue;
    }
    for (int64_t i = 0; i < want[k].numel(); ++i) {
      const double a = got[k].get_double(i), b = want[k].get_double(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b) continue;
      if (!(std::abs(a - b) <= rtol * std::abs(b) + 1e-6))
        return "output " + std::to_string(k) + "[" + std::to_string(i) + "]: " + std::to_string(a) + " vs " +
               std::to_string(b);
    }
  }
  return {};
}

}  // namespace

class TestPassConformance : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void every_pass_keeps_node_test_outputs() {
    if (!fs::exists(kNodeTests)) QFAIL("libonnx-testdata is not installed (scripts/check installs it)");
    const Target target = Target::parse("ref -vector_bits=512");
    PipelineOptions options;
    options.verify = true;
    int checked = 0;
    QStringList failures;
    for (const std::string& name : passing_tests()) {
      // Node tests by name; the other folders of the test data as "pytorch-converted/test_X".
      const fs::path dir = name.find('/') == std::string::npos ? kNodeTests / name : kNodeTests.parent_path() / name;
      const std::string model = (dir / "model.onnx").string();
      try {
        ImportOptions import;
        std::vector<Tensor> inputs;
        const std::vector<OnnxInputInfo> declared = onnx_runtime_inputs(model);
        // A graph with sequences or optionals runs on the reference executor as a whole: no pass sees it.
        const auto not_tensor = [](const OnnxInputInfo& in) { return in.kind != ValueKind::kTensor; };
        if (std::any_of(declared.begin(), declared.end(), not_tensor)) continue;
        for (size_t k = 0; k < declared.size(); ++k) {
          inputs.push_back(read_tensor_pb((dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string()));
          if (declared[k].feeds_shape_operand) import.bound_inputs.emplace(declared[k].name, inputs.back());
          if (!declared[k].static_shape) import.input_shapes.emplace(declared[k].name, inputs.back().shape());
        }
        GraphPtr g = std::make_shared<const Graph>(import_onnx(model, import));
        if (!non_tensor_values_reason(*g).empty()) continue;
        // The test data stores bfloat16 inputs as UINT16 bit patterns, as `tessel run` reads them.
        for (size_t k = 0; k < inputs.size() && k < g->inputs.size(); ++k)
          if (g->value(g->inputs[k]).type.dtype == DataType::kBFloat16 && inputs[k].dtype() == DataType::kUInt16)
            inputs[k] = Tensor::view(DataType::kBFloat16, inputs[k].shape(), inputs[k].raw_data()).clone();
        const std::vector<Tensor> want = run_reference(*g, inputs);
        GraphPipelineResult r = run_graph_pipeline(g, target, options);
        if (!r.ok()) {
          failures << QString::fromStdString(name + ": " + r.error);
          continue;
        }
        for (const StepRecordPtr& rec : r.records) {
          if (!rec->changed) continue;
          const std::string diff = compare(run_reference(*graph_after(*rec), inputs), want, 1e-4);
          if (!diff.empty()) failures << QString::fromStdString(name + " after " + rec->name + ": " + diff);
        }
        ++checked;
      } catch (const Error& e) {
        failures << QString::fromStdString(name + ": " + e.what());
      }
    }
    QVERIFY2(failures.isEmpty(), qPrintable(QString("%1 failures:\n").arg(failures.size()) + failures.join('\n')));
    qInfo("%d node tests checked after every pass", checked);
    QVERIFY(checked > 500);
  }
};

QTEST_APPLESS_MAIN(TestPassConformance)
#include "test_pass_conformance.moc"
