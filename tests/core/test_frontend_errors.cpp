// Bad ONNX input: every failure is one tessel::Error line "FILE: [node 'NAME' (OP): ]reason",
// never a crash and never a partial graph.
#include <filesystem>
#include <random>

#include "test_frontend_models.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// A small valid model: Conv → Relu → Add, with weights, so corruption can hit every kind of field.
OnnxModel small_model() {
  OnnxModel m;
  m.input("x", DataType::kFloat32, {1, 2, 4, 4});
  m.initializer("w", ramp({3, 2, 3, 3}));
  m.initializer("bias", f32({1, 3, 1, 1}, {0.5, -0.5, 1}));
  auto& conv = m.node("Conv", {"x", "w"}, {"c"}, "conv");
  attr_ints(conv, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Add", {"r", "bias"}, {"y"}, "add");
  m.output("y", DataType::kFloat32);
  return m;
}

// Checks the error contract and returns the message.
QString expect_import_error(const std::string& path, const ImportOptions& opts = {}) {
  const QString msg = error_of([&] { import_onnx(path, opts); });
  if (msg == "NO ERROR" || msg.startsWith("NOT A tessel::Error")) QTest::qFail(qPrintable(msg), __FILE__, __LINE__);
  if (!msg.startsWith(QString::fromStdString(path) + ": "))
    QTest::qFail(qPrintable("message does not start with the file: " + msg), __FILE__, __LINE__);
  if (msg.contains('\n')) QTest::qFail(qPrintable("message spans lines: " + msg), __FILE__, __LINE__);
  return msg;
}

onnx::TensorProto* external_initializer(OnnxModel& m, const std::string& location, int64_t n) {
  auto* w = m.graph().add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(n);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value(location);
  return w;
}

OnnxModel model_with_external_weights(const std::string& location, int64_t n = 4) {
  OnnxModel m;
  m.input("x", DataType::kFloat32, {n});
  external_initializer(m, location, n);
  m.node("Mul", {"x", "w"}, {"y"}, "mul");
  m.output("y", DataType::kFloat32);
  return m;
}

}  // namespace

class TestFrontendErrors : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  std::string path(const char* name) { return dir_.filePath(name).toStdString(); }

 private Q_SLOTS:
  void missing_empty_and_folder() {
    QVERIFY(expect_import_error(path("does_not_exist.onnx")).contains("cannot open"));
    OnnxModel::write_file(path("empty.onnx"), "");
    QVERIFY(expect_import_error(path("empty.onnx")).contains("empty"));
    QVERIFY(expect_import_error(dir_.path().toStdString()).contains("folder"));
  }

  void every_truncation_is_refused() {
    const std::string bytes = small_model().bytes();
    QVERIFY(bytes.size() > 300);
    const std::string p = path("truncated.onnx");
    for (size_t len = 1; len < bytes.size(); len += 3) {
      OnnxModel::write_file(p, bytes.substr(0, len));
      expect_import_error(p);
      if (QTest::currentTestFailed()) QFAIL(qPrintable(QString("truncated to %1 bytes").arg(len)));
    }
  }

  void random_corruption_never_crashes() {
    // Bytes flipped at random: the import either succeeds (the damage hit weight values) or
    // reports one line; it never crashes or throws anything but tessel::Error.
    const std::string bytes = small_model().bytes();
    const std::string p = path("corrupt.onnx");
    std::mt19937 rng(1234);
    int refused = 0;
    for (int trial = 0; trial < 400; ++trial) {
      std::string damaged = bytes;
      const int flips = 1 + static_cast<int>(rng() % 6);
      for (int f = 0; f < flips; ++f) damaged[rng() % damaged.size()] = static_cast<char>(rng());
      OnnxModel::write_file(p, damaged);
      const QString msg = error_of([&] { import_onnx(p); });
      if (msg == "NO ERROR") continue;
      ++refused;
      QVERIFY2(!msg.startsWith("NOT A tessel::Error"), qPrintable(msg));
      QVERIFY2(msg.startsWith(QString::fromStdString(p)) && !msg.contains('\n'), qPrintable(msg));
    }
    QVERIFY2(refused > 100, "most random damage to structure must be detected");
  }

  void opset_out_of_range() {
    OnnxModel m(18);
    m.input("x", DataType::kFloat32, {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", DataType::kFloat32);
    const QString msg = expect_import_error(m.save(dir_));
    QVERIFY2(msg.contains("opset 18") && msg.contains("1 to 17"), qPrintable(msg));
  }

  // A model is not refused for what Tessel lacks: each unknown op becomes an opaque node, and
  // compiling fails with one message naming all of them.
  void unknown_ops_become_opaque_nodes_listed_at_once() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {2});
    m.node("Relu", {"x"}, {"a"}, "fine");
    m.node("Foo", {"a"}, {"b"}, "foo_1");
    m.node("Bar", {"b"}, {"c"}, "bar");
    auto& custom = m.node("FusedThing", {"c"}, {"y"});
    custom.set_domain("com.example");
    auto* imp = m.proto().add_opset_import();
    imp->set_domain("com.example");
    imp->set_version(1);
    m.output("y", DataType::kFloat32);
    const Graph g = import_onnx(m.save(dir_));
    QCOMPARE(g.nodes.size(), size_t{4});
    QVERIFY(!is_opaque(g.nodes[0]) && is_opaque(g.nodes[1]) && is_opaque(g.nodes[3]));
    QCOMPARE(op_label(g.nodes[3]), std::string("com.example::FusedThing (opaque)"));
    QCOMPARE(QString::fromStdString(blockers_message(g)),
             QString("cannot compile: 3 parts of the model Tessel cannot run: node 'foo_1' (Foo): unknown op; "
                     "node 'bar' (Bar): unknown op; node 'FusedThing_3' (com.example::FusedThing): unknown op "
                     "(domain com.example)"));
  }

  // ONNX's own shape inference (run for the opaque node) follows a wild pointer on a Conv whose
  // weight has more dimensions than its input (found by fuzz_onnx_import). It runs in a child
  // process, so the model still opens for a look; the Conv's fault is Tessel's to name, and
  // compiling says so.
  void onnx_shape_inference_crash_costs_only_the_types() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {1, 1, 5, 5});
    m.input("w", DataType::kFloat32, {1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3});
    m.node("Conv", {"x", "w"}, {"c"}, "conv");
    m.node("Foo", {"c"}, {"f"}, "foo");
    m.node("Relu", {"f"}, {"y"}, "relu");
    m.output("y", DataType::kFloat32);
    const std::string file = m.save(dir_);
    const QString error = expect_import_error(file);
    QVERIFY2(error.endsWith("node 'conv' (Conv): Conv: W [1,1,3,3,3,3,3,3,3,3,3,3] must have the rank of X [1,1,5,5]"),
             qPrintable(error));
    ImportOptions look;
    look.infer_failure = InferFailure::kMarkUnknown;
    Graph g;
    const QString looked = error_of([&] { g = import_onnx(file, look); });
    QVERIFY2(looked == "NO ERROR", qPrintable(looked));
    QCOMPARE(g.nodes.size(), size_t{3});
    QVERIFY(is_opaque(g.nodes[1]));
    const std::string why = g.value(g.nodes[1].outputs[0]).unknown_type;
    QVERIFY2(why.find("ONNX shape inference failed on this model (crashed with signal") == 0, why.c_str());
    const QString blockers = QString::fromStdString(blockers_message(g));
    QVERIFY2(blockers.contains("node 'conv' (Conv): Conv: W [1,1,3,3,3,3,3,3,3,3,3,3] must have the rank of X"),
             qPrintable(blockers));
  }

  void external_data_must_stay_in_the_model_folder() {
    QTemporaryDir outer;
    const QString inner_dir = outer.filePath("model_dir");
    QVERIFY(QDir().mkpath(inner_dir));
    const std::string secret = outer.filePath("secret.bin").toStdString();
    OnnxModel::write_file(secret, std::string(16, '\x01'));
    std::filesystem::create_symlink(secret, (inner_dir + "/link.bin").toStdString());
    const std::string model = (inner_dir + "/model.onnx").toStdString();

    struct Case {
      std::string location, expected;
    };
    const Case cases[] = {
        {"../secret.bin", "escapes the model's folder"},
        {"sub/../../secret.bin", "escapes the model's folder"},
        {secret, "absolute path"},
        {"link.bin", "resolves outside the model's folder"},
        {"missing.bin", "cannot be opened"},
    };
    for (const Case& c : cases) {
      OnnxModel::write_file(model, model_with_external_weights(c.location).bytes());
      const QString msg = expect_import_error(model);
      QVERIFY2(msg.contains("tensor 'w'") && msg.contains(QString::fromStdString(c.expected)), qPrintable(msg));
    }
  }

  void external_data_shorter_than_claimed() {
    QTemporaryDir dir;
    OnnxModel::write_file(dir.filePath("w.bin").toStdString(), std::string(12, '\0'));  // 3 floats, 4 claimed
    const std::string model = dir.filePath("model.onnx").toStdString();
    OnnxModel::write_file(model, model_with_external_weights("w.bin").bytes());
    const QString msg = expect_import_error(model);
    QVERIFY2(msg.contains("has 12 bytes") && msg.contains("16 bytes"), qPrintable(msg));

    OnnxModel m = model_with_external_weights("w.bin", 2);
    auto* offset = m.graph().mutable_initializer(0)->add_external_data();
    offset->set_key("offset");
    offset->set_value("8");  // 8 + 8 bytes > 12
    OnnxModel::write_file(model, m.bytes());
    QVERIFY(expect_import_error(model).contains("shorter than"));
  }

  void absurd_sizes_are_refused_before_allocating() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {2});
    auto* w = m.graph().add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(int64_t{1} << 40);
    w->add_dims(int64_t{1} << 40);
    w->set_raw_data(std::string(8, '\0'));
    m.node("Add", {"x", "w"}, {"y"}, "add");
    m.output("y", DataType::kFloat32);
    QString msg = expect_import_error(m.save(dir_));
    QVERIFY2(msg.contains("tensor 'w'") && msg.contains("exceeds"), qPrintable(msg));

    // Within the limit but more than the data holds.
    w->clear_dims();
    w->add_dims(1000);
    w->add_dims(1000);
    msg = expect_import_error(m.save(dir_));
    QVERIFY2(msg.contains("raw_data has 8 bytes") && msg.contains("4000000"), qPrintable(msg));

    w->clear_dims();
    w->add_dims(-2);
    msg = expect_import_error(m.save(dir_));
    QVERIFY2(msg.contains("negative"), qPrintable(msg));
  }

  void typed_data_count_mismatch() {
    OnnxModel m;
    m.input("x", DataType::kInt64, {3});
    auto* w = m.graph().add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::INT64);
    w->add_dims(3);
    w->add_int64_data(1);
    w->add_int64_data(2);
    m.node("Add", {"x", "w"}, {"y"}, "add");
    m.output("y", DataType::kInt64);
    const QString msg = expect_import_error(m.save(dir_));
    QVERIFY2(msg.contains("int64_data has 2 values") && msg.contains("needs 3"), qPrintable(msg));
  }

  void unbound_symbolic_dim_suggests_shape() {
    OnnxModel m;
    m.input("images", DataType::kFloat32, {std::string("N"), 3, std::string("H"), 8});
    m.node("Relu", {"images"}, {"y"});
    m.output("y", DataType::kFloat32);
    const QString msg = expect_import_error(m.save(dir_));
    QVERIFY2(msg.contains("input 'images'") && msg.contains("'N'") && msg.contains("--shape images=1x3x1x8"),
             qPrintable(msg));
  }

  void shape_mismatch_names_file_and_node() {
    OnnxModel m;
    m.input("a", DataType::kFloat32, {2, 3}).input("b", DataType::kFloat32, {4, 5});
    m.node("Add", {"a", "b"}, {"y"}, "the_add");
    m.output("y", DataType::kFloat32);
    const std::string p = m.save(dir_);
    const QString msg = expect_import_error(p);
    QVERIFY2(msg.startsWith(QString::fromStdString(p) + ": node 'the_add' (Add): "), qPrintable(msg));
    QVERIFY2(msg.contains("[2,3]") && msg.contains("[4,5]"), qPrintable(msg));
  }

  void checker_failures_are_one_line() {
    // An input produced by nobody: the ONNX checker refuses it (its message spans lines).
    OnnxModel m;
    m.input("x", DataType::kFloat32, {2});
    m.node("Add", {"x", "ghost"}, {"y"}, "add");
    m.output("y", DataType::kFloat32);
    const QString msg = expect_import_error(m.save(dir_));
    QVERIFY2(msg.contains("ghost"), qPrintable(msg));
  }

  void unsupported_input_kinds() {
    OnnxModel m;
    m.input("s", DataType::kFloat32, {2});
    m.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::COMPLEX64);
    m.node("Identity", {"s"}, {"y"});
    m.output("y", DataType::kFloat32);
    m.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::COMPLEX64);
    const Graph g = import_onnx(m.save(dir_));  // opens; the input's type is unknown, and so is y's
    QVERIFY(!g.value(g.inputs[0]).type_known() && !g.value(g.outputs[0]).type_known());
    const QString msg = QString::fromStdString(blockers_message(g));
    QVERIFY2(msg.contains("input 's'") && msg.contains("COMPLEX64") && !msg.contains("'y'"), qPrintable(msg));
  }
};

QTEST_APPLESS_MAIN(TestFrontendErrors)
#include "test_frontend_errors.moc"
