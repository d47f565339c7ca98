// Integer operations that trap in machine code (issue 40): `x % 0` and `MIN % -1` raise SIGFPE on
// x86, which would kill `tessel run` or the process a `tessel build` library lives in. For every
// integer type Mod takes, both fmod rules, and every backend (opencl in the test labelled opencl),
// a one-node graph:
//   - over divisors holding -1, 1, MIN, MAX and small values of both signs (against dividends that
//     hold MIN, MAX, -1 and 0) compiles without falling back and gives the reference's values
//     exactly (MIN % -1 is 0, as the reference defines it);
//   - with a zero divisor fails with an Error naming the node and the remainder by zero, as the
//     reference executor does -- never with a signal.
// Integer Div (run by the reference kernels on every backend) over the same operands: MIN / -1
// wraps, and a zero divisor is an Error naming the node.
#include <QtTest>
#include <cstring>
#include <limits>
#include <random>

#include "core/compile/compiled_model.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/reference_executor.h"
#include "core/support/error.h"
#include "tests/error_of.h"
#include "tests/plugins/compiled_vs_reference.h"

using namespace tessel;
using tessel::testing::error_of;

namespace {

// Edges first, then random values; `divisor` leaves zero out (it is tried on its own).
Tensor operand(DataType dtype, bool divisor, uint64_t seed) {
  Tensor t(dtype, {32});
  std::mt19937_64 rng(seed);
  dispatch_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      constexpr T kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
      const std::vector<T> edges = {kMin, kMax, static_cast<T>(-1), static_cast<T>(1), static_cast<T>(0),
                                    static_cast<T>(7), static_cast<T>(-7), static_cast<T>(kMin + 1)};
      T* data = t.data<T>();
      for (int64_t i = 0; i < t.numel(); ++i) {
        T x = i < static_cast<int64_t>(edges.size()) ? edges[(static_cast<size_t>(i) + seed) % edges.size()]
                                                     : static_cast<T>(rng());
        if (divisor && x == 0) x = static_cast<T>(-1);  // MIN % -1 is the other trap
        data[i] = x;
      }
    }
  });
  return t;
}

}  // namespace

class TestIntegerTraps : public QObject {
  Q_OBJECT

  static void add_rows() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("fmod");
    QTest::addColumn<QString>("target");
    for (DataType t : testing::integer_types())
      for (int fmod : {0, 1})
        for (const char* target : testing::backends_under_test())
          QTest::newRow(qPrintable(QString("%1_fmod%2@%3").arg(QString::fromStdString(std::string(dtype_name(t)))).arg(fmod).arg(target)))
              << static_cast<int>(t) << fmod << QString(target);
  }

 private Q_SLOTS:
  void initTestCase() { PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"}); }

  void edge_divisors_match_the_reference_data() { add_rows(); }
  void edge_divisors_match_the_reference() {
    QFETCH(int, dtype);
    QFETCH(int, fmod);
    QFETCH(QString, target);
    const DataType t = static_cast<DataType>(dtype);
    const std::vector<Tensor> values = {operand(t, false, 3), operand(t, true, 5)};
    const Graph g = testing::one_node_graph("Mod", {{"fmod", int64_t{fmod}}}, values);
    const QString failure = testing::compiled_vs_reference(g, values, target, testing::kExact);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
  }

  void zero_divisor_is_an_error_naming_the_node_data() { add_rows(); }
  void zero_divisor_is_an_error_naming_the_node() {
    QFETCH(int, dtype);
    QFETCH(int, fmod);
    QFETCH(QString, target);
    const DataType t = static_cast<DataType>(dtype);
    std::vector<Tensor> values = {operand(t, false, 3), operand(t, true, 5)};
    values[1].set_double(11, 0);
    const Graph g = testing::one_node_graph("Mod", {{"fmod", int64_t{fmod}}}, values);
    const std::string want = error_of([&] { run_reference(g, values); });
    QVERIFY2(want.find("remainder by zero") != std::string::npos, want.c_str());
    auto compiled = compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
    for (const compile::CompiledKernel& kernel : compiled->kernels())
      QVERIFY2(kernel.compiled, qPrintable(QString::fromStdString(kernel.name + ": " + kernel.fallback_reason)));
    const std::string got = error_of([&] { compiled->run(values); });
    QVERIFY2(got.find("node 'n' (Mod): integer remainder by zero") != std::string::npos, got.c_str());
  }

  // Integer Div: ONNX truncates where the loop IR floors, so it runs on the reference kernels,
  // which is what must hold on every backend: MIN / -1 wraps (no SIGFPE), edge divisors give the
  // reference's values, a zero divisor is an Error naming the node.
  void integer_div_never_traps_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<QString>("target");
    for (DataType t : testing::integer_types())
      for (const char* target : testing::backends_under_test())
        QTest::newRow(qPrintable(QString("%1@%2").arg(QString::fromStdString(std::string(dtype_name(t)))).arg(target)))
            << static_cast<int>(t) << QString(target);
  }
  void integer_div_never_traps() {
    QFETCH(int, dtype);
    QFETCH(QString, target);
    const DataType t = static_cast<DataType>(dtype);
    std::vector<Tensor> values = {operand(t, false, 3), operand(t, true, 5)};
    const Graph g = testing::one_node_graph("Div", {}, values);
    auto compiled =
        compile::CompiledModel::compile(std::make_shared<const Graph>(g), Target::parse(target.toStdString()));
    const std::vector<Tensor> got = compiled->run(values), want = run_reference(g, values);
    QCOMPARE(got.size(), want.size());
    QVERIFY(std::memcmp(got[0].raw_data(), want[0].raw_data(), want[0].nbytes()) == 0);
    values[1].set_double(11, 0);
    const std::string err = error_of([&] { compiled->run(values); });
    QVERIFY2(
        err.find("node 'n' (Div)") != std::string::npos && err.find("integer division by zero") != std::string::npos,
        err.c_str());
  }
};

QTEST_APPLESS_MAIN(TestIntegerTraps)
#include "test_integer_traps.moc"
