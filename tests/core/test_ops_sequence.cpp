// Sequences and optionals (core/graph/ops/sequence_ops.h): their types, the reference kernels on
// the reference executor's RuntimeValues, the errors that name node and position, the refusal of a
// sequence by an op that takes tensors, and the ONNX tests run in-process through the importer
// (SequenceProto and OptionalProto files included).
#include <QtTest>
#include <filesystem>

#include "core/frontend/onnx_import.h"
#include "core/graph/ops/sequence_ops.h"
#include "core/graph/passes/pipeline.h"
#include "core/runtime/reference_executor.h"
#include "test_ops_nn_util.h"

using namespace tessel;
using namespace nn_test;
namespace fs = std::filesystem;

namespace {

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

const char* kOnnxTests[] = {
    "node/test_identity_opt",
    "node/test_identity_sequence",
    "node/test_if_opt",
    "node/test_if_seq",
    "node/test_loop13_seq",
    "node/test_loop16_seq_none",
    "node/test_optional_get_element",
    "node/test_optional_get_element_sequence",
    "node/test_optional_has_element",
    "node/test_optional_has_element_empty",
    "node/test_sequence_insert_at_back",
    "node/test_sequence_insert_at_front",
    "simple/test_sequence_model1",
    "simple/test_sequence_model2",
    "simple/test_sequence_model3",
    "simple/test_sequence_model4",
    "simple/test_sequence_model5",
    "simple/test_sequence_model6",
    "simple/test_sequence_model7",
    "simple/test_sequence_model8",
};

ValueId node1(Graph& g, const std::string& name, const std::string& op, std::vector<ValueId> inputs,
              const AttrMap& map = {}) {
  return g.add_node1(name, get_op(op), get_op(op).parse_attrs(op, map), std::move(inputs));
}

Tensor i64(int64_t v) { return Tensor::scalar<int64_t>(v); }

const TensorType kSeqF32x2{DataType::kFloat32, {2}, ValueKind::kSequence};

std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && values(a) == values(b);
}

// One ONNX test folder through the importer and the reference executor; empty when every output
// matches (exactly, or within 1e-5 for floats).
std::string run_onnx_test(const std::string& name) {
  const fs::path dir = kTestData / name;
  const std::string model = (dir / "model.onnx").string();
  const std::vector<OnnxInputInfo> inputs = onnx_runtime_inputs(model);
  std::vector<RuntimeValue> feeds;
  ImportOptions options;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const fs::path file = dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb");
    feeds.push_back(read_value_pb(file.string(), inputs[k].kind));
    if (inputs[k].kind == ValueKind::kTensor && !inputs[k].static_shape)  // symbolic dims: the file's shape
      options.input_shapes.emplace(inputs[k].name, feeds.back().tensor.shape());
  }
  const Graph g = import_onnx(model, options);
  const std::vector<RuntimeValue> outputs = run_reference_values(g, feeds);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const RuntimeValue want = read_value_pb(
        (dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")).string(), g.value(g.outputs[k]).type.kind);
    const RuntimeValue& got = outputs[k];
    bool same = got.kind == want.kind && got.has_element == want.has_element &&
                got.sequence.size() == want.sequence.size() && got.tensor.defined() == want.tensor.defined();
    if (same && got.tensor.defined())
      same = got.tensor.shape() == want.tensor.shape() && close(values(got.tensor), values(want.tensor));
    for (size_t i = 0; same && i < got.sequence.size(); ++i)
      same = got.sequence[i].shape() == want.sequence[i].shape() &&
             close(values(got.sequence[i]), values(want.sequence[i]));
    if (!same) return "output " + std::to_string(k) + ": got " + got.summary() + ", expected " + want.summary();
  }
  return {};
}

}  // namespace

class TestOpsSequence : public QObject {
  Q_OBJECT
 private slots:
  void split_at_length_and_concat() {
    // x[4,2] split into parts of 3 rows: [3,2] and [1,2]; the parts differ, so the shape is not static.
    Graph g;
    const ValueId x = g.add_input("x", {DataType::kFloat32, {4, 2}});
    const ValueId parts = node1(g, "split", "SplitToSequence", {x, g.add_constant("three", i64(3))});
    const ValueId length = node1(g, "length", "SequenceLength", {parts});
    const ValueId last = node1(g, "last", "SequenceAt", {parts, g.add_constant("minus_one", i64(-1))});
    const ValueId joined = node1(g, "join", "ConcatFromSequence", {parts}, {{"axis", int64_t{0}}});
    g.outputs = {parts, length, last, joined};
    infer_types(g);
    QCOMPARE(type_str(g.value(parts).type), std::string("seq(f32[?])"));
    QCOMPARE(type_str(g.value(length).type), std::string("i64[]"));
    QCOMPARE(type_str(g.value(last).type), std::string("f32[?]"));
    QVERIFY(!non_tensor_values_reason(g).empty());

    const Tensor in = f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const std::vector<RuntimeValue> out = run_reference_values(g, {RuntimeValue::of_tensor(in)});
    QCOMPARE(out[0].sequence.size(), size_t{2});
    QVERIFY(same_tensor(out[0].sequence[0], f32({3, 2}, {1, 2, 3, 4, 5, 6})));
    QVERIFY(same_tensor(out[0].sequence[1], f32({1, 2}, {7, 8})));
    QCOMPARE(out[1].tensor.data<int64_t>()[0], int64_t{2});
    QVERIFY(same_tensor(out[2].tensor, f32({1, 2}, {7, 8})));
    QVERIFY(same_tensor(out[3].tensor, in));
  }

  void split_without_split_and_stack() {
    // No split: parts of one row, keepdims=0 drops the axis; new_axis=1 stacks them back along axis 1.
    Graph g;
    const ValueId x = g.add_input("x", {DataType::kInt64, {3, 2}});
    const ValueId rows = node1(g, "split", "SplitToSequence", {x}, {{"keepdims", int64_t{0}}});
    const ValueId stacked =
        node1(g, "stack", "ConcatFromSequence", {rows}, {{"axis", int64_t{1}}, {"new_axis", int64_t{1}}});
    g.outputs = {rows, stacked};
    infer_types(g);
    QCOMPARE(type_str(g.value(rows).type), std::string("seq(i64[2])"));
    const Tensor in = Tensor::from_int64s({3, 2}, {1, 2, 3, 4, 5, 6});
    const std::vector<RuntimeValue> out = run_reference_values(g, {RuntimeValue::of_tensor(in)});
    QVERIFY(same_tensor(out[0].sequence[2], Tensor::from_int64s({2}, {5, 6})));
    QVERIFY(same_tensor(out[1].tensor, Tensor::from_int64s({2, 3}, {1, 3, 5, 2, 4, 6})));  // the transpose
  }

  void construct_insert_erase() {
    Graph g;
    const ValueId a = g.add_input("a", {DataType::kFloat32, {2}});
    const ValueId b = g.add_input("b", {DataType::kFloat32, {2}});
    const ValueId seq = node1(g, "construct", "SequenceConstruct", {a, b});
    const ValueId inserted = node1(g, "insert", "SequenceInsert", {seq, b, g.add_constant("front", i64(0))});
    const ValueId appended = node1(g, "append", "SequenceInsert", {inserted, a});
    const ValueId erased = node1(g, "erase", "SequenceErase", {appended, g.add_constant("second", i64(1))});
    const ValueId empty = node1(g, "empty", "SequenceEmpty", {}, {{"dtype", int64_t{7}}});
    g.outputs = {erased, empty};
    infer_types(g);
    QCOMPARE(g.value(erased).type, kSeqF32x2);  // every tensor put in is f32[2]: the shape stays static
    QCOMPARE(type_str(g.value(empty).type), std::string("seq(i64[?])"));
    const Tensor ta = f32({2}, {1, 2}), tb = f32({2}, {3, 4});
    const std::vector<RuntimeValue> out =
        run_reference_values(g, {RuntimeValue::of_tensor(ta), RuntimeValue::of_tensor(tb)});
    // construct {a, b}, insert b at the front {b, a, b}, append a {b, a, b, a}, erase 1 {b, b, a}
    QCOMPARE(out[0].sequence.size(), size_t{3});
    QVERIFY(same_tensor(out[0].sequence[0], tb));
    QVERIFY(same_tensor(out[0].sequence[1], tb));
    QVERIFY(same_tensor(out[0].sequence[2], ta));
    QVERIFY(out[1].sequence.empty());
    QCOMPARE(out[1].summary(), std::string("seq(0:)"));
  }

  void position_out_of_range_names_node_and_position() {
    Graph g;
    const ValueId seq = g.add_input("seq", kSeqF32x2);
    g.outputs = {node1(g, "at", "SequenceAt", {seq, g.add_constant("pos", i64(2))})};
    infer_types(g);
    const RuntimeValue two = RuntimeValue::of_sequence({f32({2}, {1, 2}), f32({2}, {3, 4})});
    QCOMPARE(
        error_text([&] { run_reference_values(g, {two}); }),
        std::string("node 'at' (SequenceAt): position 2 is out of range for a sequence of 2 tensors (valid: -2 to 1)"));
    Graph h;
    const ValueId s2 = h.add_input("seq", kSeqF32x2);
    h.outputs = {node1(h, "insert", "SequenceInsert", {s2, s2})};
    QCOMPARE(error_text([&] { infer_types(h); }),
             std::string("node 'insert' (SequenceInsert): input 1 is a sequence (seq(f32[2])); SequenceInsert takes a "
                         "tensor there"));
  }

  void tensor_ops_refuse_sequences() {
    Graph g;
    const ValueId seq = g.add_input("seq", kSeqF32x2);
    g.outputs = {node1(g, "add", "Add", {seq, seq})};
    QCOMPARE(error_text([&] { infer_types(g); }),
             std::string("node 'add' (Add): input 0 'seq' is a sequence (seq(f32[2])); Add takes tensors"));
    // A tensor taken out of a sequence whose shapes differ has no static shape: tensor ops refuse it too.
    Graph h;
    const ValueId ragged = h.add_input("seq", {DataType::kFloat32, {}, ValueKind::kSequence, false});
    const ValueId first = node1(h, "first", "SequenceAt", {ragged, h.add_constant("zero", i64(0))});
    h.outputs = {node1(h, "relu", "Relu", {first})};
    QVERIFY(error_text([&] { infer_types(h); }).find("has a shape known only at run time") != std::string::npos);
    // Graph passes refuse a graph with sequences as a whole.
    Graph k;
    const ValueId s = k.add_input("seq", kSeqF32x2);
    k.outputs = {node1(k, "copy", "Identity", {s})};
    infer_types(k);
    const GraphPipelineResult r = run_graph_pipeline(std::make_shared<const Graph>(k), Target::parse("ref"), {});
    QVERIFY2(r.error.find("graph passes take tensors only: value 'seq' is a sequence") != std::string::npos,
             r.error.c_str());
  }

  void optionals() {
    Graph g;
    const ValueId x = g.add_input("x", {DataType::kFloat32, {2}});
    const ValueId some = node1(g, "some", "Optional", {x});
    const ValueId none = node1(g, "none", "Optional", {}, {{"element_dtype", int64_t{1}}, {"of_sequence", int64_t{1}}});
    const ValueId has_some = node1(g, "has_some", "OptionalHasElement", {some});
    const ValueId has_none = node1(g, "has_none", "OptionalHasElement", {none});
    const ValueId got = node1(g, "get", "OptionalGetElement", {some});
    const ValueId copy = node1(g, "copy", "Identity", {none});
    g.outputs = {has_some, has_none, got, copy};
    infer_types(g);
    QCOMPARE(type_str(g.value(some).type), std::string("opt(f32[2])"));
    QCOMPARE(type_str(g.value(none).type), std::string("opt(seq(f32[?]))"));
    QCOMPARE(type_str(g.value(got).type), std::string("f32[2]"));
    const Tensor tx = f32({2}, {5, 6});
    const std::vector<RuntimeValue> out = run_reference_values(g, {RuntimeValue::of_tensor(tx)});
    QCOMPARE(out[0].tensor.data<bool>()[0], true);
    QCOMPARE(out[1].tensor.data<bool>()[0], false);
    QVERIFY(same_tensor(out[2].tensor, tx));
    QCOMPARE(out[3].kind, ValueKind::kOptionalSequence);
    QVERIFY(!out[3].has_element);

    Graph e;
    const ValueId maybe = e.add_input("maybe", {DataType::kFloat32, {2}, ValueKind::kOptionalTensor});
    e.outputs = {node1(e, "get", "OptionalGetElement", {maybe})};
    infer_types(e);
    QCOMPARE(error_text([&] { run_reference_values(e, {RuntimeValue::empty_optional(ValueKind::kOptionalTensor)}); }),
             std::string("node 'get' (OptionalGetElement): the optional holds nothing"));
    QCOMPARE(error_text([&] { run_reference_values(e, {RuntimeValue::of_tensor(tx)}); }),
             std::string("input 'maybe' expects opt(f32[2]), got f32[2] {5, 6}"));
  }

  void onnx_tests_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : kOnnxTests) QTest::newRow(name) << QString(name);
  }
  void onnx_tests() {
    QFETCH(QString, name);
    if (!fs::exists(kTestData)) QSKIP("libonnx-testdata is not installed");
    std::string failure;
    try {
      failure = run_onnx_test(name.toStdString());
    } catch (const Error& e) {
      failure = e.what();
    }
    QVERIFY2(failure.empty(), failure.c_str());
  }
};

QTEST_APPLESS_MAIN(TestOpsSequence)
#include "test_ops_sequence.moc"
