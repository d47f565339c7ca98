// The recurrent builders (core/graph/ops/te/builders_recurrent.cpp): RNN, GRU and LSTM nodes in
// every direction and layout, with sequence lengths, initial states, peepholes, clipping and
// non-default activations, compile to kernels on every CPU backend with no reference fallback and
// compute what the reference kernel computes on random inputs; a sequence too long to unroll is
// declined and still runs.
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
  int64_t seq, batch, input, hidden;
  bool lens = false, initial = false, peepholes = false;
  int outputs = 2;
};

int64_t gates_of(const std::string& op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"rnn_forward", "RNN", {}, 3, 2, 3, 4},
      {"rnn_reverse_lens_initial", "RNN", {{"direction", std::string("reverse")}}, 4, 3, 2, 3, true, true},
      {"rnn_relu_batch_first",
       "RNN",
       {{"activations", std::vector<std::string>{"Relu", "LeakyRelu"}},
        {"activation_alpha", std::vector<double>{0.2f}},
        {"direction", std::string("bidirectional")},
        {"layout", int64_t{1}}},
       3,
       2,
       2,
       3,
       true},
      {"gru_bidirectional_lens", "GRU", {{"direction", std::string("bidirectional")}}, 4, 3, 3, 2, true, true},
      {"gru_linear_before_reset_batch_first",
       "GRU",
       {{"linear_before_reset", int64_t{1}}, {"layout", int64_t{1}}, {"clip", 0.8}},
       3,
       2,
       2,
       4,
       false,
       true},
      {"lstm_forward", "LSTM", {}, 3, 2, 3, 3, false, false, false, 3},
      {"lstm_bidirectional_everything",
       "LSTM",
       {{"direction", std::string("bidirectional")}, {"clip", 1.5}},
       4,
       3,
       2,
       3,
       true,
       true,
       true,
       3},
      {"lstm_input_forget_activations_batch_first",
       "LSTM",
       {{"input_forget", int64_t{1}},
        {"layout", int64_t{1}},
        {"activations", std::vector<std::string>{"HardSigmoid", "Softsign", "ScaledTanh"}},
        {"activation_alpha", std::vector<double>{0.3f, 0.9f}},
        {"activation_beta", std::vector<double>{0.4f, 1.1f}}},
       3,
       2,
       2,
       3,
       true,
       false,
       true,
       3},
  };
  return all;
}

Tensor random_tensor(const Shape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DataType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// A one-node graph of the case, every present input a graph input, and the values to feed it.
Graph case_graph(const Case& k, std::vector<Tensor>& values) {
  auto direction = k.attrs.find("direction");
  const bool bidirectional = direction != k.attrs.end() && std::get<std::string>(direction->second) == "bidirectional";
  const bool batch_first = k.attrs.count("layout") > 0;
  const int64_t D = bidirectional ? 2 : 1, G = gates_of(k.op) * k.hidden;
  const Shape state = batch_first ? Shape{k.batch, D, k.hidden} : Shape{D, k.batch, k.hidden};
  std::vector<Tensor> in = {
      random_tensor(batch_first ? Shape{k.batch, k.seq, k.input} : Shape{k.seq, k.batch, k.input}, 1),
      random_tensor({D, G, k.input}, 2), random_tensor({D, G, k.hidden}, 3), random_tensor({D, 2 * G}, 4)};
  std::vector<int32_t> lens;
  for (int64_t b = 0; b < k.batch; ++b) lens.push_back(static_cast<int32_t>(k.seq - b % k.seq));
  in.push_back(k.lens ? Tensor::from_values<int32_t>({k.batch}, lens) : Tensor());
  in.push_back(k.initial ? random_tensor(state, 5) : Tensor());
  if (std::string(k.op) == "LSTM") {
    in.push_back(k.initial ? random_tensor(state, 6) : Tensor());
    in.push_back(k.peepholes ? random_tensor({D, 3 * k.hidden}, 7) : Tensor());
  }
  while (!in.empty() && !in.back().defined()) in.pop_back();

  values = testing::defined_inputs(in);
  return testing::one_node_graph(k.op, k.attrs, in, k.outputs);
}

void expect_match(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const QString& what) {
  QCOMPARE(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    QCOMPARE(got[o].shape(), want[o].shape());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const double w = want[o].get_double(i), d = std::abs(got[o].get_double(i) - w);
      QVERIFY2(d <= 1e-5 + 1e-4 * std::abs(w), qPrintable(QString("%1: output %2 element %3 is %4, expected %5")
                                                              .arg(what)
                                                              .arg(o)
                                                              .arg(i)
                                                              .arg(got[o].get_double(i))
                                                              .arg(w)));
    }
  }
}

}  // namespace

class TestTeBuildersRecurrent : public QObject {
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
    const Graph g = case_graph(k, values);
    const QString failure = testing::compiled_vs_reference(g, values, target, testing::kFloat32Rounding);
    QVERIFY2(failure.isEmpty(), qPrintable(QString("%1 on %2: %3").arg(k.name, target, failure)));
  }

  // 40 steps in both directions: more than the builder unrolls, so the node runs its reference kernel.
  void long_sequences_fall_back_to_the_reference() {
    const Case k{"long", "GRU", {{"direction", std::string("bidirectional")}}, 40, 1, 2, 2};
    std::vector<Tensor> values;
    const Graph g = case_graph(k, values);
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse("llvm"));
    bool declined = false;
    for (const auto& kernel : compiled->kernels())
      declined = declined || (!kernel.compiled && kernel.fallback_reason.find("80 time steps") != std::string::npos);
    QVERIFY(declined);
    expect_match(compiled->run(values), run_reference(g, values), "long");
  }
};

QTEST_APPLESS_MAIN(TestTeBuildersRecurrent)
#include "test_te_builders_recurrent.moc"
