// The normalization and Lp-pooling builders (core/graph/ops/te/builders_normalization.cpp): a
// one-node graph per op, with attributes away from their defaults (asymmetric LRN windows, padded
// and strided Lp windows, odd p, partial MVN axes), compiles to a kernel on every CPU backend with
// no reference fallback, and computes what the reference kernel computes on random inputs.
#include <QtTest>
#include <cmath>
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
  const char* op;
  AttrMap attrs;
  std::vector<Shape> inputs;  // every input a graph input, filled with random values
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"instance_norm", "InstanceNormalization", {{"epsilon", 0.01}}, {{2, 3, 4, 5}, {3}, {3}}},
      {"instance_norm_3d", "InstanceNormalization", {}, {{1, 2, 3, 2, 4}, {2}, {2}}},
      {"mvn_default_axes", "MeanVarianceNormalization", {}, {{2, 3, 4, 5}}},
      {"mvn_axes_1_3", "MeanVarianceNormalization", {{"axes", std::vector<int64_t>{1, -1}}}, {{2, 3, 4, 5}}},
      // No axes: every element is its own group, so every output is 0.
      {"mvn_no_axes", "MeanVarianceNormalization", {{"axes", std::vector<int64_t>{}}}, {{2, 3, 4}}},
      {"lrn_even_size", "LRN", {{"size", int64_t{4}}, {"alpha", 0.02}, {"beta", 0.6}, {"bias", 1.5}}, {{2, 5, 3, 3}}},
      {"lrn_odd_size", "LRN", {{"size", int64_t{3}}, {"alpha", 0.5}, {"beta", 0.75}, {"bias", 2.0}}, {{1, 7, 4}}},
      {"lp_pool_p3_padded",
       "LpPool",
       {{"kernel_shape", std::vector<int64_t>{3, 2}},
        {"strides", std::vector<int64_t>{2, 1}},
        {"pads", std::vector<int64_t>{1, 0, 1, 1}},
        {"p", int64_t{3}}},
       {{1, 2, 7, 6}}},
      {"lp_pool_p2_same_upper",
       "LpPool",
       {{"kernel_shape", std::vector<int64_t>{2, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"auto_pad", std::string("SAME_UPPER")},
        {"p", int64_t{2}}},
       {{2, 3, 5, 5}}},
      {"lp_pool_p1_1d", "LpPool", {{"kernel_shape", std::vector<int64_t>{3}}, {"p", int64_t{1}}}, {{2, 2, 9}}},
      {"global_lp_pool_p3", "GlobalLpPool", {{"p", int64_t{3}}}, {{2, 3, 4, 5}}},
      {"global_lp_pool_p2", "GlobalLpPool", {}, {{1, 4, 3, 3, 2}}},
  };
  return all;
}

Tensor random_tensor(const Shape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Tensor t(DataType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

}  // namespace

class TestTeBuildersNormalization : public QObject {
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
    const Case& k = cases()[static_cast<size_t>(index)];
    QVERIFY(ops::has_te_builder(k.op));

    std::vector<Tensor> values;
    for (size_t i = 0; i < k.inputs.size(); ++i) values.push_back(random_tensor(k.inputs[i], 17 + i));
    const Graph g = testing::one_node_graph(k.op, k.attrs, values);

    const QString failure = testing::compiled_vs_reference(g, values, target, testing::kFloat32Rounding);
    QVERIFY2(failure.isEmpty(), qPrintable(QString("%1 on %2: %3").arg(k.name, target, failure)));
  }
};

QTEST_APPLESS_MAIN(TestTeBuildersNormalization)
#include "test_te_builders_normalization.moc"
