// ONNX conformance: every test named in tests/conformance/passing.txt (node tests, and the other
// folders of the ONNX test data as folder/name) must pass through
// `tessel run --target ref`. The list grows as ops land; tests left out, and why, are in
// excluded.txt, and `onnx_conformance_survey` regenerates both views from the whole suite.
//
// Environment: TESSEL_ONNX_NODE_TESTS (data folder), TESSEL_BINARY (the tool),
// TESSEL_CONFORMANCE_JOBS (processes at once, default 3).
#include <onnx/onnx_pb.h>

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "tests/conformance/node_test_catalog.h"
#include "tests/conformance/node_test_runner.h"
#include "tests/conformance/onnx_tensor_compare.h"

using namespace tessel::testing;

namespace {

const std::string kListDir = TESSEL_SOURCE_DIR "/tests/conformance";

std::string write_float_tensor(const QTemporaryDir& dir, const char* file, std::vector<int64_t> dims,
                               const std::vector<float>& values, bool as_raw_data) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  if (as_raw_data)
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  else
    for (float v : values) t.add_float_data(v);
  const std::string path = dir.filePath(file).toStdString();
  std::ofstream out(path, std::ios::binary);
  t.SerializeToOstream(&out);
  return path;
}

int parallel_processes() {
  const int jobs = qEnvironmentVariableIntValue("TESSEL_CONFORMANCE_JOBS");
  return jobs > 0 ? jobs : 3;
}

}  // namespace

class OnnxConformance : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The comparator is the oracle of every test below, so it is checked first.
  void comparator_reads_raw_and_typed_fields_alike() {
    QTemporaryDir dir;
    const auto raw = read_tensor_file(write_float_tensor(dir, "a.pb", {2, 2}, {1, 2, 3, 4}, true));
    const auto typed = read_tensor_file(write_float_tensor(dir, "b.pb", {2, 2}, {1, 2, 3, 4}, false));
    QCOMPARE(raw.dims, (std::vector<int64_t>{2, 2}));
    QCOMPARE(raw.reals, (std::vector<double>{1, 2, 3, 4}));
    QVERIFY(!compare_tensors(raw, typed).has_value());
  }

  void comparator_applies_float32_tolerance() {
    DecodedTensor expected{onnx::TensorProto::FLOAT, {3}, {1000.0, 0.0, NAN}, {}, {}};
    DecodedTensor within = expected;
    within.reals = {1000.0 + 0.099, 0.000009, NAN};  // 0.099 < 1e-5 + 1e-4 * 1000
    QVERIFY(!compare_tensors(within, expected).has_value());

    DecodedTensor beyond = expected;
    beyond.reals = {1000.0 + 0.2, 0.0, NAN};
    const auto message = compare_tensors(beyond, expected);
    QVERIFY(message.has_value());
    QVERIFY2(message->find("element [0]") != std::string::npos, message->c_str());

    DecodedTensor near_zero = expected;
    near_zero.reals = {1000.0, 0.00002, NAN};  // atol 1e-5 is exceeded
    QVERIFY(compare_tensors(near_zero, expected).has_value());

    DecodedTensor nan_for_number = expected;
    nan_for_number.reals = {NAN, 0.0, NAN};
    QVERIFY(compare_tensors(nan_for_number, expected).has_value());
  }

  void comparator_is_exact_for_integers_and_strict_on_type_and_shape() {
    DecodedTensor expected{onnx::TensorProto::INT64, {2}, {}, {5, -7}, {}};
    DecodedTensor off_by_one = expected;
    off_by_one.integers = {5, -6};
    QVERIFY(compare_tensors(off_by_one, expected).has_value());

    DecodedTensor other_type = expected;
    other_type.data_type = onnx::TensorProto::INT32;
    QVERIFY(compare_tensors(other_type, expected).has_value());

    DecodedTensor other_shape = expected;
    other_shape.dims = {2, 1};
    QVERIFY(compare_tensors(other_shape, expected).has_value());
  }

  void lists_name_existing_tests_once() {
    const std::string data_dir = node_test_data_dir();
    const auto passing = read_test_list(kListDir + "/passing.txt");
    const auto excluded = read_test_list(kListDir + "/excluded.txt");
    const auto available = list_all_tests(data_dir);
    const std::set<std::string> available_set(available.begin(), available.end());
    QVERIFY2(!available.empty(), ("no node tests in " + data_dir).c_str());

    std::set<std::string> seen;
    for (const std::string& name : passing) {
      QVERIFY2(available_set.count(name), (name + " is listed in passing.txt but not in " + data_dir).c_str());
      QVERIFY2(seen.insert(name).second, (name + " is listed twice in passing.txt").c_str());
    }
    for (const std::string& name : excluded)
      QVERIFY2(!seen.count(name), (name + " is in both passing.txt and excluded.txt").c_str());
  }

  // Any well-formed model opens: unknown ops become opaque nodes, so `tessel inspect` refuses none
  // of the test data's models (tests/conformance/inspect_all.sh does the same from a shell).
  void inspect_opens_every_model() {
    const std::string data_dir = node_test_data_dir();
    const std::string tessel = tessel_binary_path(TESSEL_BINARY_DIR "/app/cli/tessel");
    std::string failures;
    int opened = 0;
    const std::vector<std::string> names = list_all_tests(data_dir);
    for (const std::string& name : names) {
      const NodeTest test = read_node_test(data_dir, name);
      QProcess p;
      p.start(QString::fromStdString(tessel), {"inspect", QString::fromStdString(test.folder + "/model.onnx")});
      const bool finished = p.waitForFinished(60000);
      if (finished && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0) {
        ++opened;
        continue;
      }
      const QByteArray err = p.readAllStandardError().trimmed();
      failures += "\n  " + name + ": " + (finished ? err.split('\n').last().toStdString() : "timed out");
    }
    std::printf("inspect: %d of %zu models open\n", opened, names.size());
    QVERIFY2(failures.empty(), ("tessel inspect refused or crashed:" + failures).c_str());
  }

  void listed_node_tests_pass() {
    const std::string data_dir = node_test_data_dir();
    std::vector<NodeTest> tests;
    for (const std::string& name : read_test_list(kListDir + "/passing.txt"))
      tests.push_back(read_node_test(data_dir, name));
    QVERIFY2(!tests.empty(), "passing.txt lists no test");

    RunOptions options;
    options.tessel_binary = tessel_binary_path(TESSEL_BINARY_DIR "/app/cli/tessel");
    options.parallel_processes = parallel_processes();
    // The same list through a code generator (ctest onnx_conformance_llvm sets llvm).
    if (const char* target = std::getenv("TESSEL_CONFORMANCE_TARGET")) options.target = target;
    // The loop interpreter runs pytorch-operator/test_operator_conv in about 25 s of CPU time,
    // beyond a minute of wall time on a loaded machine.
    if (options.target == "interp") options.timeout_ms = 240000;
    QElapsedTimer clock;
    clock.start();
    const std::vector<NodeTestResult> results = run_node_tests(tests, options);

    std::printf("%-28s %s\n", "op", "passed/run");
    for (const auto& [op, counts] : pass_counts_by_op(tests, results))
      std::printf("%-28s %d/%d\n", op.c_str(), counts.first, counts.second);
    int passed = 0;
    std::string failures;
    for (const NodeTestResult& r : results) {
      if (r.passed)
        ++passed;
      else
        failures += "\n  " + r.name + ": " + r.message;
    }
    std::printf("onnx_conformance: %d of %zu listed node tests passed on target %s in %.1f s (%d processes)\n", passed,
                results.size(), options.target.c_str(), clock.elapsed() / 1000.0, options.parallel_processes);
    // The whole list on stdout: QtTest cuts a long failure message short.
    if (!failures.empty()) std::printf("failing node tests:%s\n", failures.c_str());
    std::fflush(stdout);
    QVERIFY2(failures.empty(), ("failing node tests:" + failures).c_str());
  }
};

QTEST_GUILESS_MAIN(OnnxConformance)
#include "test_onnx_conformance.moc"
