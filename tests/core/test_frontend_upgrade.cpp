// Opset upgrade: each rule of core/frontend/opset_upgrade.cpp, checked by running an old-opset
// model and its hand-written new-opset equivalent (or the old op's definition) on the same input.
#include <cmath>

#include "test_frontend_models.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

std::vector<Tensor> run(const QTemporaryDir& dir, const OnnxModel& m, const std::vector<Tensor>& inputs) {
  return run_reference(import_onnx(m.save(dir)), inputs);
}

// One-input, one-output model: x → (nodes) → y.
OnnxModel unary(int64_t opset, const std::vector<Dim>& shape, DataType dtype = DataType::kFloat32) {
  OnnxModel m(opset);
  m.input("x", dtype, shape);
  m.output("y", dtype);
  return m;
}

}  // namespace

class TestFrontendUpgrade : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;

  void compare_old_new(const OnnxModel& old_model, const OnnxModel& new_model, const std::vector<Tensor>& inputs) {
    const auto old_out = run(dir_, old_model, inputs);
    const auto new_out = run(dir_, new_model, inputs);
    QCOMPARE(old_out.size(), new_out.size());
    for (size_t k = 0; k < old_out.size(); ++k) compare_tensors(old_out[k], new_out[k]);
  }

 private Q_SLOTS:
  void clip_min_max_attributes_become_inputs() {
    // f64, so the constants must take the input's type, not f32.
    OnnxModel old_model = unary(10, {5}, DataType::kFloat64);
    auto& clip = old_model.node("Clip", {"x"}, {"y"}, "clip");
    attr_float(clip, "min", -1.0f);
    attr_float(clip, "max", 2.0f);
    OnnxModel new_model = unary(13, {5}, DataType::kFloat64);
    new_model.initializer("lo", Tensor::scalar<double>(-1)).initializer("hi", Tensor::scalar<double>(2));
    new_model.node("Clip", {"x", "lo", "hi"}, {"y"});
    const double x[5] = {-3, -0.5, 0, 1.5, 7};
    const Tensor in = Tensor::from_values<double>({5}, x);
    compare_old_new(old_model, new_model, {in});
    compare_tensors(run(dir_, old_model, {in})[0],
                    Tensor::from_values<double>({5}, std::vector<double>{-1, -0.5, 0, 1.5, 2}));

    OnnxModel only_max = unary(10, {5});
    attr_float(only_max.node("Clip", {"x"}, {"y"}), "max", 0.25f);
    compare_tensors(run(dir_, only_max, {f32({5}, {-3, -0.5, 0, 1.5, 7})})[0], f32({5}, {-3, -0.5, 0, 0.25, 0.25}));
  }

  void split_attribute_becomes_input() {
    OnnxModel old_model(11);
    old_model.input("x", DataType::kFloat32, {4, 2});
    auto& split = old_model.node("Split", {"x"}, {"a", "b"});
    attr_ints(split, "split", {1, 3});
    attr_int(split, "axis", 0);
    old_model.output("a", DataType::kFloat32).output("b", DataType::kFloat32);
    OnnxModel new_model(13);
    new_model.input("x", DataType::kFloat32, {4, 2});
    new_model.initializer("sizes", i64({2}, {1, 3}));
    attr_int(new_model.node("Split", {"x", "sizes"}, {"a", "b"}), "axis", 0);
    new_model.output("a", DataType::kFloat32).output("b", DataType::kFloat32);
    compare_old_new(old_model, new_model, {ramp({4, 2})});
    QCOMPARE(shape_str(run(dir_, old_model, {ramp({4, 2})})[1].shape()), std::string("[3,2]"));
  }

  void squeeze_unsqueeze_axes_become_inputs() {
    OnnxModel old_sq = unary(11, {1, 3, 1, 2});
    attr_ints(old_sq.node("Squeeze", {"x"}, {"y"}), "axes", {0, 2});
    OnnxModel new_sq = unary(13, {1, 3, 1, 2});
    new_sq.initializer("axes", i64({2}, {0, 2}));
    new_sq.node("Squeeze", {"x", "axes"}, {"y"});
    compare_old_new(old_sq, new_sq, {ramp({1, 3, 1, 2})});
    QCOMPARE(shape_str(run(dir_, old_sq, {ramp({1, 3, 1, 2})})[0].shape()), std::string("[3,2]"));

    OnnxModel old_unsq = unary(11, {2, 3});
    attr_ints(old_unsq.node("Unsqueeze", {"x"}, {"y"}), "axes", {0, 3});
    OnnxModel new_unsq = unary(13, {2, 3});
    new_unsq.initializer("axes", i64({2}, {0, 3}));
    new_unsq.node("Unsqueeze", {"x", "axes"}, {"y"});
    compare_old_new(old_unsq, new_unsq, {ramp({2, 3})});
    QCOMPARE(shape_str(run(dir_, old_unsq, {ramp({2, 3})})[0].shape()), std::string("[1,2,3,1]"));
  }

  void reduce_sum_axes_become_input() {
    OnnxModel old_model = unary(11, {2, 3, 2});
    auto& r = old_model.node("ReduceSum", {"x"}, {"y"});
    attr_ints(r, "axes", {1});
    attr_int(r, "keepdims", 0);
    OnnxModel new_model = unary(13, {2, 3, 2});
    new_model.initializer("axes", i64({1}, {1}));
    attr_int(new_model.node("ReduceSum", {"x", "axes"}, {"y"}), "keepdims", 0);
    compare_old_new(old_model, new_model, {ramp({2, 3, 2})});
    const Tensor x = ramp({2, 3, 2});
    const Tensor y = run(dir_, old_model, {x})[0];
    QCOMPARE(shape_str(y.shape()), std::string("[2,2]"));
    QCOMPARE(y.get_double(1), x.get_double(1) + x.get_double(3) + x.get_double(5));
  }

  void pad_attributes_become_inputs() {
    OnnxModel old_model = unary(10, {2, 2});
    auto& pad = old_model.node("Pad", {"x"}, {"y"});
    attr_ints(pad, "pads", {0, 1, 0, 2});
    attr_float(pad, "value", 1.5f);
    OnnxModel new_model = unary(13, {2, 2});
    new_model.initializer("pads", i64({4}, {0, 1, 0, 2})).initializer("value", Tensor::scalar<float>(1.5f));
    new_model.node("Pad", {"x", "pads", "value"}, {"y"});
    compare_old_new(old_model, new_model, {f32({2, 2}, {1, 2, 3, 4})});
    compare_tensors(run(dir_, old_model, {f32({2, 2}, {1, 2, 3, 4})})[0],
                    f32({2, 5}, {1.5, 1, 2, 1.5, 1.5, 1.5, 3, 4, 1.5, 1.5}));

    OnnxModel reflect = unary(10, {1, 3});
    auto& rp = reflect.node("Pad", {"x"}, {"y"});
    attr_ints(rp, "pads", {0, 2, 0, 1});
    attr_string(rp, "mode", "reflect");
    compare_tensors(run(dir_, reflect, {f32({1, 3}, {1, 2, 3})})[0], f32({1, 6}, {3, 2, 1, 2, 3, 2}));
  }

  void slice_attributes_become_inputs() {
    OnnxModel old_model = unary(9, {3, 4});
    auto& s = old_model.node("Slice", {"x"}, {"y"});
    attr_ints(s, "starts", {1, 0});
    attr_ints(s, "ends", {3, 3});
    attr_ints(s, "axes", {0, 1});
    OnnxModel new_model = unary(13, {3, 4});
    new_model.initializer("starts", i64({2}, {1, 0})).initializer("ends", i64({2}, {3, 3}));
    new_model.initializer("axes", i64({2}, {0, 1}));
    new_model.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
    compare_old_new(old_model, new_model, {ramp({3, 4})});
    QCOMPARE(shape_str(run(dir_, old_model, {ramp({3, 4})})[0].shape()), std::string("[2,3]"));
  }

  void dropout_ratio_attribute_is_moved() {
    OnnxModel old_model = unary(10, {4});
    attr_float(old_model.node("Dropout", {"x"}, {"y"}), "ratio", 0.3f);
    compare_tensors(run(dir_, old_model, {f32({4}, {1, -2, 3, -4})})[0], f32({4}, {1, -2, 3, -4}));
  }

  void softmax_family_keeps_coerce_to_2d_semantics() {
    // Opset 11 Softmax(axis=1) on [2,3,2] normalises over the 6 trailing elements of each batch
    // row together; opset 13 would normalise over axis 1 alone.
    const Tensor x = ramp({2, 3, 2});
    for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
      OnnxModel old_model = unary(11, {2, 3, 2});
      attr_int(old_model.node(op, {"x"}, {"y"}, "op"), "axis", 1);
      const Tensor y = run(dir_, old_model, {x})[0];
      QCOMPARE(shape_str(y.shape()), std::string("[2,3,2]"));
      Tensor want(DataType::kFloat32, {2, 3, 2});
      for (int b = 0; b < 2; ++b) {
        double mx = -1e30, sum = 0;
        int arg = 0;
        for (int i = 0; i < 6; ++i)
          if (x.get_double(b * 6 + i) > mx) mx = x.get_double(b * 6 + i), arg = i;
        for (int i = 0; i < 6; ++i) sum += std::exp(x.get_double(b * 6 + i) - mx);
        for (int i = 0; i < 6; ++i) {
          const double e = std::exp(x.get_double(b * 6 + i) - mx);
          const double v = std::string(op) == "Softmax"      ? e / sum
                           : std::string(op) == "LogSoftmax" ? std::log(e / sum)
                                                             : (i == arg ? 1.0 : 0.0);
          want.set_double(b * 6 + i, v);
        }
      }
      compare_tensors(y, want);
      if (QTest::currentTestFailed()) QFAIL(op);
    }
  }

  void softmax_on_the_last_axis_is_left_alone() {
    OnnxModel explicit_last = unary(11, {2, 3});
    attr_int(explicit_last.node("Softmax", {"x"}, {"y"}), "axis", -1);
    QCOMPARE(import_onnx(explicit_last.save(dir_)).nodes.size(), size_t{1});

    // The classifier head of old models: default axis 1 on a rank-2 value computed by another
    // node (its rank comes from ONNX shape inference). Same result as opset 13's last-axis Softmax.
    OnnxModel head = unary(11, {2, 3});
    head.node("Relu", {"x"}, {"r"});
    head.node("Softmax", {"r"}, {"y"});
    OnnxModel head13 = unary(13, {2, 3});
    head13.node("Relu", {"x"}, {"r"});
    attr_int(head13.node("Softmax", {"r"}, {"y"}), "axis", -1);
    QCOMPARE(import_onnx(head.save(dir_)).nodes.size(), size_t{2});
    compare_old_new(head, head13, {ramp({2, 3})});
  }

  void upsample_becomes_resize() {
    const Tensor x = ramp({1, 1, 2, 2});
    // Opset 7: scales as an attribute; nearest picks x[floor(i / 2), floor(j / 3)].
    OnnxModel v7 = unary(7, {1, 1, 2, 2});
    attr_floats(v7.node("Upsample", {"x"}, {"y"}), "scales", {1, 1, 2, 3});
    const Tensor y7 = run(dir_, v7, {x})[0];
    QCOMPARE(shape_str(y7.shape()), std::string("[1,1,4,6]"));
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 6; ++j) QCOMPARE(y7.get_double(i * 6 + j), x.get_double((i / 2) * 2 + j / 3));

    // Opset 9: scales as an input, same result.
    OnnxModel v9 = unary(9, {1, 1, 2, 2});
    v9.initializer("scales", f32({4}, {1, 1, 2, 3}));
    v9.node("Upsample", {"x", "scales"}, {"y"});
    compare_tensors(run(dir_, v9, {x})[0], y7);

    // Resize in opset 10 had Upsample's inputs and coordinates.
    OnnxModel r10 = unary(10, {1, 1, 2, 2});
    r10.initializer("scales", f32({4}, {1, 1, 2, 3}));
    r10.node("Resize", {"x", "scales"}, {"y"});
    compare_tensors(run(dir_, r10, {x})[0], y7);

    // Linear: the opset-13 equivalent is Resize with asymmetric coordinates.
    OnnxModel lin9 = unary(9, {1, 1, 2, 2});
    lin9.initializer("scales", f32({4}, {1, 1, 2, 2}));
    attr_string(lin9.node("Upsample", {"x", "scales"}, {"y"}), "mode", "linear");
    OnnxModel resize13 = unary(13, {1, 1, 2, 2});
    resize13.initializer("scales", f32({4}, {1, 1, 2, 2}));
    auto& r = resize13.node("Resize", {"x", "", "scales"}, {"y"});
    attr_string(r, "mode", "linear");
    attr_string(r, "coordinate_transformation_mode", "asymmetric");
    compare_old_new(lin9, resize13, {x});
    // Asymmetric linear: output (0,1) sits halfway between inputs (0,0) and (0,1).
    QCOMPARE(run(dir_, lin9, {x})[0].get_double(1), (x.get_double(0) + x.get_double(1)) / 2);
  }

  void batchnorm_spatial_attribute() {
    auto bn_model = [](int64_t opset, std::optional<int64_t> spatial) {
      OnnxModel m = unary(opset, {1, 2, 2, 2});
      m.initializer("scale", f32({2}, {2, 0.5})).initializer("b", f32({2}, {1, -1}));
      m.initializer("mean", f32({2}, {0.5, 1})).initializer("var", f32({2}, {4, 0.25}));
      auto& bn = m.node("BatchNormalization", {"x", "scale", "b", "mean", "var"}, {"y"}, "bn");
      if (spatial) attr_int(bn, "spatial", *spatial);
      return m;
    };
    compare_old_new(bn_model(7, 1), bn_model(15, std::nullopt), {ramp({1, 2, 2, 2})});
    // No rewrite for spatial=0: the node stays, opaque, and blocks compiling with the reason.
    const Graph g = import_onnx(bn_model(7, 0).save(dir_));
    QVERIFY(is_opaque(g.nodes.at(0)));
    const QString msg = QString::fromStdString(blockers_message(g));
    QVERIFY2(msg.contains("node 'bn' (BatchNormalization)") && msg.contains("opset 7 form: spatial=0"),
             qPrintable(msg));
  }

  void legacy_broadcast_aligns_b_at_axis() {
    auto add_model = [](int64_t opset, const Tensor& b, bool legacy) {
      OnnxModel m = unary(opset, {2, 3, 4});
      m.initializer("b", b);
      auto& add = m.node("Add", {"x", "b"}, {"y"});
      if (legacy) attr_int(add, "broadcast", 1), attr_int(add, "axis", 1);
      return m;
    };
    compare_old_new(add_model(6, f32({3}, {1, 10, 100}), true), add_model(13, f32({3, 1}, {1, 10, 100}), false),
                    {ramp({2, 3, 4})});
  }

  void reshape_shape_attribute_becomes_input() {
    OnnxModel old_model = unary(4, {2, 3});
    attr_ints(old_model.node("Reshape", {"x"}, {"y"}), "shape", {3, -1});
    OnnxModel new_model = unary(13, {2, 3});
    new_model.initializer("shape", Tensor::from_int64s({2}, {3, -1}));
    new_model.node("Reshape", {"x", "shape"}, {"y"});
    compare_old_new(old_model, new_model, {ramp({2, 3})});
  }

  void prelu_slope_is_per_channel_before_opset_7() {
    OnnxModel old_model = unary(6, {1, 2, 2, 2});
    old_model.initializer("slope", f32({2}, {0.5, 2}));
    old_model.node("PRelu", {"x", "slope"}, {"y"});
    OnnxModel new_model = unary(13, {1, 2, 2, 2});
    new_model.initializer("slope", f32({2, 1, 1}, {0.5, 2}));
    new_model.node("PRelu", {"x", "slope"}, {"y"});
    const Tensor x = f32({1, 2, 2, 2}, {-1, -2, 3, -4, -1, -2, 3, -4});
    compare_old_new(old_model, new_model, {x});
  }
};

QTEST_APPLESS_MAIN(TestFrontendUpgrade)
#include "test_frontend_upgrade.moc"
