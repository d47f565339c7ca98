// RNN, GRU and LSTM (core/graph/ops/recurrent.h): shape inference and its errors, the reference
// kernel against equations worked by hand, the relations between directions (reverse = forward
// over the reversed sequence, bidirectional = both side by side, batch-first = transposed), and
// the ONNX node tests run in-process through the reference executor.
#include <QtTest>
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;
namespace fs = std::filesystem;

namespace {

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

const char* kNodeTestNames[] = {
    "gru_batchwise",  "gru_defaults",         "gru_seq_length",         "gru_with_initial_bias",
    "lstm_batchwise", "lstm_defaults",        "lstm_with_initial_bias", "lstm_with_peepholes",
    "rnn_seq_length", "simple_rnn_batchwise", "simple_rnn_defaults",    "simple_rnn_with_initial_bias",
};

Tensor i32(Shape shape, const std::vector<int32_t>& v) { return Tensor::from_values<int32_t>(std::move(shape), v); }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The inputs of a layer with `gates` gates: X [T,B,I], W, R, B random, the rest absent.
std::vector<Tensor> random_layer(int64_t gates, int64_t dirs, int64_t T, int64_t B, int64_t I, int64_t H,
                                 uint64_t seed) {
  return {random_f32({T, B, I}, seed), random_f32({dirs, gates * H, I}, seed + 1),
          random_f32({dirs, gates * H, H}, seed + 2), random_f32({dirs, 2 * gates * H}, seed + 3)};
}

// x [T,B,...] with the first `lens[b]` steps of each batch item b reversed (the rest kept).
Tensor reverse_prefix(const Tensor& x, const std::vector<int64_t>& lens) {
  Tensor out = x.clone();
  const int64_t T = x.shape()[0], B = x.shape()[1], inner = x.numel() / (T * B);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < lens[b]; ++t)
      for (int64_t k = 0; k < inner; ++k)
        out.set_double((t * B + b) * inner + k, x.get_double(((lens[b] - 1 - t) * B + b) * inner + k));
  return out;
}

void expect_error(const QString& got, const QString& want) {
  QVERIFY2(got.contains(want), qPrintable("got: " + got + "\nwanted: " + want));
}

void expect_close(const Tensor& got, const Tensor& want, const char* what) {
  QCOMPARE(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    QVERIFY2(std::abs(got.get_double(i) - want.get_double(i)) <= 1e-6,
             qPrintable(QString("%1: element %2 is %3, expected %4")
                            .arg(what)
                            .arg(i)
                            .arg(got.get_double(i))
                            .arg(want.get_double(i))));
}

std::string run_node_test(const std::string& name) {
  const fs::path dir = kNodeTests / ("test_" + name);
  std::vector<Tensor> feeds;
  for (size_t k = 0; fs::exists(dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")); ++k)
    feeds.push_back(read_tensor_pb((dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string()));
  const std::vector<Tensor> outputs = run_reference(import_onnx((dir / "model.onnx").string()), feeds);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const fs::path want_path = dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb");
    if (!fs::exists(want_path)) continue;  // an output the model names but the test does not check
    const Tensor want = read_tensor_pb(want_path.string());
    if (want.shape() != outputs[k].shape())
      return "output " + std::to_string(k) + " has shape " + shape_str(outputs[k].shape()) + ", expected " +
             shape_str(want.shape());
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double g = outputs[k].get_double(i), w = want.get_double(i);
      if (std::abs(g - w) > 1e-7 + 1e-3 * std::abs(w))
        return "output " + std::to_string(k) + " element " + std::to_string(i) + " is " + std::to_string(g) +
               ", expected " + std::to_string(w);
    }
  }
  return {};
}

}  // namespace

class TestOpsRecurrent : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void infers_shapes_for_every_layout_and_direction() {
    const TensorType x{DataType::kFloat32, {5, 2, 3}};
    auto lstm = infer_op("LSTM", {{"hidden_size", int64_t{4}}, {"direction", std::string("bidirectional")}},
                         {x, {DataType::kFloat32, {2, 16, 3}}, {DataType::kFloat32, {2, 16, 4}}}, 3);
    QCOMPARE(lstm[0].shape, (Shape{5, 2, 2, 4}));
    QCOMPARE(lstm[1].shape, (Shape{2, 2, 4}));
    QCOMPARE(lstm[2].shape, (Shape{2, 2, 4}));
    // Batch first: X [B,T,I] → Y [B,T,D,H], Y_h [B,D,H].
    auto gru = infer_op(
        "GRU", {{"layout", int64_t{1}}},
        {{DataType::kFloat64, {2, 5, 3}}, {DataType::kFloat64, {1, 12, 3}}, {DataType::kFloat64, {1, 12, 4}}}, 2);
    QCOMPARE(gru[0], (TensorType{DataType::kFloat64, {2, 5, 1, 4}}));
    QCOMPARE(gru[1], (TensorType{DataType::kFloat64, {2, 1, 4}}));
    auto rnn = infer_op("RNN", {}, {x, {DataType::kFloat32, {1, 4, 3}}, {DataType::kFloat32, {1, 4, 4}}}, 1);
    QCOMPARE(rnn[0].shape, (Shape{5, 1, 2, 4}));
  }

  void rejects_inconsistent_inputs_and_attributes() {
    const Tensor x = random_f32({2, 1, 3}, 1), w = random_f32({1, 4, 3}, 2), r = random_f32({1, 4, 4}, 3);
    expect_error(error_of("RNN", {}, {x, random_f32({1, 4, 2}, 2), r}),
                 QString("RNN: W has shape [1,4,2], expected [1,4,3]"));
    expect_error(error_of("RNN", {{"direction", std::string("bidirectional")}}, {x, w, r}),
                 QString("RNN: R has shape [1,4,4], expected [2,4,4]"));
    expect_error(error_of("RNN", {{"activations", std::vector<std::string>{"Cube"}}}, {x, w, r}),
                 QString("RNN: unknown activation 'Cube' (known: Relu, Tanh, Sigmoid, Affine, "
                         "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)"));
    expect_error(error_of("GRU", {{"activations", std::vector<std::string>{"Sigmoid"}}},
                          {x, random_f32({1, 12, 3}, 2), random_f32({1, 12, 4}, 3)}),
                 QString("GRU: activations has 1 names; 2 per direction, 1 direction need 2"));
    expect_error(error_of("RNN", {}, {x, w, r, Tensor(), Tensor::from_int64s({1}, {2})}),
                 QString("RNN: sequence_lens has dtype i64; allowed: i32"));
    QVERIFY(error_of("RNN", {{"direction", std::string("sideways")}}, {x, w, r}).contains("direction"));
  }

  // H = 1, I = 1: every step worked by hand.
  void rnn_matches_the_equations() {
    const Tensor x = f32({3, 1, 1}, {0.5f, -1.0f, 2.0f});
    const Tensor w = f32({1, 1, 1}, {0.8f}), r = f32({1, 1, 1}, {-0.6f}), b = f32({1, 2}, {0.1f, 0.2f});
    const Tensor h0 = f32({1, 1, 1}, {0.3f});
    const auto out = run_op("RNN", {}, {x, w, r, b, Tensor(), h0}, 2);
    double h = 0.3;
    for (int t = 0; t < 3; ++t) {
      h = std::tanh(0.8 * x.get_double(t) - 0.6 * h + 0.3);
      QVERIFY(std::abs(out[0].get_double(t) - h) < 1e-6);
    }
    QVERIFY(std::abs(out[1].get_double(0) - h) < 1e-6);
  }

  void gru_matches_the_equations_with_and_without_linear_before_reset() {
    const Tensor x = f32({2, 1, 1}, {0.5f, -1.5f});
    const Tensor w = f32({1, 3, 1}, {0.4f, -0.7f, 0.9f}), r = f32({1, 3, 1}, {0.3f, 0.5f, -0.8f});
    const Tensor b = f32({1, 6}, {0.1f, -0.2f, 0.05f, 0.3f, 0.15f, -0.25f});
    for (int64_t lbr : {0, 1}) {
      const auto out = run_op("GRU", {{"linear_before_reset", lbr}}, {x, w, r, b}, 2);
      double h = 0;
      for (int t = 0; t < 2; ++t) {
        const double xt = x.get_double(t);
        const double z = sigmoid(0.4 * xt + 0.3 * h + 0.1 + 0.3);
        const double rg = sigmoid(-0.7 * xt + 0.5 * h - 0.2 + 0.15);
        const double cand = lbr ? std::tanh(0.9 * xt + 0.05 + rg * (-0.8 * h - 0.25))
                                : std::tanh(0.9 * xt + 0.05 + (rg * h) * -0.8 - 0.25);
        h = (1 - z) * cand + z * h;
        QVERIFY2(std::abs(out[0].get_double(t) - h) < 1e-6, qPrintable(QString("lbr %1, t %2").arg(lbr).arg(t)));
      }
    }
  }

  void lstm_matches_the_equations_with_peepholes_clip_and_input_forget() {
    const Tensor x = f32({2, 1, 1}, {0.7f, -0.4f});
    // Gate rows i, o, f, c.
    const Tensor w = f32({1, 4, 1}, {0.5f, -0.3f, 0.8f, 1.2f}), r = f32({1, 4, 1}, {0.2f, 0.6f, -0.4f, 0.9f});
    const Tensor p = f32({1, 3}, {0.3f, -0.5f, 0.7f});  // i, o, f
    for (int64_t input_forget : {0, 1}) {
      const auto out = run_op("LSTM", {{"clip", 0.6}, {"input_forget", input_forget}},
                              {x, w, r, Tensor(), Tensor(), Tensor(), Tensor(), p}, 3);
      auto clip = [](double v) { return std::clamp(v, -0.6, 0.6); };
      double h = 0, c = 0;
      for (int t = 0; t < 2; ++t) {
        const double xt = x.get_double(t);
        const double i = sigmoid(clip(0.5 * xt + 0.2 * h + 0.3 * c));
        const double f = input_forget ? 1 - i : sigmoid(clip(0.8 * xt - 0.4 * h + 0.7 * c));
        const double g = std::tanh(clip(1.2 * xt + 0.9 * h));
        c = f * c + i * g;
        const double o = sigmoid(clip(-0.3 * xt + 0.6 * h - 0.5 * c));
        h = o * std::tanh(c);
        QVERIFY(std::abs(out[0].get_double(t) - h) < 1e-6);
      }
      QVERIFY(std::abs(out[1].get_double(0) - h) < 1e-6);
      QVERIFY(std::abs(out[2].get_double(0) - c) < 1e-6);
    }
  }

  void activations_take_their_alpha_and_beta_in_order() {
    // RNN with f = Affine(alpha 2, beta 0.5): h = 2·(x·w) + 0.5 with R = 0.
    const Tensor x = f32({1, 1, 1}, {0.25f}), w = f32({1, 1, 1}, {2.0f}), r = f32({1, 1, 1}, {0.0f});
    const auto y = run1("RNN",
                        {{"activations", std::vector<std::string>{"Affine"}},
                         {"activation_alpha", std::vector<double>{2.0f}},
                         {"activation_beta", std::vector<double>{0.5f}}},
                        {x, w, r});
    QVERIFY(std::abs(y.get_double(0) - 1.5) < 1e-6);
  }

  // Reverse over X equals forward over X with each item's first L steps reversed, Y reversed back
  // the same way; bidirectional holds both; batch-first is the transpose.
  void directions_and_sequence_lengths_agree() {
    for (const char* op : {"RNN", "GRU", "LSTM"}) {
      const int64_t gates = std::string(op) == "RNN" ? 1 : std::string(op) == "GRU" ? 3 : 4;
      const int64_t T = 4, B = 3, I = 2, H = 3;
      std::vector<Tensor> in = random_layer(gates, 1, T, B, I, H, 40);
      const Tensor lens = i32({B}, {4, 2, 3});
      const std::vector<int64_t> len_values = {4, 2, 3};
      const int outputs = std::string(op) == "LSTM" ? 3 : 2;
      auto run = [&](const char* direction, const Tensor& x, const std::vector<Tensor>& params) {
        std::vector<Tensor> inputs = {x};
        inputs.insert(inputs.end(), params.begin() + 1, params.end());
        inputs.push_back(lens);
        return run_op(op, {{"direction", std::string(direction)}}, inputs, outputs);
      };
      const auto forward = run("forward", reverse_prefix(in[0], len_values), in);
      const auto reverse = run("reverse", in[0], in);
      // Y [T,1,B,H]: reversed back per item; zeros past the length in both.
      expect_close(reverse[0].reshaped({T, B, H}), reverse_prefix(forward[0].reshaped({T, B, H}), len_values), op);
      expect_close(reverse[1], forward[1], op);

      // Bidirectional: the forward weights in direction 0, the reverse ones (the same here) in 1.
      std::vector<Tensor> both = {in[0]};
      for (size_t k = 1; k < 4; ++k) {
        Shape s = in[k].shape();
        s[0] = 2;
        Tensor t(DataType::kFloat32, s);
        for (int64_t e = 0; e < in[k].numel(); ++e) {
          t.set_double(e, in[k].get_double(e));
          t.set_double(e + in[k].numel(), in[k].get_double(e));
        }
        both.push_back(t);
      }
      const auto bi = run("bidirectional", in[0], both);
      const auto fwd = run("forward", in[0], in);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t e = 0; e < B * H; ++e) {
          QCOMPARE(bi[0].get_double((t * 2 + 0) * B * H + e), fwd[0].get_double(t * B * H + e));
          QCOMPARE(bi[0].get_double((t * 2 + 1) * B * H + e), reverse[0].get_double(t * B * H + e));
        }

      // layout = 1: X [B,T,I] in, Y [B,T,1,H] and Y_h [B,1,H] out.
      Tensor xb(DataType::kFloat32, {B, T, I});
      for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t k = 0; k < I; ++k) xb.set_double((b * T + t) * I + k, in[0].get_double((t * B + b) * I + k));
      std::vector<Tensor> batch_first = {xb, in[1], in[2], in[3], lens};
      const auto bf = run_op(op, {{"layout", int64_t{1}}}, batch_first, outputs);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j)
            QCOMPARE(bf[0].get_double((b * T + t) * H + j), fwd[0].get_double((t * B + b) * H + j));
      // [B,1,H] and [1,B,H] hold the same elements in the same order.
      for (int64_t e = 0; e < B * H; ++e) QCOMPARE(bf[1].get_double(e), fwd[1].get_double(e));
    }
  }

  void node_tests_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : kNodeTestNames) QTest::newRow(name) << QString(name);
  }
  void node_tests() {
    QFETCH(QString, name);
    if (!fs::exists(kNodeTests)) QSKIP("libonnx-testdata is not installed");
    std::string failure;
    try {
      failure = run_node_test(name.toStdString());
    } catch (const Error& e) {
      failure = e.what();
    }
    QVERIFY2(failure.empty(), failure.c_str());
  }
};

QTEST_APPLESS_MAIN(TestOpsRecurrent)
#include "test_ops_recurrent.moc"
