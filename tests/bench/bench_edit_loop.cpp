// bench_edit_loop [--smoke]: the studio's edit loop on resnet_block's conv kernel, through the real
// KernelEditLoop, tessel-measure and llvm plugin. Each edit alternates two hand schedules
// (tiling + vectorize + parallel, and the same without the tiling) and times:
//   edit → lowered   (target < 200 ms: the new program is on screen)
//   edit → measured  (target < 1 s: compiled, verified against the reference, timed, placed)
// Measured in the same run as references: lowering the same schedule on the calling thread (what
// the worker-thread hop adds) and a bare request round trip to the measuring process (what the
// process boundary costs). Prints medians and ratios; asserts nothing (--smoke: two edits, for ctest).
#include <QCoreApplication>
#include <QElapsedTimer>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/plugin/plugin_manager.h"
#include "core/schedule/schedule.h"
#include "views/edit/kernel_edit_loop.h"
#include "views/edit/kernel_lowering.h"
#include "views/session/compile_model.h"

using namespace tessel;
using namespace tessel::views;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

const char* kTiled =
    "compute_inline(conv2d_nchwc_1_pad)\ncompute_inline(conv2d_nchwc_1)\nsplit(relu_2.i3, 4)\nparallel(relu_2.i2)\n"
    "compute_at(conv2d_nchwc_1_conv, relu_2.i3.outer)\n"
    "reorder(conv2d_nchwc_1_conv.ry, conv2d_nchwc_1_conv.rx, conv2d_nchwc_1_conv.rci, conv2d_nchwc_1_conv.i3, "
    "conv2d_nchwc_1_conv.i4)\n"
    "vectorize(conv2d_nchwc_1_conv.i4)\nvectorize(relu_2.i4)\n";
const char* kUntiled =
    "compute_inline(conv2d_nchwc_1_pad)\ncompute_inline(conv2d_nchwc_1)\nparallel(relu_2.i2)\n"
    "compute_at(conv2d_nchwc_1_conv, relu_2.i3)\nvectorize(relu_2.i4)\n";

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
  const int edits = smoke ? 2 : 12;
  PluginManager::global().load_all();
  const QString kernel = "fused_conv2d_nchwc_relu_1";

  SessionDocument doc;
  doc.model_path = TESSEL_SOURCE_DIR "/resources/models/resnet_block.onnx";
  doc.pass_options = {{"disabled_passes", {"winograd_convs"}}};  // the direct conv kernel, by its name
  StudioSnapshotPtr snapshot = compile_model(doc, CompileProgress{});
  if (snapshot->has_errors())
    return std::fprintf(stderr, "bench_edit_loop: %s\n", snapshot->diagnostics[0].message.c_str()), 1;

  KernelEditLoop loop(QStringLiteral(TESSEL_MEASURE_EXE));
  loop.set_pass_options(doc.pass_options);
  loop.set_snapshot(snapshot);
  loop.open_kernel(kernel);  // the first request starts the process and compiles the model's pipeline
  QElapsedTimer warm;
  warm.start();
  if (!loop.wait_until_idle(120000))
    return std::fprintf(stderr, "bench_edit_loop: the first measurement did not finish\n"), 1;
  std::printf("first open (process start, import, pipeline, codegen): %.0f ms\n", static_cast<double>(warm.elapsed()));

  std::vector<double> lowered, worker, measured, compile, kernel_ms, direct, round_trip;
  const schedule::Schedule schedules[2] = {schedule::parse_schedule(kTiled), schedule::parse_schedule(kUntiled)};
  for (int e = 0; e < edits; ++e) {
    const schedule::Schedule& s = schedules[e % 2];
    loop.set_schedule(kernel, s);
    if (!loop.wait_until_idle(60000)) return std::fprintf(stderr, "bench_edit_loop: edit %d did not finish\n", e), 1;
    KernelMeasurementPtr m = loop.measurement(kernel);
    KernelLoweringPtr l = loop.lowering(kernel);
    if (!m || m->verdict != KernelMeasurement::Verdict::kCorrect)
      return std::fprintf(stderr, "bench_edit_loop: edit %d: %s\n", e, m ? m->error.c_str() : "no measurement"), 1;
    lowered.push_back(loop.timing(kernel).edit_to_lowered_ms);
    measured.push_back(loop.timing(kernel).edit_to_measured_ms);
    worker.push_back(l->lower_ms);
    compile.push_back(m->compile_ms);
    kernel_ms.push_back(m->ms_min);

    // References, in the same run: lowering here, and a request that compiles nothing.
    QElapsedTimer t;
    t.start();
    KernelLoweringPtr here = lower_kernel(snapshot, kernel.toStdString(), s, snapshot->target, 0);
    direct.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    bool answered = false;
    auto c = QObject::connect(&loop, &KernelEditLoop::ceilings_ready, [&] { answered = true; });
    t.restart();
    loop.request_ceilings();
    while (!answered) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    round_trip.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    QObject::disconnect(c);
  }

  std::printf("%d edits of %s (medians)\n", edits, qPrintable(kernel));
  std::printf(
      "  edit -> lowered   %8.2f ms   target 200 ms: %.3fx of budget; worker lowering %.2f ms, same lowering on this "
      "thread %.2f ms (%.2fx)\n",
      median(lowered), median(lowered) / 200, median(worker), median(direct),
      median(worker) / std::max(median(direct), 1e-9));
  std::printf(
      "  edit -> measured  %8.2f ms   target 1000 ms: %.3fx of budget; of which codegen %.2f ms, kernel %.4f ms per "
      "run\n",
      median(measured), median(measured) / 1000, median(compile), median(kernel_ms));
  std::printf("  bare request round trip %.2f ms (%.1f%% of edit -> measured)\n", median(round_trip),
              100 * median(round_trip) / std::max(median(measured), 1e-9));
  return 0;
}
