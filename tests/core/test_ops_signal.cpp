// STFT and MelWeightMatrix (core/graph/ops/signal_ops.h): frame count and frequencies, the
// transform of single frames against a direct sum, a complex signal, the errors of inconsistent
// inputs; the filter bank of ONNX's node test.
#include <QtTest>
#include <numbers>

#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;

namespace {

// STFT with frame_step and frame_length (0: absent) as constants; the signal and the window (when
// defined) are graph inputs.
Tensor stft(const AttrMap& attrs, const Tensor& x, int64_t step, const Tensor& window, int64_t length) {
  Graph g;
  std::vector<ValueId> in = {g.add_input("x", {x.dtype(), x.shape()}),
                             g.add_constant("step", Tensor::from_int64s({}, {step})),
                             window.defined() ? g.add_input("w", {window.dtype(), window.shape()}) : kNoValue};
  if (length > 0) in.push_back(g.add_constant("length", Tensor::from_int64s({}, {length})));
  const OpDef& op = get_op("STFT");
  g.outputs = {g.add_node1("node", op, op.parse_attrs("STFT", attrs), in)};
  infer_types(g);
  std::vector<Tensor> feeds = {x};
  if (window.defined()) feeds.push_back(window);
  return run_reference(g, feeds)[0];
}

QString stft_error(const AttrMap& attrs, const Tensor& x, int64_t step, const Tensor& window, int64_t length) {
  try {
    stft(attrs, x, step, window, length);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestOpsSignal : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void frames_and_frequencies() {
    const Tensor x = random_f32({2, 20, 1}, 3);
    // N = 6, step 4: frames start at 0, 4, 8, 12 (16 + 6 > 20); onesided: 6/2 + 1 frequencies.
    QCOMPARE(stft({}, x, 4, Tensor(), 6).shape(), (Shape{2, 4, 4, 2}));
    QCOMPARE(stft({{"onesided", int64_t{0}}}, x, 4, random_f32({5}, 4), 0).shape(), (Shape{2, 4, 5, 2}));
  }

  void each_frame_is_a_windowed_dft() {
    const int64_t N = 5, step = 3;
    const Tensor x = random_f32({1, 11, 2}, 7), w = random_f32({N}, 8);
    const Tensor y = stft({{"onesided", int64_t{0}}}, x, step, w, 0);
    QCOMPARE(y.shape(), (Shape{1, 3, N, 2}));
    for (int64_t f = 0; f < 3; ++f)
      for (int64_t k = 0; k < N; ++k) {
        double re = 0, im = 0;
        for (int64_t n = 0; n < N; ++n) {
          const double theta = -2 * std::numbers::pi * static_cast<double>(k * n) / N;
          const double a = x.get_double((f * step + n) * 2) * w.get_double(n);
          const double b = x.get_double((f * step + n) * 2 + 1) * w.get_double(n);
          re += a * std::cos(theta) - b * std::sin(theta);
          im += a * std::sin(theta) + b * std::cos(theta);
        }
        QVERIFY(std::abs(y.get_double(((f * N) + k) * 2) - re) < 1e-5);
        QVERIFY(std::abs(y.get_double(((f * N) + k) * 2 + 1) - im) < 1e-5);
      }
  }

  // The filter bank of ONNX's node test: 8 bands over 9 bins of a 16-point DFT at 8192 Hz, 0 to
  // 4096 Hz. The band edges fall on bins 0 0 0 1 1 2 3 4 5 6, so most bands are a single 1.
  void mel_weight_matrix() {
    Graph g;
    const std::vector<ValueId> in = {
        g.add_constant("bands", Tensor::from_values<int32_t>({}, std::vector<int32_t>{8})),
        g.add_constant("length", Tensor::from_values<int32_t>({}, std::vector<int32_t>{16})),
        g.add_input("rate", {DataType::kInt32, {}}), g.add_input("low", {DataType::kFloat32, {}}),
        g.add_input("high", {DataType::kFloat32, {}})};
    const OpDef& op = get_op("MelWeightMatrix");
    g.outputs = {g.add_node1("node", op, op.parse_attrs("MelWeightMatrix", {}), in)};
    infer_types(g);
    QCOMPARE(g.value(g.outputs[0]).type, (TensorType{DataType::kFloat32, {9, 8}}));
    const Tensor rate = Tensor::from_values<int32_t>({}, std::vector<int32_t>{8192});
    const Tensor y = run_reference(g, {rate, f32({}, {0.0f}), f32({}, {4096.0f})})[0];
    // Row by row, the (bin, band) elements that are 1; all others are 0.
    const std::vector<std::pair<int64_t, int64_t>> ones = {{0, 0}, {0, 1}, {1, 2}, {1, 3},
                                                           {2, 4}, {3, 5}, {4, 6}, {5, 7}};
    for (int64_t bin = 0; bin < 9; ++bin)
      for (int64_t band = 0; band < 8; ++band) {
        const bool one = std::find(ones.begin(), ones.end(), std::make_pair(bin, band)) != ones.end();
        QCOMPARE(y.get_double(bin * 8 + band), one ? 1.0 : 0.0);
      }
    // Edges above the Nyquist frequency reach past the spectrum.
    bool refused = false;
    try {
      run_reference(g, {rate, f32({}, {0.0f}), f32({}, {20000.0f})});
    } catch (const Error& e) {
      refused = std::string(e.what()).find("outside the spectrum") != std::string::npos;
    }
    QVERIFY(refused);
  }

  void rejects_inconsistent_inputs() {
    const Tensor x = random_f32({1, 8, 1}, 1);
    QVERIFY(stft_error({}, x, 2, Tensor(), 0).contains("needs a window or a frame_length"));
    QVERIFY(stft_error({}, x, 2, random_f32({4}, 2), 3).contains("the window has 4 values, frame_length is 3"));
    QVERIFY(stft_error({}, x, 2, Tensor(), 9).contains("must lie in [1, 8]"));
    QVERIFY(stft_error({}, random_f32({1, 8, 2}, 3), 2, Tensor(), 4).contains("onesided=1 needs a real signal"));
  }
};

QTEST_APPLESS_MAIN(TestOpsSignal)
#include "test_ops_signal.moc"
