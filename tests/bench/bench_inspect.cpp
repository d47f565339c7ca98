// bench_inspect: how long `tessel inspect` takes on a ResNet-50-sized model, beside a reference
// measured in the same run: reading the file's bytes and parsing them with protobuf alone, which
// is the least any ONNX tool must do. Runs alternate (inspect, reference, inspect, ...) so clock
// drift falls on both alike (docs/building.md, "Benchmarks": the clock moves minute to minute).
//
//   bench_inspect [--runs N] [--smoke] [--model PATH]
//
// The model is generated once by scripts/gen_models.py --resnet50 into the build folder. The
// program fails only when a command fails, never on slowness: speed goals are read from its output.
#include <onnx/onnx_pb.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Options {
  int runs = 7;
  QString model = TESSEL_BENCH_MODEL;
};

Options parse_arguments(const QStringList& args) {
  Options o;
  for (int i = 1; i < args.size(); ++i) {
    const QString& a = args[i];
    auto value = [&]() {
      if (i + 1 >= args.size()) throw std::runtime_error(a.toStdString() + " needs a value");
      return args[++i];
    };
    if (a == "--runs")
      o.runs = std::max(1, value().toInt());
    else if (a == "--smoke")
      o.runs = 1;
    else if (a == "--model")
      o.model = value();
    else
      throw std::runtime_error("unknown argument " + a.toStdString() + " (allowed: --runs N, --smoke, --model PATH)");
  }
  return o;
}

// Generates the model once; written under a temporary name and renamed, so an interrupted run
// never leaves a truncated model for the next one.
void ensure_model(const QString& path) {
  if (QFileInfo::exists(path)) return;
  const QString partial = path + ".partial";
  std::printf("bench_inspect: generating %s (once)\n", qPrintable(path));
  std::fflush(stdout);
  QProcess p;
  p.setProcessChannelMode(QProcess::ForwardedChannels);
  p.start(TESSEL_MODEL_PYTHON, {TESSEL_SOURCE_DIR "/scripts/gen_models.py", "--resnet50", partial});
  if (!p.waitForFinished(600000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    throw std::runtime_error("scripts/gen_models.py --resnet50 failed");
  if (!QFile::rename(partial, path)) throw std::runtime_error("cannot rename " + partial.toStdString());
}

double time_inspect(const QString& model) {
  QProcess p;
  QElapsedTimer clock;
  clock.start();
  p.start(TESSEL_BINARY, {"inspect", model});
  if (!p.waitForFinished(600000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    throw std::runtime_error("tessel inspect failed: " + p.readAllStandardError().trimmed().toStdString());
  const double ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
  p.readAllStandardOutput();
  return ms;
}

// Reads the bytes and parses them into an onnx::ModelProto; returns ms and the node count.
double time_reference(const QString& model, int* nodes) {
  QElapsedTimer clock;
  clock.start();
  QFile f(model);
  if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + model.toStdString());
  const QByteArray bytes = f.readAll();
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(bytes.constData(), static_cast<int>(bytes.size())))
    throw std::runtime_error("protobuf cannot parse " + model.toStdString());
  const double ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
  *nodes = proto.graph().node_size();
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench(const Options& o) {
  ensure_model(o.model);
  std::vector<double> inspect_ms, reference_ms;
  int nodes = 0;
  for (int i = 0; i < o.runs; ++i) {
    inspect_ms.push_back(time_inspect(o.model));
    reference_ms.push_back(time_reference(o.model, &nodes));
  }
  const double inspect_min = *std::min_element(inspect_ms.begin(), inspect_ms.end());
  const double reference_min = *std::min_element(reference_ms.begin(), reference_ms.end());
  const double inspect_median = median(inspect_ms), reference_median = median(reference_ms);
  std::printf("bench_inspect: %s, %.1f MB, %d nodes, %d runs each\n", qPrintable(QFileInfo(o.model).fileName()),
              static_cast<double>(QFileInfo(o.model).size()) / 1e6, nodes, o.runs);
  std::printf("  tessel inspect (process):            min %9.1f ms   median %9.1f ms\n", inspect_min, inspect_median);
  std::printf("  reference (read + protobuf parse):   min %9.1f ms   median %9.1f ms\n", reference_min,
              reference_median);
  std::printf("  ratio inspect / reference:           min %9.2fx     median %9.2fx\n", inspect_min / reference_min,
              inspect_median / reference_median);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  try {
    return bench(parse_arguments(app.arguments()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_inspect: %s\n", e.what());
    return 1;
  }
}
