// ONNX import of well-formed models: constants, inputs, names, attributes, shapes given on the
// command line, shape operands, and results computed by the reference executor.
#include "core/graph/op_table.h"
#include "test_frontend_models.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

const Node* find_node(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

ValueId find_value(const Graph& g, const std::string& name) {
  for (ValueId id = 0; id < static_cast<ValueId>(g.values.size()); ++id)
    if (g.value(id).name == name) return id;
  return kNoValue;
}

std::string field(const Node& n, const std::string& name) {
  for (const auto& [k, v] : n.attrs->fields())
    if (k == name) return v;
  return "<absent>";
}

}  // namespace

class TestFrontendImport : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;

 private Q_SLOTS:
  void initializers_become_constants_and_inputs_stay_inputs() {
    // y = relu(x @ w + b); `b` is also listed as a graph input (older exporters do that).
    OnnxModel m;
    m.input("x", DataType::kFloat32, {2, 3}).input("b", DataType::kFloat32, {4});
    m.initializer("w", ramp({3, 4})).initializer("b", f32({4}, {1, -2, 3, -4}));
    m.node("MatMul", {"x", "w"}, {"xw"}, "matmul");
    m.node("Add", {"xw", "b"}, {"xwb"});
    m.node("Relu", {"xwb"}, {"y"}, "relu");
    m.output("y", DataType::kFloat32);
    const Graph g = import_onnx(m.save(dir_));

    QCOMPARE(g.inputs.size(), size_t{1});
    QCOMPARE(g.value(g.inputs[0]).name, std::string("x"));
    QVERIFY(g.is_constant(find_value(g, "w")));
    QVERIFY(g.is_constant(find_value(g, "b")));
    QCOMPARE(g.parameter_count(), int64_t{3 * 4 + 4});
    QCOMPARE(g.nodes.size(), size_t{3});
    QVERIFY(find_node(g, "matmul"));
    QVERIFY2(find_node(g, "Add_1"), "an unnamed node is named <OpType>_<index>");
    QVERIFY(find_value(g, "xwb") != kNoValue);  // value names are kept
    QCOMPARE(type_str(g.value(g.outputs[0]).type), std::string("f32[2,4]"));

    const Tensor x = ramp({2, 3}, 0.5f);
    const Tensor w = ramp({3, 4});
    const float b[4] = {1, -2, 3, -4};
    Tensor want(DataType::kFloat32, {2, 4});
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        double s = b[j];
        for (int k = 0; k < 3; ++k) s += x.get_double(i * 3 + k) * w.get_double(k * 4 + j);
        want.set_double(i * 4 + j, std::max(s, 0.0));
      }
    compare_tensors(run_reference(g, {x})[0], want);
  }

  void constant_nodes_in_every_form() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {3});
    attr_tensor(m.node("Constant", {}, {"c_tensor"}), "value", f32({3}, {1, 2, 3}));
    attr_float(m.node("Constant", {}, {"c_float"}), "value_float", 0.5f);
    attr_floats(m.node("Constant", {}, {"c_floats"}), "value_floats", {10, 20, 30});
    attr_int(m.node("Constant", {}, {"c_int"}), "value_int", 7);
    attr_ints(m.node("Constant", {}, {"c_ints"}), "value_ints", {1, 3});
    m.node("Mul", {"x", "c_tensor"}, {"a"});
    m.node("Mul", {"a", "c_float"}, {"b"});
    m.node("Add", {"b", "c_floats"}, {"y"});
    m.node("Shape", {"x"}, {"s"});
    m.node("Add", {"s", "c_int"}, {"s7"});
    m.node("Concat", {"s7", "c_ints"}, {"z"}, "concat");
    attr_int(*m.graph().mutable_node(m.graph().node_size() - 1), "axis", 0);
    m.output("y", DataType::kFloat32).output("z", DataType::kInt64);
    const Graph g = import_onnx(m.save(dir_));

    QCOMPARE(g.nodes.size(), size_t{6});  // the Constant nodes became constants
    QCOMPARE(type_str(g.value(find_value(g, "c_float")).type), std::string("f32[]"));
    QCOMPARE(type_str(g.value(find_value(g, "c_ints")).type), std::string("i64[2]"));
    QCOMPARE(type_str(g.value(find_value(g, "c_int")).type), std::string("i64[]"));
    const auto out = run_reference(g, {f32({3}, {2, 4, 6})});
    compare_tensors(out[0], f32({3}, {11, 24, 39}));
    compare_tensors(out[1], i64({3}, {10, 1, 3}));
  }

  void attributes_reach_the_op() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {1, 1, 5, 5});
    m.initializer("w", ramp({2, 1, 3, 3}));
    auto& conv = m.node("Conv", {"x", "w"}, {"y"}, "conv");
    attr_ints(conv, "strides", {2, 2});
    attr_ints(conv, "pads", {1, 1, 1, 1});
    attr_ints(conv, "kernel_shape", {3, 3});
    m.output("y", DataType::kFloat32);
    const Graph g = import_onnx(m.save(dir_));
    const Node* n = find_node(g, "conv");
    QVERIFY(n);
    QCOMPARE(field(*n, "strides"), std::string("[2,2]"));
    QCOMPARE(field(*n, "pads"), std::string("[1,1,1,1]"));
    QCOMPARE(type_str(g.value(g.outputs[0]).type), std::string("f32[1,2,3,3]"));
  }

  void bad_attribute_names_the_node_and_field() {
    // A wrong attribute kind (the ONNX checker finds it) and a value out of the op's range (the
    // op's attribute declaration finds it): both messages name the node.
    OnnxModel m;
    m.input("x", DataType::kFloat32, {2, 3});
    attr_string(m.node("Softmax", {"x"}, {"y"}, "sm"), "axis", "one");
    m.output("y", DataType::kFloat32);
    const std::string path = m.save(dir_);
    QString msg = error_of([&] { import_onnx(path); });
    QVERIFY2(msg.startsWith(QString::fromStdString(path) + ": node 'sm' (Softmax): "), qPrintable(msg));
    QVERIFY2(msg.contains("axis") && !msg.contains('\n'), qPrintable(msg));

    // A value Tessel does not take: the model opens (the node is opaque); compiling it names the
    // node and the field.
    OnnxModel gemm;
    gemm.input("a", DataType::kFloat32, {2, 3}).input("b", DataType::kFloat32, {3, 4});
    attr_int(gemm.node("Gemm", {"a", "b"}, {"y"}, "fc"), "transA", 2);
    gemm.output("y", DataType::kFloat32);
    msg = QString::fromStdString(blockers_message(import_onnx(gemm.save(dir_))));
    QVERIFY2(msg.contains("node 'fc' (Gemm): attribute 'transA'"), qPrintable(msg));
    QVERIFY2(msg.contains("2"), qPrintable(msg));
  }

  void symbolic_dims_are_bound_by_input_shapes() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {std::string("batch"), 3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", DataType::kFloat32);
    const std::string path = m.save(dir_);

    const QString msg = error_of([&] { import_onnx(path); });
    QVERIFY2(msg.startsWith(QString::fromStdString(path) + ": input 'x'"), qPrintable(msg));
    QVERIFY2(msg.contains("'batch'") && msg.contains("--shape x=1x3"), qPrintable(msg));
    QVERIFY(!msg.contains('\n'));

    ImportOptions opts;
    opts.input_shapes["x"] = {5, 3};
    const Graph g = import_onnx(path, opts);
    QCOMPARE(type_str(g.value(g.outputs[0]).type), std::string("f32[5,3]"));

    ImportOptions wrong;
    wrong.input_shapes["nope"] = {1};
    const QString unknown = error_of([&] { import_onnx(path, wrong); });
    QVERIFY2(unknown.contains("'nope'") && unknown.contains("inputs: x"), qPrintable(unknown));
  }

  void input_shapes_override_static_dims() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {1, 3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y", DataType::kFloat32);
    ImportOptions opts;
    opts.input_shapes["x"] = {4, 3};
    const Graph g = import_onnx(m.save(dir_), opts);
    QCOMPARE(type_str(g.value(g.outputs[0]).type), std::string("f32[4,3]"));
  }

  void shape_operands_are_listed_and_can_be_bound() {
    // As in the ONNX node tests: Reshape's target shape is a runtime input.
    OnnxModel m;
    m.input("data", DataType::kFloat32, {2, 3, 4}).input("shape", DataType::kInt64, {2});
    m.node("Reshape", {"data", "shape"}, {"y"}, "reshape");
    m.output("y", DataType::kFloat32);
    const std::string path = m.save(dir_);

    QCOMPARE(onnx_shape_operand_inputs(path), std::vector<std::string>{"shape"});
    const auto inputs = onnx_runtime_inputs(path);
    QCOMPARE(inputs.size(), size_t{2});
    QCOMPARE(inputs[0].name, std::string("data"));
    QVERIFY(!inputs[0].feeds_shape_operand);
    QVERIFY(inputs[1].feeds_shape_operand);
    QVERIFY(inputs[1].static_shape.has_value());

    const QString unbound = error_of([&] { import_onnx(path); });
    QVERIFY2(unbound.contains("node 'reshape' (Reshape)"), qPrintable(unbound));

    ImportOptions opts;
    opts.bound_inputs.emplace("shape", i64({2}, {4, -1}));
    const Graph g = import_onnx(path, opts);
    QCOMPARE(type_str(g.value(g.outputs[0]).type), std::string("f32[4,6]"));
    QCOMPARE(g.inputs.size(), size_t{2});  // a bound input stays a graph input
    const Tensor data = ramp({2, 3, 4});
    compare_tensors(run_reference(g, {data, i64({2}, {4, -1})})[0], data.reshaped({4, 6}));
  }

  void inputs_that_compute_a_shape_operand_are_listed() {
    // As in the window functions' expanded bodies: Range's limit is computed from an input; the
    // data input reaches Reshape's shape only through Shape, which reads its type alone.
    OnnxModel m;
    m.input("data", DataType::kFloat32, {2, 3}).input("size", DataType::kInt64, {});
    m.initializer("one", i64({}, {1})).initializer("zero", i64({}, {0}));
    m.node("Sub", {"size", "one"}, {"limit"});
    m.node("Range", {"zero", "limit", "one"}, {"r"});
    m.node("Shape", {"data"}, {"s"});
    m.node("Reshape", {"data", "s"}, {"y"});
    m.output("r", DataType::kInt64).output("y", DataType::kFloat32);
    QCOMPARE(onnx_shape_operand_inputs(m.save(dir_)), std::vector<std::string>{"size"});
  }

  void omitted_optional_inputs_and_outputs() {
    // Clip with only a max (min omitted as ""), and Split with an unused middle output.
    OnnxModel m;
    m.input("x", DataType::kFloat32, {6});
    m.initializer("hi", Tensor::scalar<float>(1.0f));
    m.node("Clip", {"x", "", "hi"}, {"c"}, "clip");
    m.node("Split", {"c"}, {"p0", "", "p2"}, "split");
    m.output("p0", DataType::kFloat32).output("p2", DataType::kFloat32);
    const Graph g = import_onnx(m.save(dir_));
    const Node* clip = find_node(g, "clip");
    QVERIFY(clip);
    QCOMPARE(clip->inputs[1], kNoValue);
    const auto out = run_reference(g, {f32({6}, {-3, 0.5, 2, 4, -1, 0.25})});
    compare_tensors(out[0], f32({2}, {-3, 0.5}));
    compare_tensors(out[1], f32({2}, {-1, 0.25}));
  }

  void typed_data_fields_are_read() {
    // Initializers stored in the typed fields instead of raw_data, as older exporters write them.
    OnnxModel m;
    m.input("x", DataType::kFloat32, {2});
    auto add_typed = [&](const std::string& name, int32_t type, auto fill) {
      auto* t = m.graph().add_initializer();
      t->set_name(name);
      t->set_data_type(type);
      t->add_dims(2);
      fill(*t);
    };
    add_typed("f", onnx::TensorProto::FLOAT, [](auto& t) {
      t.add_float_data(1.5f);
      t.add_float_data(-2);
    });
    add_typed("d", onnx::TensorProto::DOUBLE, [](auto& t) {
      t.add_double_data(0.25);
      t.add_double_data(8);
    });
    add_typed("h", onnx::TensorProto::FLOAT16, [](auto& t) {
      t.add_int32_data(0x3C00);  // 1.0 as a float16 bit pattern
      t.add_int32_data(0xC100);  // -2.5
    });
    add_typed("i8", onnx::TensorProto::INT8, [](auto& t) {
      t.add_int32_data(-7);
      t.add_int32_data(100);
    });
    add_typed("b", onnx::TensorProto::BOOL, [](auto& t) {
      t.add_int32_data(1);
      t.add_int32_data(0);
    });
    add_typed("l", onnx::TensorProto::INT64, [](auto& t) {
      t.add_int64_data(int64_t{1} << 40);
      t.add_int64_data(-3);
    });
    m.node("Add", {"x", "f"}, {"y"});
    m.output("y", DataType::kFloat32);
    const Graph g = import_onnx(m.save(dir_));
    compare_tensors(g.value(find_value(g, "f")).value, f32({2}, {1.5, -2}));
    QCOMPARE(g.value(find_value(g, "d")).value.get_double(1), 8.0);
    QCOMPARE(g.value(find_value(g, "h")).value.dtype(), DataType::kFloat16);
    QCOMPARE(g.value(find_value(g, "h")).value.get_double(0), 1.0);
    QCOMPARE(g.value(find_value(g, "h")).value.get_double(1), -2.5);
    QCOMPARE(g.value(find_value(g, "i8")).value.get_double(0), -7.0);
    QCOMPARE(g.value(find_value(g, "b")).value.get_double(0), 1.0);
    QCOMPARE(g.value(find_value(g, "b")).value.get_double(1), 0.0);
    QCOMPARE(g.value(find_value(g, "l")).value.to_int64s(), (std::vector<int64_t>{int64_t{1} << 40, -3}));
  }

  void external_data_inside_the_folder_loads() {
    QTemporaryDir dir;
    // 8 bytes of padding, then the tensor at offset 8.
    const float values[3] = {4.5f, -1, 2};
    std::string blob(8, 'z');
    blob.append(reinterpret_cast<const char*>(values), sizeof values);
    OnnxModel::write_file(dir.filePath("weights.bin").toStdString(), blob);
    OnnxModel m;
    m.input("x", DataType::kFloat32, {3});
    auto* w = m.graph().add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(3);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add_entry = [&](const char* k, const std::string& v) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add_entry("location", "weights.bin");
    add_entry("offset", "8");
    add_entry("length", "12");
    m.node("Mul", {"x", "w"}, {"y"});
    m.output("y", DataType::kFloat32);
    const Graph g = import_onnx(m.save(dir));
    compare_tensors(run_reference(g, {f32({3}, {2, 2, 2})})[0], f32({3}, {9, -2, 4}));
  }

  void fixture_written_by_the_onnx_python_package() {
    // tests/data/frontend/make_fixtures.py: a float16 constant in int32_data and weights in an
    // external file, written by the official onnx package.
    const std::string dir = TESSEL_SOURCE_DIR "/tests/data/frontend/";
    ImportOptions opts;
    opts.input_shapes["x"] = {2, 4};
    const Graph g = import_onnx(dir + "mlp_external.onnx", opts);
    QCOMPARE(type_str(g.value(g.outputs[0]).type), std::string("f32[2,3]"));
    const Tensor x = read_tensor_pb(dir + "mlp_external/input_0.pb");
    const Tensor want = read_tensor_pb(dir + "mlp_external/output_0.pb");
    compare_tensors(run_reference(g, {x})[0], want, 1e-3);
  }
};

QTEST_APPLESS_MAIN(TestFrontendImport)
#include "test_frontend_import.moc"
