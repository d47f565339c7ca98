// The RoiAlign builder (core/graph/ops/te/builders_roi_align.cpp): avg and max, both coordinate
// modes, a spatial scale, rois reaching past X's edges, on every CPU backend with no reference
// fallback, against the reference kernel; sampling_ratio 0 is declined and still runs.
#include <QtTest>
#include <random>

#include "core/compile/compiled_model.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/te/te_from_graph.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "tests/plugins/compiled_vs_reference.h"

using namespace tessel;

namespace {

struct Case {
  const char* name;
  AttrMap attrs;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"avg_half_pixel", {{"sampling_ratio", int64_t{2}}, {"output_height", int64_t{3}}, {"output_width", int64_t{2}}}},
      {"max_output_half_pixel",
       {{"sampling_ratio", int64_t{3}},
        {"mode", std::string("max")},
        {"coordinate_transformation_mode", std::string("output_half_pixel")},
        {"output_height", int64_t{2}},
        {"output_width", int64_t{4}}}},
      {"avg_scaled", {{"sampling_ratio", int64_t{1}}, {"spatial_scale", 0.5}, {"output_height", int64_t{4}}}},
  };
  return all;
}

// X [2,3,6,7] random; rois inside, across the edges and outside X; both images.
Graph case_graph(const Case& k, std::vector<Tensor>& values) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor x(DataType::kFloat32, {2, 3, 6, 7});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = dist(rng);
  const Tensor rois =
      Tensor::from_values<float>({4, 4}, std::vector<float>{0.5f, 1.0f, 5.0f, 4.5f, -2.0f, -1.5f, 3.0f, 2.0f, 4.0f,
                                                            3.0f, 9.0f, 8.0f, 8.0f, 7.5f, 12.0f, 11.0f});
  const Tensor index = Tensor::from_int64s({4}, {0, 1, 1, 0});
  values = {x, rois, index};
  return testing::one_node_graph("RoiAlign", k.attrs, values);
}

}  // namespace

class TestTeBuildersRoiAlign : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void compiles_and_matches_the_reference_data() {
    std::vector<std::string> names;
    for (const Case& k : cases()) names.push_back(k.name);
    testing::add_case_rows(names);
  }
  void compiles_and_matches_the_reference() {
    QFETCH(int, index);
    QFETCH(QString, target);
    std::vector<Tensor> values;
    const Case& k = cases()[static_cast<size_t>(index)];
    const Graph g = case_graph(k, values);
    const QString failure = testing::compiled_vs_reference(g, values, target, testing::kFloat32Rounding);
    QVERIFY2(failure.isEmpty(), qPrintable(QString("%1 on %2: %3").arg(k.name, target, failure)));
  }

  void adaptive_sampling_runs_the_reference_kernel() {
    std::vector<Tensor> values;
    const Graph g = case_graph({"adaptive", {}}, values);
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm"));
    bool declined = false;
    for (const auto& kernel : compiled->kernels())
      declined = declined || (!kernel.compiled && kernel.fallback_reason.find("sampling_ratio 0") != std::string::npos);
    QVERIFY(declined);
    QCOMPARE(compiled->run(values)[0].get_double(0), run_reference(g, values)[0].get_double(0));
  }
};

QTEST_APPLESS_MAIN(TestTeBuildersRoiAlign)
#include "test_te_builders_roi_align.moc"
