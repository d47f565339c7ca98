// String tensors (tensor.h, "String tensors"): elements, ONNX files, Cast to and from strings with
// ONNX's number formatting, StringNormalizer, and that compiling leaves string ops on the reference
// kernels, saying why.
#include <QTemporaryDir>
#include <cmath>

#include "core/compile/compiled_model.h"
#include "core/frontend/onnx_import.h"
#include "core/plugin/plugin_manager.h"
#include "core/target/target.h"
#include "test_ops_elementwise_helpers.h"

using namespace tessel;
using namespace tessel::test;

namespace {

Operand v(Tensor t) { return Operand{std::move(t)}; }
Tensor strs(Shape shape, const std::vector<std::string>& s) { return Tensor::from_strings(std::move(shape), s); }

}  // namespace

class TestStringOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void elementsAreInternedHandles() {
    Tensor t = strs({3}, {"monday", "", "monday"});
    QCOMPARE(t.string_at(0), std::string_view("monday"));
    QCOMPARE(t.string_at(1), std::string_view(""));
    QCOMPARE(std::memcmp(t.raw_data(), t.raw_data() + 2 * sizeof(void*), sizeof(void*)), 0);  // one pool entry
    QCOMPARE(Tensor(DataType::kString, {2}).string_at(1), std::string_view(""));              // zero bytes: empty
    QCOMPARE(t.summary(), std::string("str[3] {\"monday\", \"\", \"monday\"}"));
    QVERIFY(contains(error_of([&] { t.get_double(0); }), "str tensors have no numeric elements"));
  }

  void onnxFilesRoundTrip() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("s.pb").toStdString();
    write_tensor_pb(strs({2, 2}, {"a", "bc", "", "d e"}), "s", path);
    const Tensor back = read_tensor_pb(path);
    QCOMPARE(back.dtype(), DataType::kString);
    QCOMPARE(back.strings(), (std::vector<std::string>{"a", "bc", "", "d e"}));
  }

  void castToStringWritesTheShortestRoundTrip() {
    const Tensor x = f32({6}, {0.1f, 1.0f, -2.5f, 1e-5f, INFINITY, NAN});
    QCOMPARE(run1("Cast", {v(x)}, {{"to", int64_t{8}}}).strings(),
             (std::vector<std::string>{"0.1", "1", "-2.5", "1e-05", "INF", "NaN"}));
    QCOMPARE(run1("Cast", {v(f32({1}, {-INFINITY}))}, {{"to", int64_t{8}}}).strings(),
             std::vector<std::string>{"-INF"});
    QCOMPARE(run1("Cast", {v(i64({2}, {-7, 9007199254740993}))}, {{"to", int64_t{8}}}).strings(),
             (std::vector<std::string>{"-7", "9007199254740993"}));
    QCOMPARE(run1("Cast", {v(f64({1}, {0.1}))}, {{"to", int64_t{8}}}).strings(), std::vector<std::string>{"0.1"});
  }

  void castFromStringReadsNumbersAndInfinities() {
    const Tensor s = strs({6}, {"0.47892547", "+INF", "-INF", "NaN", " 2e3", "-0"});
    const Tensor y = run1("Cast", {v(s)}, {{"to", int64_t{1}}});
    const float* p = y.data<float>();
    QCOMPARE(p[0], 0.47892547f);
    QVERIFY(std::isinf(p[1]) && p[1] > 0);
    QVERIFY(std::isinf(p[2]) && p[2] < 0);
    QVERIFY(std::isnan(p[3]));
    QCOMPARE(p[4], 2000.0f);
    QVERIFY(p[5] == 0.0f && std::signbit(p[5]));
    QCOMPARE(run1("Cast", {v(strs({2}, {"9007199254740993", "-3"}))}, {{"to", int64_t{7}}}).to_int64s(),
             (std::vector<int64_t>{9007199254740993, -3}));
    QVERIFY(contains(error_of([&] {
                       run1("Cast", {v(strs({1}, {"one"}))}, {{"to", int64_t{1}}});
                     }),
                     "Cast: 'one' is not a number"));
  }

  void stringNormalizerDropsStopwordsAndChangesCase() {
    const Tensor x = strs({6}, {"monday", "tuesday", "wednesday", "thursday", "MONDAY", "Monday"});
    const AttrMap lower{{"case_change_action", std::string("LOWER")},
                        {"is_case_sensitive", int64_t{1}},
                        {"stopwords", std::vector<std::string>{"monday"}}};
    QCOMPARE(run1("StringNormalizer", {constant(x)}, lower).strings(),
             (std::vector<std::string>{"tuesday", "wednesday", "thursday", "monday", "monday"}));
    const AttrMap upper{{"case_change_action", std::string("UPPER")},
                        {"stopwords", std::vector<std::string>{"monday"}}};
    QCOMPARE(run1("StringNormalizer", {constant(x)}, upper).strings(),
             (std::vector<std::string>{"TUESDAY", "WEDNESDAY", "THURSDAY"}));
    const Tensor two_dim = strs({1, 2}, {"Monday", "monday"});
    const Tensor empty = run1("StringNormalizer", {constant(two_dim)}, upper);
    QCOMPARE(shape_str(empty.shape()), std::string("[1,1]"));
    QCOMPARE(empty.strings(), std::vector<std::string>{""});
    QVERIFY(contains(error_of([] {
                       run1("StringNormalizer", {constant(strs({2, 2}, {"a", "b", "c", "d"}))});
                     }),
                     "must be [C] or [1, C]"));
  }

  // The group holding the Cast to string runs on the reference kernels, with the reason given.
  void compilingLeavesStringsOnTheReferencePath() {
    Graph g;
    const OpDef& add = get_op("Add");
    const OpDef& cast = get_op("Cast");
    const ValueId a = g.add_input("a", {DataType::kFloat32, {3}});
    const ValueId sum = g.add_node("add", add, add.parse_attrs("Add", {}), {a, a}, 1)[0];
    g.outputs = g.add_node("cast", cast, cast.parse_attrs("Cast", {{"to", int64_t{8}}}), {sum}, 1);
    infer_types(g);
    for (const char* target : {"llvm", "c", "interp"}) {
      auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target));
      bool string_fell_back = false;
      for (const compile::CompiledKernel& k : compiled->kernels())
        string_fell_back |= !k.compiled && contains(k.fallback_reason, "string values run on the reference kernels");
      QVERIFY2(string_fell_back, target);
      const Tensor out = compiled->run({f32({3}, {0.5f, 1.25f, -3.0f})})[0];
      QCOMPARE(out.strings(), (std::vector<std::string>{"1", "2.5", "-6"}));
    }
  }
};

QTEST_APPLESS_MAIN(TestStringOps)
#include "test_ops_strings.moc"
