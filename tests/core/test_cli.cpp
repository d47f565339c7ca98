// The `tessel` binary, run as a user would: exit codes, one-line "tessel: ..." errors on stderr,
// the run contract (input_K.pb in, output_K.pb out, nothing partial left behind), inspect and ops.
#include <signal.h>
#include <sys/stat.h>

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/graph/op_table.h"
#include "core/support/memory_budget.h"
#include "core/tune/records.h"
#include "test_frontend_models.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

struct Result {
  int exit_code = -1;
  QString out, err;
};

Result tessel_cli(const QStringList& args) {
  QProcess p;
  p.start(TESSEL_BINARY_DIR "/app/cli/tessel", args);
  if (!p.waitForFinished(120000)) return {-1, {}, "did not finish: " + p.errorString()};
  if (p.exitStatus() != QProcess::NormalExit) return {-2, {}, "crashed"};
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

// The error contract: exactly one line, "tessel: " first.
void check_one_line_error(const Result& r, int expected_code) {
  QCOMPARE(r.exit_code, expected_code);
  QVERIFY2(r.err.startsWith("tessel: "), qPrintable(r.err));
  QVERIFY2(r.err.endsWith('\n') && r.err.count('\n') == 1, qPrintable(r.err));
}

QStringList files_in(const QString& dir) {
  return QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot | QDir::AllDirs, QDir::Name);
}

// x[N,3] → y = relu(x + w), z = x * 2: two outputs and a symbolic batch dim.
OnnxModel two_output_model() {
  OnnxModel m;
  m.input("x", DataType::kFloat32, {std::string("N"), 3});
  m.initializer("w", f32({3}, {1, -1, 0.5}));
  m.initializer("two", Tensor::scalar<float>(2));
  m.node("Add", {"x", "w"}, {"s"}, "add");
  m.node("Relu", {"s"}, {"y"}, "relu");
  m.node("Mul", {"x", "two"}, {"z"}, "double");
  m.output("y", DataType::kFloat32).output("z", DataType::kFloat32);
  return m;
}

// data[5,2] and runtime int64 indices[3] → Gather along axis 0.
OnnxModel gather_model() {
  OnnxModel m;
  m.input("data", DataType::kFloat32, {5, 2});
  m.input("rows", DataType::kInt64, {3});
  m.node("Gather", {"data", "rows"}, {"y"}, "pick_rows");
  m.output("y", DataType::kFloat32);
  return m;
}

// x[1] expanded to `dims` f32, a graph output: the plan needs twice its bytes (arena and output).
OnnxModel expand_model(int64_t rows, int64_t columns) {
  OnnxModel m;
  m.input("x", DataType::kFloat32, {1});
  m.initializer("shape", i64({2}, {rows, columns}));
  m.node("Expand", {"x", "shape"}, {"big"}, "spread");
  m.output("big", DataType::kFloat32);
  return m;
}

// A C caller of a library built from gather_model: rows from the command line; prints what
// model_run returned and model_last_error().
const char* kGatherDriver = R"(#include <stdio.h>
#include <stdlib.h>
#include "model.h"
int main(int argc, char** argv) {
  if (argc != 4) return 9;
  float data[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, y[6];
  int64_t rows[3];
  for (int k = 0; k < 3; ++k) rows[k] = atoll(argv[k + 1]);
  const void* inputs[2] = {data, rows};
  void* outputs[1] = {y};
  int status = model_run(inputs, outputs);
  printf("%d %s\n", status, status == 0 ? "" : model_last_error());
  if (status == 0) printf("%g %g %g %g %g %g\n", y[0], y[1], y[2], y[3], y[4], y[5]);
  return 0;
}
)";

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path(const QString& name) const { return dir_.filePath(name); }

  // A model plus an inputs folder holding input_0.pb; returns the model path.
  QString prepare_run(const QString& name, const Tensor& input) {
    QDir().mkpath(path(name + "_inputs"));
    write_tensor_pb(input, "x", path(name + "_inputs/input_0.pb").toStdString());
    return QString::fromStdString(two_output_model().save(dir_, (name + ".onnx").toStdString()));
  }

 private Q_SLOTS:
  // A runtime index out of range ends `tessel run` with one line naming the node and the index,
  // on every backend, and no outputs; a constant one is refused when the model is compiled.
  void run_reports_an_index_out_of_range() {
    const QString model = QString::fromStdString(gather_model().save(dir_, "gather.onnx"));
    QDir().mkpath(path("gather_bad"));
    write_tensor_pb(f32({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), "data", path("gather_bad/input_0.pb").toStdString());
    write_tensor_pb(i64({3}, {-5, 4, 7}), "rows", path("gather_bad/input_1.pb").toStdString());
    for (const char* target : {"llvm", "c", "interp", "ref"}) {
      const QString out = path(QString("gather_out_") + target);
      const Result r = tessel_cli({"run", model, "--inputs", path("gather_bad"), "--out-dir", out, "--target", target});
      check_one_line_error(r, 1);
      QVERIFY2(r.err.contains("gather.onnx") && r.err.contains("index 7"), qPrintable(target + (": " + r.err)));
      if (QString(target) != "ref")  // the reference kernels word it their own way
        QVERIFY2(r.err.contains("node 'pick_rows' (Gather): index 7 out of range [-5, 5) on axis 0"),
                 qPrintable(r.err));
      QVERIFY(files_in(out).isEmpty());
    }
    OnnxModel constant;
    constant.input("data", DataType::kFloat32, {5, 2});
    constant.initializer("rows", i64({2}, {1, -6}));
    constant.node("Gather", {"data", "rows"}, {"y"}, "pick_rows");
    constant.output("y", DataType::kFloat32);
    QDir().mkpath(path("constant_in"));
    write_tensor_pb(f32({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), "data", path("constant_in/input_0.pb").toStdString());
    const Result r = tessel_cli({"run", QString::fromStdString(constant.save(dir_, "constant_gather.onnx")), "--inputs",
                                 path("constant_in"), "--out-dir", path("constant_out"), "--target", "llvm"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains(
                 "node 'pick_rows' (Gather): index -6 out of range [-5, 5) on axis 0 (the indices are a constant)"),
             qPrintable(r.err));
  }

  // The library `tessel build` writes reports a failed check too: model_run returns 2 and
  // model_last_error() names the kernel, the node and the index.
  void built_library_reports_an_index_out_of_range() {
    for (const char* target : {"llvm", "c"}) {
      QTemporaryDir work;
      const QString model = QString::fromStdString(gather_model().save(dir_, "lib_gather.onnx"));
      Result r = tessel_cli({"build", model, "-o", work.filePath("libmodel.so"), "--header", work.filePath("model.h"),
                             "--name", "model", "--target", target});
      QVERIFY2(r.exit_code == 0, qPrintable(r.err));
      QFile driver(work.filePath("driver.c"));
      QVERIFY(driver.open(QIODevice::WriteOnly));
      driver.write(kGatherDriver);
      driver.close();
      QProcess cc;
      cc.start("cc", {"-std=c11", "-Wall", "-Werror", "-o", work.filePath("driver"), work.filePath("driver.c"), "-I",
                      work.path(), "-L", work.path(), "-lmodel", "-Wl,-rpath," + work.path()});
      QVERIFY(cc.waitForFinished(60000));
      QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().constData());
      auto run_driver = [&](const QStringList& rows) {
        QProcess p;
        p.start(work.filePath("driver"), rows);
        p.waitForFinished(60000);
        return QString::fromUtf8(p.readAllStandardOutput());
      };
      QCOMPARE(run_driver({"4", "-5", "-1"}), QString("0 \n8 9 0 1 8 9\n"));
      const QString failed = run_driver({"1", "5", "0"});
      QVERIFY2(failed.startsWith("2 kernel '") &&
                   failed.contains("node 'pick_rows' (Gather): index 5 out of range [-5, 5) on axis 0"),
               qPrintable(target + (": " + failed)));
    }
  }

  // A model whose memory plan needs more than the limit is refused before anything is allocated,
  // naming the largest tensor and the limit; --memory-limit raises or lowers it.
  void memory_limit_refuses_a_plan_too_big() {
    const QString model = QString::fromStdString(expand_model(1 << 16, 1 << 15).save(dir_, "expand8g.onnx"));  // 8 GiB
    QDir().mkpath(path("expand_in"));
    write_tensor_pb(f32({1}, {2}), "x", path("expand_in/input_0.pb").toStdString());
    Result r = tessel_cli(
        {"run", model, "--inputs", path("expand_in"), "--out-dir", path("expand_out"), "--memory-limit", "1G"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("expand8g.onnx") && r.err.contains("needs 16.0 GiB") &&
                 r.err.contains("'big' f32[65536,32768] (8.0 GiB)") && r.err.contains("memory limit of 1.0 GiB") &&
                 r.err.contains("--memory-limit"),
             qPrintable(r.err));
    r = tessel_cli({"build", model, "-o", path("never.so"), "--memory-limit", "512M"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("memory limit of 512.0 MiB"), qPrintable(r.err));
    QVERIFY(!QFile::exists(path("never.so")));
    r = tessel_cli({"profile", model, "--memory-limit", "2G"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("memory limit of 2.0 GiB"), qPrintable(r.err));
    // No machine has 3/4 of 128 TiB: the default limit refuses it.
    const QString huge =
        QString::fromStdString(expand_model(int64_t{1} << 22, int64_t{1} << 21).save(dir_, "expand32t.onnx"));
    r = tessel_cli({"run", huge, "--inputs", path("expand_in"), "--out-dir", path("expand_out")});
    check_one_line_error(r, 1);
    // The basis is the machine's: physical memory, or a container's limit or ulimit -v when lower.
    std::string basis;
    (void)default_memory_limit(&basis);
    QVERIFY2(r.err.contains(QString::fromStdString("(" + basis + ")")), qPrintable(r.err));
    check_one_line_error(tessel_cli({"run", model, "--inputs", path("expand_in"), "--out-dir", path("expand_out"),
                                     "--memory-limit", "lots"}),
                         2);
    r = tessel_cli({"run", "--help"});
    QVERIFY2(r.out.contains("--memory-limit SIZE"), qPrintable(r.out));
  }

  void help_version_and_usage_errors() {
    Result r = tessel_cli({"--help"});
    QCOMPARE(r.exit_code, 0);
    for (const char* cmd : {"run", "inspect", "ops"}) QVERIFY2(r.out.contains(cmd), qPrintable(r.out));
    r = tessel_cli({"--version"});
    QCOMPARE(r.exit_code, 0);
    QCOMPARE(r.out.trimmed(), QString("tessel ") + TESSEL_VERSION);

    check_one_line_error(tessel_cli({}), 2);
    r = tessel_cli({"frobnicate"});
    check_one_line_error(r, 2);
    QVERIFY(r.err.contains("unknown command 'frobnicate'"));
    r = tessel_cli({"run", "m.onnx", "--inputs", "a", "--out-dir", "b", "--bogus"});
    check_one_line_error(r, 2);
    QVERIFY(r.err.contains("--bogus"));
    check_one_line_error(tessel_cli({"run", "m.onnx", "--inputs", "a"}), 2);  // --out-dir missing
    check_one_line_error(tessel_cli({"inspect", "m.onnx", "--shape", "x=1xq"}), 2);
    r = tessel_cli({"run", "--help"});
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.contains("input_K.pb"));
  }

  void run_writes_every_output() {
    const Tensor x = f32({2, 3}, {-2, 0.5, 1, 3, -4, 0});
    const QString model = prepare_run("ok", x);
    for (const QString& target : {QString("ref"), QString(R"({"kind": "ref"})")}) {
      const QString out = path("ok_out_" + QString::number(target.size()));
      const Result r = tessel_cli({"run", model, "--inputs", path("ok_inputs"), "--out-dir", out, "--target", target});
      QVERIFY2(r.exit_code == 0, qPrintable(r.err));
      QCOMPARE(files_in(out), (QStringList{"output_0.pb", "output_1.pb"}));
      compare_tensors(read_tensor_pb((out + "/output_0.pb").toStdString()), f32({2, 3}, {0, 0, 1.5, 4, 0, 0.5}));
      compare_tensors(read_tensor_pb((out + "/output_1.pb").toStdString()), f32({2, 3}, {-4, 1, 2, 6, -8, 0}));
      onnx::TensorProto proto;  // named after the graph output
      std::ifstream in((out + "/output_1.pb").toStdString(), std::ios::binary);
      QVERIFY(proto.ParseFromIstream(&in));
      QCOMPARE(proto.name(), std::string("z"));
    }
  }

  void run_binds_shape_operands_of_onnx_node_tests() {
    // In the ONNX node tests, Reshape's shape is a runtime input; tessel run binds it.
    const QString test = "/usr/share/libonnx-testdata/data/node/test_reshape_reordered_all_dims";
    QVERIFY2(QFile::exists(test + "/model.onnx"), "libonnx-testdata is a build dependency (scripts/packages.txt)");
    const QString out = path("reshape_out");
    const Result r = tessel_cli({"run", test + "/model.onnx", "--inputs", test + "/test_data_set_0", "--out-dir", out});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    compare_tensors(read_tensor_pb((out + "/output_0.pb").toStdString()),
                    read_tensor_pb((test + "/test_data_set_0/output_0.pb").toStdString()));
  }

  void run_fixture_from_the_onnx_package() {
    const QString dir = TESSEL_SOURCE_DIR "/tests/data/frontend";
    const QString out = path("mlp_out");
    const Result r =
        tessel_cli({"run", dir + "/mlp_external.onnx", "--inputs", dir + "/mlp_external", "--out-dir", out});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    compare_tensors(read_tensor_pb((out + "/output_0.pb").toStdString()),
                    read_tensor_pb((dir + "/mlp_external/output_0.pb").toStdString()), 1e-3);
  }

  // tessel tune appends one record per measurement (each kernel's default schedule first; a whole
  // model's budget is --trials per kernel in all, spread by time), and run --records applies the
  // log: same outputs, the tuned kernels counted. A damaged log is an error naming its file and line.
  void tune_writes_a_log_that_run_applies() {
    const QString dir = TESSEL_SOURCE_DIR "/resources/models";
    const QString model = dir + "/mlp.onnx", log = path("tune.jsonl");
    Result r = tessel_cli(
        {"tune", model, "--records", log, "--trials", "4", "--batch", "2", "--min-time-ms", "1", "--target", "llvm"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("speedup"), qPrintable(r.out));
    QFile file(log);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
    file.close();
    QSet<QString> kernels;
    int verified = 0;  // the final race's measurements (core/tune/verify.h), beyond the budget
    for (int k = 0; k < lines.size(); ++k) {
      const QJsonObject rec = QJsonDocument::fromJson(lines[k]).object();
      for (const char* field : {"kernel_key", "kernel", "target", "schedule", "ms_min", "ms_median", "error", "cache"})
        QVERIFY2(rec.contains(field), lines[k].constData());
      if (!kernels.contains(rec["kernel"].toString())) {  // the default schedule, measured first: it runs
        QCOMPARE(rec["error"].toString(), QString());
        QVERIFY(rec["ms_min"].toDouble() > 0);
      }
      kernels.insert(rec["kernel"].toString());
      verified += rec["verified"].toBool();
    }
    QVERIFY(!kernels.isEmpty());
    QCOMPARE(lines.size() - verified, 4 * kernels.size());
    QVERIFY(verified % 6 == 0);  // 3 rounds of (best, default) per kernel whose best was not the default

    const QString out = path("tuned_out");
    r = tessel_cli({"run", model, "--inputs", dir + "/mlp", "--out-dir", out, "--records", log});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QString("%1 of %1 compiled kernels use tuned schedules").arg(kernels.size())),
             qPrintable(r.err));
    compare_tensors(read_tensor_pb((out + "/output_0.pb").toStdString()),
                    read_tensor_pb((dir + "/mlp/output_0.pb").toStdString()), 1e-3);

    QVERIFY(file.open(QIODevice::Append));
    file.write("{\"kernel_key\": 7}\n");
    file.close();
    // A damaged line costs only itself (logs are shared): named with its line, counted, and the
    // other records still apply (issue 40).
    r = tessel_cli({"run", model, "--inputs", dir + "/mlp", "--out-dir", path("damaged_log_out"), "--records", log});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QString("tune.jsonl:%1: field 'kernel_key'").arg(lines.size() + 1)), qPrintable(r.err));
    QVERIFY2(r.err.contains(QString("1 of %1 records").arg(lines.size() + 1)), qPrintable(r.err));
    QVERIFY2(r.err.contains(QString("%1 of %1 compiled kernels use tuned schedules").arg(kernels.size())),
             qPrintable(r.err));

    r = tessel_cli({"tune", model, "--records", log, "--kernel", "no_such_kernel"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("no_such_kernel") && r.err.contains("kernels:"), qPrintable(r.err));
  }

  // Ctrl-C during a whole-model tune (the task scheduler's loop) stops after the batch being
  // measured: exit 130, the table of what was tuned so far, and a log whose every line is a record.
  void tune_stops_on_ctrl_c_and_keeps_the_log() {
    const QString model = TESSEL_SOURCE_DIR "/resources/models/mlp.onnx", log = path("interrupted.jsonl");
    QProcess p;
    p.start(TESSEL_BINARY_DIR "/app/cli/tessel", {"tune", model, "--records", log, "--trials", "500", "--batch", "2",
                                                  "--min-time-ms", "1", "--target", "llvm"});
    QVERIFY(p.waitForStarted());
    auto lines = [&] {
      QFile file(log);
      return file.open(QIODevice::ReadOnly) ? file.readAll().count('\n') : 0;
    };
    QElapsedTimer waited;
    waited.start();
    while (lines() < 6 && waited.elapsed() < 120000 && p.state() == QProcess::Running)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    QVERIFY2(lines() >= 6, qPrintable(QString::fromUtf8(p.readAllStandardError())));
    const qint64 pid = p.processId();  // 0 once it has ended: kill(0) would signal this test's group
    QVERIFY2(pid > 0 && p.state() == QProcess::Running, "the tune ended before it could be interrupted");
    ::kill(static_cast<pid_t>(pid), SIGINT);
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 130);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(out.contains("speedup") && out.contains("model"), qPrintable(out));
    QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("interrupted"));
    const std::vector<tune::TuningRecord> records = tune::read_records(log.toStdString());  // every line parses
    QVERIFY(records.size() >= 6 && records.size() < 1500);
  }

  // A model with a symbolic batch dim tunes once the dim is bound: the measuring process imports it
  // with the same --shape, so every measurement succeeds (an unbound N would fail each one).
  void tune_binds_symbolic_dims_in_the_measuring_process() {
    const QString model = path("symbolic.onnx"), log = path("symbolic.jsonl");
    OnnxModel::write_file(model.toStdString(), two_output_model().bytes());
    Result r = tessel_cli({"tune", model, "--records", log, "--trials", "2", "--batch", "2", "--min-time-ms", "1",
                           "--target", "llvm", "--shape", "x=4x3"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
    QFile file(log);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QVERIFY(!lines.isEmpty());
    for (const QString& line : lines) {
      const nlohmann::json record = nlohmann::json::parse(line.toStdString());
      QVERIFY2(record.value("error", "").empty(), line.toUtf8().constData());
      QVERIFY(record.value("ms_min", 0.0) > 0);
    }
  }

  void run_errors_leave_no_outputs() {
    const QString model = prepare_run("bad", f32({2, 3}, {1, 2, 3, 4, 5, 6}));

    // Unknown target: the available ones are listed.
    QString out = path("bad_target_out");
    Result r = tessel_cli({"run", model, "--inputs", path("bad_inputs"), "--out-dir", out, "--target", "warp-drive"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("ref"), qPrintable(r.err));
    QVERIFY(files_in(out).isEmpty());

    // An input file of the wrong type names the file.
    QDir().mkpath(path("int_inputs"));
    write_tensor_pb(i64({2, 3}, {1, 2, 3, 4, 5, 6}), "x", path("int_inputs/input_0.pb").toStdString());
    out = path("bad_type_out");
    r = tessel_cli({"run", model, "--inputs", path("int_inputs"), "--out-dir", out});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("input_0.pb") && r.err.contains("i64[2,3]"), qPrintable(r.err));
    QVERIFY(files_in(out).isEmpty());

    // A missing input file.
    QDir().mkpath(path("no_inputs"));
    r = tessel_cli({"run", model, "--inputs", path("no_inputs"), "--out-dir", out});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("input_0.pb") && r.err.contains("missing"), qPrintable(r.err));

    // A model error names the model file and the node.
    OnnxModel unknown;
    unknown.input("x", DataType::kFloat32, {2, 3});
    unknown.node("Frobnicate", {"x"}, {"y"}, "frob");
    unknown.output("y", DataType::kFloat32);
    const QString bad_model = QString::fromStdString(unknown.save(dir_, "unknown.onnx"));
    r = tessel_cli({"run", bad_model, "--inputs", path("bad_inputs"), "--out-dir", out});
    check_one_line_error(r, 1);
    QCOMPARE(r.err,
             "tessel: " + bad_model +
                 ": cannot compile: 1 part of the model Tessel cannot run: node 'frob' (Frobnicate): unknown op\n");
    QVERIFY(files_in(out).isEmpty());

    // Writing cannot finish (output_1.pb is taken by a folder): no output_0.pb and no temporary
    // file remains.
    out = path("blocked_out");
    QDir().mkpath(out + "/output_1.pb/occupied");
    r = tessel_cli({"run", model, "--inputs", path("bad_inputs"), "--out-dir", out});
    check_one_line_error(r, 1);
    QCOMPARE(files_in(out), QStringList{"output_1.pb"});
  }

  void inspect_reports_nodes_and_totals() {
    const QString model = QString::fromStdString(two_output_model().save(dir_, "inspect.onnx"));
    Result r = tessel_cli({"inspect", model});  // N is symbolic: the model opens, its types unknown
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("x:?") && r.out.contains("cannot compile") && r.out.contains("--shape x=1x3"),
             qPrintable(r.out));

    r = tessel_cli({"inspect", model, "--shape", "x=4x3"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    for (const char* s : {"add", "relu", "double", "f32[4,3]", "3 nodes", "4 parameters"})
      QVERIFY2(r.out.contains(s), qPrintable(QString(s) + " missing in:\n" + r.out));

    r = tessel_cli({"inspect", model, "--shape", "x=4x3", "--json"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonArray nodes = j["nodes"].toArray();
    QCOMPARE(nodes.size(), 3);
    QCOMPARE(nodes[0].toObject()["op"].toString(), QString("Add"));
    QCOMPARE(nodes[0].toObject()["inputs"].toArray()[1].toObject()["name"].toString(), QString("w"));
    const QJsonArray shape = nodes[2].toObject()["outputs"].toArray()[0].toObject()["shape"].toArray();
    QCOMPARE(shape, (QJsonArray{4, 3}));
    double flops = 0;
    for (const auto& n : nodes) flops += n.toObject()["flops"].toDouble();
    const QJsonObject totals = j["totals"].toObject();
    QCOMPARE(totals["flops"].toDouble(), flops);
    QCOMPARE(totals["parameters"].toInt(), 4);  // w (3) + two (1)
    QCOMPARE(totals["nodes"].toInt(), 3);
    QCOMPARE(totals["ops"].toObject()["Relu"].toInt(), 1);
    QCOMPARE(totals["ops"].toObject()["Mul"].toInt(), 1);
  }

  void ops_lists_every_op_and_documents_attributes() {
    Result r = tessel_cli({"ops"});
    QCOMPARE(r.exit_code, 0);
    const QStringList lines = r.out.split('\n');
    for (const OpDef& op : all_ops()) {
      bool listed = false;
      for (const QString& line : lines)
        listed = listed || (line.startsWith(QString::fromStdString(op.name) + " ") &&
                            line.contains(QString::fromStdString(std::string(pattern_name(op.pattern)))));
      QVERIFY2(listed, op.name.c_str());
    }
    QVERIFY(r.out.contains(QString("%1 ops").arg(all_ops().size())));
    // The "compiles" column: yes, or partial/no with the reason from the op table.
    QVERIFY(lines[0].trimmed().endsWith("compiles"));
    for (const QString& line : lines) {
      if (line.startsWith("Reshape ")) QVERIFY2(line.endsWith("  yes"), qPrintable(line));
      if (line.startsWith("Relu ")) QVERIFY2(line.endsWith("  partial: f32/f64 only"), qPrintable(line));
    }

    r = tessel_cli({"ops", "--doc"});
    QCOMPARE(r.exit_code, 0);
    for (const OpDef& op : all_ops())
      for (const FieldDoc& f : op.attr_doc())
        QVERIFY2(r.out.contains(QString::fromStdString("      " + f.name + ": " + f.type)),
                 qPrintable(QString::fromStdString(op.name + "." + f.name)));
  }

  // `tessel lower --dump-after` prints the program after schedule steps and lowering passes the
  // way `tessel passes --dump-after` prints graphs: all, changed, or one named step.
  void lower_dumps_after_steps_and_passes() {
    QFile schedule(path("split.sched"));
    QVERIFY(schedule.open(QIODevice::WriteOnly));
    schedule.write("split(C.i, 4)\n");
    schedule.close();
    const QStringList base = {"lower", "--op", "matmul M=8 N=8 K=8", "--schedule", path("split.sched")};
    Result all = tessel_cli(base + QStringList{"--dump-after", "all"});
    QCOMPARE(all.exit_code, 0);
    QVERIFY2(all.out.contains("// ---- after initial, "), qPrintable(all.out));
    QVERIFY2(all.out.contains("// ---- after step 1 split(C.i, 4), "), qPrintable(all.out));
    QVERIFY2(all.out.contains("// ---- after loop_partition (unchanged), "), qPrintable(all.out));
    QVERIFY2(all.out.contains("for i.outer in 0..2 {"), qPrintable(all.out));

    Result one = tessel_cli(base + QStringList{"--dump-after", "step 1"});
    QCOMPARE(one.exit_code, 0);
    QCOMPARE(one.out.count("// ---- after"), 1);
    QVERIFY(one.out.contains("// ---- after step 1 split(C.i, 4), "));

    Result changed = tessel_cli(base + QStringList{"--dump-after", "changed"});
    QCOMPARE(changed.exit_code, 0);
    QVERIFY(changed.out.contains("// ---- after storage_flatten, "));
    QVERIFY(!changed.out.contains("(unchanged)"));

    Result unknown = tessel_cli(base + QStringList{"--dump-after", "unrol"});
    check_one_line_error(unknown, 2);
    QVERIFY2(unknown.err.contains("no schedule step or lowering pass named 'unrol'"), qPrintable(unknown.err));
  }

  // `tessel lower --verify-each` checks the program after build_loop_nests and every lowering
  // pass (a malformed one fails naming the pass: test_loopir_verify builds such a pass) and then
  // prints what it would print without the flag.
  void lower_verify_each_checks_every_pass() {
    const QStringList matmul = {"lower", "--op", "matmul M=64 N=64 K=64", "--verify-each"};
    Result cpu = tessel_cli(matmul);
    QVERIFY2(cpu.exit_code == 0, qPrintable(cpu.err));
    QVERIFY2(cpu.out.contains("# program (lowered in "), qPrintable(cpu.out));
    Result gpu = tessel_cli(matmul + QStringList{"--gpu"});
    QVERIFY2(gpu.exit_code == 0, qPrintable(gpu.err));
    QVERIFY2(gpu.out.contains("barrier(shared)"), qPrintable(gpu.out));
    Result passes = tessel_cli(matmul + QStringList{"--gpu", "--passes"});
    QVERIFY2(passes.exit_code == 0, qPrintable(passes.err));
    QVERIFY2(passes.out.contains("# insert_barriers  (changed"), qPrintable(passes.out));
    Result help = tessel_cli({"lower", "--help"});
    QVERIFY2(help.out.contains("--verify-each"), qPrintable(help.out));
  }

  // Every file the user names is read only when it is a regular file: a FIFO would hang the read,
  // a device never end, a folder read as nothing. Text files are bounded in size.
  void non_regular_and_oversized_files_are_refused() {
    const QStringList lower = {"lower", "--op", "matmul M=8 N=8 K=8", "--schedule"};
    QVERIFY(::mkfifo(path("fifo.sched").toUtf8().constData(), 0600) == 0);
    Result r = tessel_cli(lower + QStringList{path("fifo.sched")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("fifo.sched: is a FIFO, not a schedule file"), qPrintable(r.err));

    QVERIFY(QDir().mkpath(path("sched_folder")));
    r = tessel_cli(lower + QStringList{path("sched_folder")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("sched_folder: is a folder, not a schedule file"), qPrintable(r.err));

    QFile big(path("big.sched"));
    QVERIFY(big.open(QIODevice::WriteOnly));
    big.write(QByteArray((1 << 20) + 1, '\n'));
    big.close();
    r = tessel_cli(lower + QStringList{path("big.sched")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("big.sched: larger than the 1048576 bytes allowed for a schedule file"), qPrintable(r.err));

    r = tessel_cli({"inspect", "/dev/zero"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("/dev/zero: is a character device, not a"), qPrintable(r.err));

    QVERIFY(::mkfifo(path("fifo.graph").toUtf8().constData(), 0600) == 0);
    r = tessel_cli({"passes", path("fifo.graph")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("fifo.graph: is a FIFO, not a graph text file"), qPrintable(r.err));

    QVERIFY(::mkfifo(path("fifo.onnx").toUtf8().constData(), 0600) == 0);
    r = tessel_cli({"inspect", path("fifo.onnx")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("fifo.onnx: is a FIFO, not an ONNX model file"), qPrintable(r.err));

    const QString model = prepare_run("fifo_input", f32({2, 3}, {1, 2, 3, 4, 5, 6}));
    QFile::remove(path("fifo_input_inputs/input_0.pb"));
    QVERIFY(::mkfifo(path("fifo_input_inputs/input_0.pb").toUtf8().constData(), 0600) == 0);
    r = tessel_cli({"run", model, "--inputs", path("fifo_input_inputs"), "--out-dir", path("fifo_input_out")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("input_0.pb: is a FIFO, not a TensorProto file"), qPrintable(r.err));
  }

  // A schedule file's errors name the file and line, also for a step that parses but does not fit
  // the kernel; bytes echoed from a binary file come out escaped, never raw control bytes.
  void schedule_errors_name_the_file_and_escape_control_bytes() {
    const auto write = [&](const QString& name, const QByteArray& text) {
      QFile f(path(name));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(text);
    };
    const QStringList lower = {"lower", "--op", "matmul M=8 N=8 K=8", "--schedule"};
    write("misfit.sched", "# comment\nsplit(C.i, 4)\n\nsplit(C.zz, 4)\n");
    Result r = tessel_cli(lower + QStringList{path("misfit.sched")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("misfit.sched: schedule line 4: step 2 split(C.zz, 4): stage C has no axis 'zz'"),
             qPrintable(r.err));

    write("binary.sched", QByteArray("split(C.i, 4)\nbo\x01gus\x1b[2J(x)\n"));
    r = tessel_cli(lower + QStringList{path("binary.sched")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("binary.sched: schedule line 2: "), qPrintable(r.err));
    QVERIFY2(r.err.contains("'bo\\x01gus\\x1b[2J'"), qPrintable(r.err));
    for (QChar c : r.err.chopped(1)) QVERIFY2(c.unicode() >= 0x20 && c.unicode() != 0x7f, qPrintable(r.err));
  }

  // Sizes are computed with overflow checks: an input whose element count wraps int64 (it read as 0
  // elements and 0 FLOPs) or whose bytes are beyond any machine is refused naming the value, and so
  // are huge extents in an op spec.
  void huge_shapes_are_refused() {
    const QString model = QString::fromStdString(two_output_model().save(dir_, "huge.onnx"));
    Result r = tessel_cli({"inspect", model, "--shape", "x=4611686018427387904x3"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("input 'x': shape [4611686018427387904,3] has more elements than a 64-bit count holds"),
             qPrintable(r.err));
    r = tessel_cli({"build", model, "--shape", "x=70368744177664x3", "-o", path("huge.so")});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("input 'x': shape [70368744177664,3] is larger than the 256 TiB allowed for one tensor"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(path("huge.so")));

    r = tessel_cli({"lower", "--op", "matmul M=9223372036854775807"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("matmul: attribute M=9223372036854775807 is larger than 2147483647"), qPrintable(r.err));
    r = tessel_cli({"lower", "--op", "matmul M=2147483647 N=2147483647 K=2147483647"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("matmul: tensor A: shape [2147483647,2147483647] is larger than the 256 TiB"),
             qPrintable(r.err));
  }

  // A model without outputs would run and write nothing: refused at import, naming the file.
  void model_without_outputs_is_refused() {
    OnnxModel m;
    m.input("x", DataType::kFloat32, {2, 3});
    m.node("Relu", {"x"}, {"y"}, "relu");
    const QString model = QString::fromStdString(m.save(dir_, "no_outputs.onnx"));
    for (const QString& command : {QString("inspect"), QString("build")}) {
      QStringList args = {command, model};
      if (command == "build") args += QStringList{"-o", path("no_outputs.so")};
      const Result r = tessel_cli(args);
      check_one_line_error(r, 1);
      QVERIFY2(r.err.contains("no_outputs.onnx: the model's graph has no outputs, so it computes nothing"),
               qPrintable(r.err));
    }
    QVERIFY(!QFile::exists(path("no_outputs.so")));
  }

  // A failed run leaves the out-dir exactly as it was: an output_0.pb from an earlier run is not
  // replaced and then deleted when a later output cannot be written.
  void failed_run_keeps_earlier_outputs() {
    const QString model = prepare_run("keep", f32({2, 3}, {1, 2, 3, 4, 5, 6}));
    const QString out = path("keep_out");
    QDir().mkpath(out + "/output_1.pb/occupied");
    QFile earlier(out + "/output_0.pb");
    QVERIFY(earlier.open(QIODevice::WriteOnly));
    earlier.write("earlier run");
    earlier.close();
    Result r = tessel_cli({"run", model, "--inputs", path("keep_inputs"), "--out-dir", out});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("output_1.pb: exists and is not a regular file"), qPrintable(r.err));
    QCOMPARE(files_in(out), (QStringList{"output_0.pb", "output_1.pb"}));
    QVERIFY(earlier.open(QIODevice::ReadOnly));
    QCOMPARE(earlier.readAll(), QByteArray("earlier run"));
    earlier.close();

    // Once the way is clear the run replaces the earlier output and leaves nothing else behind.
    QVERIFY(QDir(out + "/output_1.pb").removeRecursively());
    r = tessel_cli({"run", model, "--inputs", path("keep_inputs"), "--out-dir", out});
    QCOMPARE(r.exit_code, 0);
    QCOMPARE(files_in(out), (QStringList{"output_0.pb", "output_1.pb"}));
    QVERIFY(earlier.open(QIODevice::ReadOnly));
    QVERIFY(earlier.readAll() != QByteArray("earlier run"));
  }

  // An llvm target's mattr names features LLVM knows; an unknown one is an error naming it
  // (LLVM alone warned and went on, exit 0).
  void unknown_llvm_features_are_refused() {
    if (!QFile::exists(TESSEL_BINARY_DIR "/plugins/libtessel_llvm_cpu.so")) QSKIP("the llvm plugin is not built");
    const QString model = prepare_run("mattr", f32({2, 3}, {1, 2, 3, 4, 5, 6}));
    Result r = tessel_cli({"run", model, "--inputs", path("mattr_inputs"), "--out-dir", path("mattr_out"), "--target",
                           "llvm -mattr=+bogus"});
    check_one_line_error(r, 1);
    QVERIFY2(r.err.contains("unknown mattr feature 'bogus'"), qPrintable(r.err));
    QVERIFY(files_in(path("mattr_out")).isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestCli)
#include "test_cli.moc"
