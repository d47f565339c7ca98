// End to end: `tessel build` makes a shared library that runs a sample model without Tessel.
//
//   tessel build <name>.onnx -o model.so --header model.h --name model
//        │
//   cc driver.c model.so ──▶ driver <dir>: reads input_K.raw, calls model_run, writes output_K.raw,
//        │                   prints each input's and output's name, dtype and shape from the header
//        ▼
//   output_K.raw ── compare (onnx_tensor_compare) ──▶ <name>/output_K.pb  (numpy, scripts/gen_models.py)
//
// The expected outputs never come from Tessel. The driver passes buffers that are 4-byte but not
// 64-byte aligned, as a caller's malloc may (the library stages inputs and copies outputs), then
// 64-byte aligned ones twice (used in place; the second call reuses the kept arena), and requires
// the same bytes from all three calls.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/conformance/node_test_runner.h"
#include "tests/conformance/onnx_tensor_compare.h"

using namespace tessel::testing;

namespace {

const QString kModels = TESSEL_SOURCE_DIR "/resources/models";

QString tessel_path() { return QString::fromStdString(tessel_binary_path(TESSEL_BINARY_DIR "/app/cli/tessel")); }

struct Finished {
  int exit_code = -1;
  QByteArray out, err;
};

Finished run_program(const QString& program, const QStringList& arguments) {
  QProcess p;
  p.start(program, arguments);
  Finished f;
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
    f.err = program.toUtf8() + " did not finish in 120 s";
    return f;
  }
  f.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  f.out = p.readAllStandardOutput();
  f.err = p.readAllStandardError();
  return f;
}

// A plain C caller of the library, using nothing but its header.
const char* kDriver = R"(#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

static void* read_file(const char* dir, const char* kind, int k, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%d.raw", dir, kind, k);
  char* block = malloc(bytes + 64);
  char* data = block + 4; /* float-aligned, not 64-byte aligned */
  FILE* f = fopen(path, "rb");
  if (!f || fread(data, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(3); }
  fclose(f);
  return data;
}

static void print_info(const char* kind, int k, const tessel_tensor_info* t) {
  printf("%s %d %s %s ", kind, k, t->name, t->dtype);
  for (int d = 0; d < t->rank; ++d) printf("%s%lld", d ? "x" : "", (long long)t->shape[d]);
  printf("\n");
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const void* inputs[MODEL_NUM_INPUTS];
  void* outputs[MODEL_NUM_OUTPUTS];
  for (int k = 0; k < MODEL_NUM_INPUTS; ++k) {
    print_info("input", k, &model_inputs[k]);
    inputs[k] = read_file(argv[1], "input", k, model_inputs[k].bytes);
  }
  for (int k = 0; k < MODEL_NUM_OUTPUTS; ++k) {
    print_info("output", k, &model_outputs[k]);
    outputs[k] = (char*)malloc(model_outputs[k].bytes + 64) + 4; /* not 64-byte aligned: copied out */
  }
  int status = model_run(inputs, outputs);
  if (status != 0) { fprintf(stderr, "model_run returned %d\n", status); return 4; }
  /* Again with 64-byte aligned buffers, used in place, twice (the second call reuses the arena):
     the same bytes as the staged, copied run. */
  const void* aligned_inputs[MODEL_NUM_INPUTS];
  void* aligned_outputs[MODEL_NUM_OUTPUTS];
  for (int k = 0; k < MODEL_NUM_INPUTS; ++k) {
    void* p = aligned_alloc(64, (model_inputs[k].bytes + 63) / 64 * 64);
    aligned_inputs[k] = memcpy(p, inputs[k], model_inputs[k].bytes);
  }
  for (int k = 0; k < MODEL_NUM_OUTPUTS; ++k) aligned_outputs[k] = aligned_alloc(64, (model_outputs[k].bytes + 63) / 64 * 64);
  for (int call = 0; call < 2; ++call) {
    for (int k = 0; k < MODEL_NUM_OUTPUTS; ++k) memset(aligned_outputs[k], 0xff, model_outputs[k].bytes);
    if (model_run(aligned_inputs, aligned_outputs) != 0) return 4;
    for (int k = 0; k < MODEL_NUM_OUTPUTS; ++k)
      if (memcmp(aligned_outputs[k], outputs[k], model_outputs[k].bytes) != 0) {
        fprintf(stderr, "output %d differs between aligned (call %d) and unaligned buffers\n", k, call);
        return 6;
      }
  }
  for (int k = 0; k < MODEL_NUM_OUTPUTS; ++k) {
    char path[4096];
    snprintf(path, sizeof path, "%s/output_%d.raw", argv[1], k);
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(outputs[k], 1, model_outputs[k].bytes, f) != model_outputs[k].bytes) return 5;
    fclose(f);
  }
  return 0;
}
)";

QString dims_text(const std::vector<int64_t>& dims) {
  QStringList parts;
  for (int64_t d : dims) parts << QString::number(d);
  return parts.join('x');
}

int count_files(const QString& dir, const QString& prefix) {
  int n = 0;
  while (QFile::exists(dir + "/" + prefix + QString::number(n) + ".pb")) ++n;
  return n;
}

bool write_floats(const QString& path, const DecodedTensor& t) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  for (double v : t.reals) {
    const float x = static_cast<float>(v);
    f.write(reinterpret_cast<const char*>(&x), sizeof x);
  }
  return true;
}

DecodedTensor read_floats(const QString& path, const std::vector<int64_t>& dims) {
  DecodedTensor t;
  t.data_type = 1;  // FLOAT
  t.dims = dims;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return t;
  const QByteArray bytes = f.readAll();
  for (qsizetype i = 0; i + 4 <= bytes.size(); i += 4) {
    float x;
    std::memcpy(&x, bytes.constData() + i, sizeof x);
    t.reals.push_back(x);
  }
  return t;
}

}  // namespace

class EndToEndBuild : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void library_matches_numpy_reference_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("target");
    for (const char* model : {"resnet_block", "mlp", "mobilenet_block", "attention_block"})
      QTest::newRow((QString(model) + " llvm").toUtf8().constData()) << model << "llvm";
    QTest::newRow("resnet_block c") << "resnet_block"
                                    << "c";
  }
  void library_matches_numpy_reference() {
    QFETCH(QString, name);
    QFETCH(QString, target);
    QTemporaryDir work;
    const QString dir = work.path(), data = kModels + "/" + name;
    Finished f = run_program(tessel_path(), {"build", kModels + "/" + name + ".onnx", "-o", dir + "/libmodel.so",
                                             "--header", dir + "/model.h", "--name", "model", "--target", target});
    QVERIFY2(f.exit_code == 0, qPrintable("tessel build failed: " + f.err.trimmed()));
    QVERIFY(QFile::exists(dir + "/libmodel.so") && QFile::exists(dir + "/model.h"));

    QFile driver(dir + "/driver.c");
    QVERIFY(driver.open(QIODevice::WriteOnly));
    driver.write(kDriver);
    driver.close();
    f = run_program("cc", {"-std=c11", "-Wall", "-Werror", "-o", dir + "/driver", dir + "/driver.c", "-I", dir, "-L",
                           dir, "-lmodel", "-Wl,-rpath," + dir});
    QVERIFY2(f.exit_code == 0, qPrintable("compiling the driver against model.h failed: " + f.out + f.err));

    const int inputs = count_files(data, "input_"), outputs = count_files(data, "output_");
    QVERIFY(inputs > 0 && outputs > 0);
    QStringList expected_info;
    for (int k = 0; k < inputs; ++k) {
      const DecodedTensor t = read_tensor_file((data + "/input_" + QString::number(k) + ".pb").toStdString());
      QCOMPARE(t.data_type, 1);  // the samples take float32
      QVERIFY(write_floats(dir + "/input_" + QString::number(k) + ".raw", t));
      expected_info << QString("input %1 %2").arg(k).arg(dims_text(t.dims));
    }
    f = run_program(dir + "/driver", {dir});
    QVERIFY2(f.exit_code == 0, qPrintable("the driver failed: " + f.err.trimmed()));

    // The header's shapes are the test data's shapes.
    const QStringList printed = QString::fromUtf8(f.out).split('\n', Qt::SkipEmptyParts);
    for (int k = 0; k < inputs; ++k) {
      const QStringList words = printed.value(k).split(' ');
      QVERIFY2(words.size() == 5 && words[3] == "float32", qPrintable(printed.value(k)));
      QCOMPARE(words[0] + " " + words[1] + " " + words[4], expected_info[k]);
    }
    for (int k = 0; k < outputs; ++k) {
      const DecodedTensor expected = read_tensor_file((data + "/output_" + QString::number(k) + ".pb").toStdString());
      const QStringList words = printed.value(inputs + k).split(' ');
      QVERIFY2(words.size() == 5 && words[4] == dims_text(expected.dims), qPrintable(printed.value(inputs + k)));
      const DecodedTensor actual = read_floats(dir + "/output_" + QString::number(k) + ".raw", expected.dims);
      QCOMPARE(actual.element_count(), expected.element_count());
      QCOMPARE(static_cast<int64_t>(actual.reals.size()), expected.element_count());
      const auto difference = compare_tensors(actual, expected);
      QVERIFY2(!difference, difference ? difference->c_str() : "");
    }
  }

  // The library exports its entry points and nothing else (kernels and the thread helper stay inside).
  void library_exports_only_its_entry_points() {
    QTemporaryDir work;
    Finished f = run_program(tessel_path(), {"build", kModels + "/mlp.onnx", "-o", work.path() + "/mlp.so"});
    QVERIFY2(f.exit_code == 0, qPrintable(f.err));
    f = run_program("nm", {"-D", "--defined-only", work.path() + "/mlp.so"});
    QVERIFY2(f.exit_code == 0, qPrintable(f.err));
    const QStringList lines = QString::fromUtf8(f.out).split('\n', Qt::SkipEmptyParts);
    QVERIFY(!lines.isEmpty());
    for (const QString& line : lines) QVERIFY2(line.section(' ', -1).startsWith("mlp_"), qPrintable(line));
    QVERIFY(f.out.contains("mlp_run\n") && f.out.contains("mlp_arena_bytes\n"));
  }

  void emits_module_artifacts_data() {
    QTest::addColumn<QString>("artifact");
    QTest::addColumn<QByteArray>("marker");
    QTest::newRow("llvm") << "llvm" << QByteArray("define ");
    QTest::newRow("asm") << "asm" << QByteArray(".text");
    QTest::newRow("obj") << "obj"
                         << QByteArray(
                                "\x7f"
                                "ELF");
  }
  void emits_module_artifacts() {
    QFETCH(QString, artifact);
    QFETCH(QByteArray, marker);
    QTemporaryDir work;
    const QString out = work.path() + "/kernels." + artifact;
    const Finished f =
        run_program(tessel_path(), {"build", kModels + "/resnet_block.onnx", "--emit", artifact, "-o", out});
    QVERIFY2(f.exit_code == 0, qPrintable(f.err));
    QFile file(out);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY2(text.contains(marker), qPrintable(artifact + " output lacks " + marker));
  }

  // Failures are one line on stderr, non-zero status, naming what went wrong.
  void reports_errors_in_one_line_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    const QString model = kModels + "/mlp.onnx";
    QTest::newRow("unwritable library") << QStringList{"build", model, "-o", "/nonexistent-dir/m.so"}
                                        << "/nonexistent-dir/m.so";
    QTest::newRow("unwritable object") << QStringList{"build", model, "--emit", "obj", "-o", "/nonexistent-dir/m.o"}
                                       << "/nonexistent-dir/m.o";
    QTest::newRow("unwritable header") << QStringList{"build",         model,      "-o",
                                                      "/tmp/never.so", "--header", "/nonexistent-dir/m.h"}
                                       << "/nonexistent-dir/m.h";
    QTest::newRow("unknown emit") << QStringList{"build", model, "--emit", "wasm", "-o", "m.wasm"} << "wasm";
    QTest::newRow("no object code") << QStringList{"build", model, "--target", "interp", "-o", "/tmp/never.so"}
                                    << "interp";
    QTest::newRow("missing model") << QStringList{"build", "/nonexistent-dir/x.onnx", "-o", "/tmp/never.so"}
                                   << "x.onnx";
  }
  void reports_errors_in_one_line() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const Finished f = run_program(tessel_path(), arguments);
    QVERIFY2(f.exit_code > 0, qPrintable("exit " + QString::number(f.exit_code)));
    const QByteArray message = f.err.trimmed();
    QVERIFY2(!message.isEmpty() && !message.contains('\n'), qPrintable("not one line: " + message));
    QVERIFY2(message.contains(named.toUtf8()), qPrintable("does not name " + named + ": " + message));
    QVERIFY(!QFile::exists("/tmp/never.so"));
  }
};

QTEST_GUILESS_MAIN(EndToEndBuild)
#include "test_e2e_build.moc"
