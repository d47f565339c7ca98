// End to end: the sample models of resources/models/ through the `tessel` binary.
//
//   scripts/gen_models.py ──▶ <name>.onnx, <name>/input_0.pb, <name>/output_0.pb (numpy), <name>/expected.json
//                                   │                                   ▲                     ▲
//          tessel run --target ref ─┴─▶ output_0.pb ── compare ─────────┘                     │
//          tessel inspect --json ─────▶ node counts, FLOPs per node ── compare ───────────────┘
//
// The expected values never come from Tessel: outputs are the generator's own numpy forward pass
// and the counts are counted by the generator from the layer shapes.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <map>

#include "tests/conformance/node_test_runner.h"
#include "tests/e2e/inspect_report.h"

using namespace tessel::testing;

namespace {

const QString kModels = TESSEL_SOURCE_DIR "/resources/models";
const QStringList kSamples = {"resnet_block", "mlp", "mobilenet_block", "attention_block"};

// What run_matches_numpy_reference runs the models on: ref, or $TESSEL_E2E_TARGET (the ctests
// e2e_models_opencl and e2e_models_cuda run only that function, on their device).
QString run_target() {
  const QByteArray target = qgetenv("TESSEL_E2E_TARGET");
  return target.isEmpty() ? QString("ref") : QString::fromUtf8(target);
}

QString tessel() { return QString::fromStdString(tessel_binary_path(TESSEL_BINARY_DIR "/app/cli/tessel")); }

struct Finished {
  int exit_code = -1;
  QByteArray out, err;
};

Finished run_tessel(const QStringList& arguments) {
  QProcess p;
  p.start(tessel(), arguments);
  Finished f;
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
    f.err = "did not finish in 120 s";
    return f;
  }
  f.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  f.out = p.readAllStandardOutput();
  f.err = p.readAllStandardError();
  return f;
}

QJsonObject read_json(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

void add_sample_rows() {
  QTest::addColumn<QString>("name");
  for (const QString& name : kSamples) QTest::newRow(name.toUtf8().constData()) << name;
}

}  // namespace

class EndToEndModels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void samples_are_committed_and_small_data() { add_sample_rows(); }
  void samples_are_committed_and_small() {
    QFETCH(QString, name);
    const QFileInfo model(kModels + "/" + name + ".onnx");
    QVERIFY2(model.exists(), qPrintable(model.filePath() + " is missing: run scripts/gen_models.py"));
    QVERIFY2(model.size() < 300 * 1024, qPrintable(model.filePath() + " is over 300 KB"));
    for (const char* file : {"input_0.pb", "output_0.pb", "expected.json"})
      QVERIFY2(QFile::exists(kModels + "/" + name + "/" + file), qPrintable(name + "/" + file + " is missing"));
  }

  void run_matches_numpy_reference_data() { add_sample_rows(); }
  void run_matches_numpy_reference() {
    QFETCH(QString, name);
    QTemporaryDir out;
    const Finished f = run_tessel({"run", kModels + "/" + name + ".onnx", "--inputs", kModels + "/" + name, "--out-dir",
                                   out.path(), "--target", run_target()});
    QVERIFY2(f.exit_code == 0, qPrintable("tessel run failed: " + f.err.trimmed()));
    const std::string difference =
        compare_output_files((kModels + "/" + name).toStdString(), out.path().toStdString(), 1);
    QVERIFY2(difference.empty(), difference.c_str());
  }

  void inspect_matches_generator_counts_data() { add_sample_rows(); }
  void inspect_matches_generator_counts() {
    QFETCH(QString, name);
    const Finished f = run_tessel({"inspect", kModels + "/" + name + ".onnx", "--json"});
    QVERIFY2(f.exit_code == 0, qPrintable("tessel inspect failed: " + f.err.trimmed()));
    QJsonParseError parse_error;
    const QJsonDocument doc = QJsonDocument::fromJson(f.out, &parse_error);
    QVERIFY2(!doc.isNull(), qPrintable("inspect --json printed no JSON: " + parse_error.errorString()));
    const InspectReport report = read_inspect_report(doc.object());
    const QJsonObject expected = read_json(kModels + "/" + name + "/expected.json");
    QVERIFY2(!expected.isEmpty(), "expected.json is unreadable");

    // Op counts: Constant nodes become constants on import, so they are not compared.
    const QJsonObject op_counts = expected["op_counts"].toObject();
    for (auto it = op_counts.begin(); it != op_counts.end(); ++it) {
      if (it.key() == "Constant") continue;
      QVERIFY2(report.op_counts.value(it.key()) == it.value().toInt(),
               qPrintable(QString("%1: %2 nodes reported, %3 in the model")
                              .arg(it.key())
                              .arg(report.op_counts.value(it.key()))
                              .arg(it.value().toInt())));
    }
    QCOMPARE(report.node_count, expected["nodes_without_constants"].toInt());

    // FLOPs of every Conv / Gemm / MatMul node, matched by the exporter's node name.
    const QJsonObject flops = expected["flops_by_node"].toObject();
    QVERIFY(!flops.isEmpty());
    for (auto it = flops.begin(); it != flops.end(); ++it) {
      QVERIFY2(report.flops_by_node.contains(it.key()), qPrintable("no node " + it.key() + " in inspect's report"));
      QVERIFY2(report.flops_by_node.value(it.key()) == it.value().toInteger(),
               qPrintable(QString("%1: %2 FLOPs reported, %3 expected")
                              .arg(it.key())
                              .arg(report.flops_by_node.value(it.key()))
                              .arg(it.value().toInteger())));
    }
    // Tessel counts every constant's elements: the weights and the Constant nodes' values.
    if (report.parameters >= 0) QCOMPARE(report.parameters, expected["constant_elements"].toInteger());
  }

  // The run contract: a missing input file is a one-line error naming it, and no output is left.
  void run_reports_a_missing_input() {
    QTemporaryDir empty_inputs, out;
    const Finished f = run_tessel(
        {"run", kModels + "/mlp.onnx", "--inputs", empty_inputs.path(), "--out-dir", out.path(), "--target", "ref"});
    QVERIFY(f.exit_code > 0);
    const QByteArray message = f.err.trimmed();
    QVERIFY2(!message.contains('\n'), qPrintable("more than one line: " + message));
    QVERIFY2(message.contains("input_0.pb"), qPrintable("does not name the file: " + message));
    QVERIFY(QDir(out.path()).entryList(QDir::Files).isEmpty());
  }
};

QTEST_GUILESS_MAIN(EndToEndModels)
#include "test_e2e_models.moc"
