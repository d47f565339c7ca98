// The tensor-expression builders of core/graph/ops/te/builders_shape_scatter.cpp: one-node graphs of
// ConvTranspose, ScatterElements, Shape, Size, ConstantOfShape and Range with non-trivial
// attributes, compiled (not run on the reference kernels) and compared with run_reference.
#include <QtTest>
#include <cmath>

#include "core/compile/compiled_model.h"
#include "core/graph/ops/te/te_from_graph.h"
#include "core/graph/op_table.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"

using namespace tessel;

namespace {

// Deterministic values in [-2, 2) (a small LCG: the test must not depend on a seed's luck).
std::vector<float> values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 4.0f - 2.0f;
  }
  return v;
}

Tensor random_tensor(const Shape& s, uint32_t seed) {
  return Tensor::from_values<float>(s, values(shape_numel(s), seed));
}

ValueId add(Graph& g, const std::string& op, AttrMap attrs, std::vector<ValueId> inputs) {
  return g.add_node1(op + "_node", get_op(op), get_op(op).parse_attrs(op, attrs), std::move(inputs));
}

// Compiles g (constant folding off, so that the shape ops stay kernels of their own) for `target`,
// checks every kernel was compiled and the op's appears in one, runs it and compares with the
// reference executor within atol + rtol·|want|.
void check_compiled(Graph g, const std::string& op, const std::vector<Tensor>& inputs, double rtol, double atol,
                    const std::string& target = "llvm") {
  QVERIFY2(ops::has_te_builder(op), op.c_str());
  infer_types(g);
  const std::vector<Tensor> want = run_reference(g, inputs);
  compile::CompileOptions options;
  options.pipeline.disabled_passes.insert("fold_constants");
  auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target), options);
  std::string stage;  // the builder's stages are named after the op in lower case
  for (char ch : op) stage += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  bool seen = false;
  for (const auto& k : compiled->kernels()) {
    QVERIFY2(k.compiled,
             qPrintable(QString::fromStdString(k.name + " ran on the reference kernels: " + k.fallback_reason)));
    seen = seen || k.tensor_expression.find(stage) != std::string::npos;
  }
  QVERIFY2(seen, qPrintable(QString::fromStdString(op + " is in no compiled kernel")));
  const std::vector<Tensor> got = compiled->run(inputs);
  QCOMPARE(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    QCOMPARE(got[o].dtype(), want[o].dtype());
    QCOMPARE(got[o].shape(), want[o].shape());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const double a = got[o].get_double(i), b = want[o].get_double(i);
      if (!(std::abs(a - b) <= atol + rtol * std::abs(b)))
        QFAIL(qPrintable(QString("%1 on %2: element %3 is %4, expected %5")
                             .arg(QString::fromStdString(op), QString::fromStdString(target))
                             .arg(i)
                             .arg(a, 0, 'g', 10)
                             .arg(b, 0, 'g', 10)));
    }
  }
}

}  // namespace

class TestTeBuildersShapeScatter : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void conv_transpose_data() {
    QTest::addColumn<QString>("target");
    QTest::addColumn<QList<qint64>>("x_shape");
    QTest::addColumn<QList<qint64>>("w_shape");
    QTest::addColumn<QString>("attrs");  // key=v,v;key=v ...
    QTest::addColumn<bool>("bias");
    // Stride 2, asymmetric pads, output_padding and 2 groups (C = 4, M = 2·3).
    for (const char* t : {"llvm", "c", "interp"})
      QTest::newRow((std::string("stride2_pads_outpad_groups@") + t).c_str())
          << t << QList<qint64>{2, 4, 3, 4} << QList<qint64>{4, 3, 3, 2}
          << "strides=2,2;pads=1,0,0,1;output_padding=1,1;group=2" << true;
    QTest::newRow("dilated_1d_stride3") << "llvm" << QList<qint64>{1, 2, 5} << QList<qint64>{2, 3, 3}
                                        << "strides=3;dilations=2;output_padding=2;pads=2,1" << false;
    QTest::newRow("output_shape_same_lower") << "llvm" << QList<qint64>{1, 3, 3, 3} << QList<qint64>{3, 2, 3, 3}
                                             << "strides=2,3;output_shape=7,8;auto_pad=SAME_LOWER" << true;
    QTest::newRow("same_upper_groups3") << "llvm" << QList<qint64>{1, 3, 4, 3} << QList<qint64>{3, 1, 2, 3}
                                        << "strides=2,2;auto_pad=SAME_UPPER;group=3" << false;
  }
  void conv_transpose() {
    QFETCH(QString, target);
    QFETCH(QList<qint64>, x_shape);
    QFETCH(QList<qint64>, w_shape);
    QFETCH(QString, attrs);
    QFETCH(bool, bias);
    AttrMap map;
    for (const QString& kv : attrs.split(';')) {
      const QStringList parts = kv.split('=');
      if (parts[0] == "auto_pad") {
        map[parts[0].toStdString()] = parts[1].toStdString();
        continue;
      }
      std::vector<int64_t> v;
      for (const QString& s : parts[1].split(',')) v.push_back(s.toLongLong());
      if (parts[0] == "group")
        map["group"] = v[0];
      else
        map[parts[0].toStdString()] = v;
    }
    const Shape xs(x_shape.begin(), x_shape.end()), ws(w_shape.begin(), w_shape.end());
    const int64_t m = ws[1] * (map.count("group") ? std::get<int64_t>(map["group"]) : 1);
    Graph g;
    std::vector<ValueId> in = {g.add_input("x", {DataType::kFloat32, xs}), g.add_input("w", {DataType::kFloat32, ws})};
    std::vector<Tensor> tensors = {random_tensor(xs, 1), random_tensor(ws, 2)};
    if (bias) {
      in.push_back(g.add_input("b", {DataType::kFloat32, {m}}));
      tensors.push_back(random_tensor({m}, 3));
    }
    g.outputs = {add(g, "ConvTranspose", map, in)};
    check_compiled(g, "ConvTranspose", tensors, 1e-5, 1e-5, target.toStdString());
  }

  void scatter_elements_data() {
    QTest::addColumn<QString>("reduction");
    QTest::addColumn<qint64>("axis");
    QTest::addColumn<QString>("target");
    for (const char* r : {"none", "add", "mul"})
      for (qint64 axis : {0, -1})
        for (const char* t : {"llvm", "interp"})
          QTest::newRow((std::string(r) + "_axis" + std::to_string(axis) + "@" + t).c_str()) << r << axis << t;
  }
  void scatter_elements() {
    QFETCH(QString, reduction);
    QFETCH(qint64, axis);
    QFETCH(QString, target);
    // data [4, 5]; indices [3, 4] (smaller than the data off the axis) with negative and repeated
    // entries, so some positions take several updates, some one and some none.
    const Shape data_shape{4, 5}, idx_shape{3, 4};
    const int64_t dim = data_shape[axis < 0 ? axis + 2 : axis];
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < shape_numel(idx_shape); ++i)
      idx.push_back((i * 7 + 3) % (2 * dim) - dim);  // in [-dim, dim)
    idx[1] = idx[2] = idx[5] = -1;                   // duplicates: (0,1), (1,1) share a column, (0,1), (0,2) a row
    Graph g;
    ValueId d = g.add_input("data", {DataType::kFloat32, data_shape});
    ValueId i = g.add_input("indices", {DataType::kInt64, idx_shape});
    ValueId u = g.add_input("updates", {DataType::kFloat32, idx_shape});
    g.outputs = {
        add(g, "ScatterElements", {{"axis", int64_t{axis}}, {"reduction", reduction.toStdString()}}, {d, i, u})};
    check_compiled(g, "ScatterElements",
                   {random_tensor(data_shape, 4), Tensor::from_int64s(idx_shape, idx), random_tensor(idx_shape, 5)},
                   1e-6, 1e-6, target.toStdString());
  }

  void scatter_elements_int_add() {
    // int64 data: the sum of the duplicate updates must be exact.
    Graph g;
    ValueId d = g.add_input("data", {DataType::kInt64, {6}});
    ValueId i = g.add_input("indices", {DataType::kInt32, {5}});
    ValueId u = g.add_input("updates", {DataType::kInt64, {5}});
    g.outputs = {add(g, "ScatterElements", {{"reduction", std::string("add")}}, {d, i, u})};
    const std::vector<int32_t> idx{-1, 2, 5, -4, 0};
    check_compiled(g, "ScatterElements",
                   {Tensor::from_int64s({6}, {10, 20, 30, 40, 50, 60}),
                    Tensor::from_values<int32_t>({5}, std::span<const int32_t>(idx)),
                    Tensor::from_int64s({5}, {1000000007, -3, 5, 7, 11})},
                   0, 0);
  }

  void shape_and_size() {
    {
      Graph g;
      ValueId x = g.add_input("x", {DataType::kFloat32, {2, 3, 5, 7}});
      g.outputs = {add(g, "Shape", {{"start", int64_t{-3}}, {"end", int64_t{-1}}}, {x})};
      check_compiled(g, "Shape", {random_tensor({2, 3, 5, 7}, 6)}, 0, 0);
    }
    {
      Graph g;
      ValueId x = g.add_input("x", {DataType::kFloat32, {2, 3, 5}});
      g.outputs = {add(g, "Size", {}, {x})};
      check_compiled(g, "Size", {random_tensor({2, 3, 5}, 7)}, 0, 0);
    }
  }

  void constant_of_shape() {
    for (const Tensor& value :
         {Tensor::from_int64s({1}, {int64_t{1} << 40}), Tensor::from_values<float>({1}, values(1, 8))}) {
      Graph g;
      ValueId s = g.add_constant("shape", Tensor::from_int64s({3}, {2, 3, 4}));
      g.outputs = {add(g, "ConstantOfShape", {{"value", value}}, {s})};
      check_compiled(g, "ConstantOfShape", {}, 0, 0);
    }
  }

  void range() {
    {  // float: start + i·delta in float64, rounded to f32 as the reference does
      Graph g;
      ValueId s = g.add_constant("start", Tensor::scalar<float>(-1.3f));
      ValueId l = g.add_constant("limit", Tensor::scalar<float>(4.0f));
      ValueId d = g.add_constant("delta", Tensor::scalar<float>(0.7f));
      g.outputs = {add(g, "Range", {}, {s, l, d})};
      check_compiled(g, "Range", {}, 0, 0);
    }
    {  // int32, negative delta
      Graph g;
      ValueId s = g.add_constant("start", Tensor::scalar<int32_t>(10));
      ValueId l = g.add_constant("limit", Tensor::scalar<int32_t>(-7));
      ValueId d = g.add_constant("delta", Tensor::scalar<int32_t>(-3));
      g.outputs = {add(g, "Range", {}, {s, l, d})};
      check_compiled(g, "Range", {}, 0, 0);
    }
  }
};

QTEST_APPLESS_MAIN(TestTeBuildersShapeScatter)
#include "test_te_builders_shape_scatter.moc"
