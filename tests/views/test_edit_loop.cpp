// The kernel edit loop end to end: the real tessel-measure process with the real llvm plugin, on
// resnet_block's direct conv kernel (winograd_convs left out, as a session may ask). A hand
// schedule is lowered at once and measured correct; a wrong step shows its error; a crashing or
// hanging kernel costs one failed measurement and the next one works; a stale edit never shows up.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "core/plugin/plugin_manager.h"
#include "core/schedule/schedule.h"
#include "studio_fixtures.h"
#include "views/edit/kernel_edit_loop.h"

using namespace tessel;
using namespace tessel::views;

namespace {

const QString kConv = "fused_conv2d_nchwc_relu_1";

// Tiling (split + compute_at), vectorization and a parallel loop, written by hand.
schedule::Schedule conv_hand_schedule() {
  return schedule::parse_schedule(
      "compute_inline(conv2d_nchwc_1_pad)\n"
      "compute_inline(conv2d_nchwc_1)\n"
      "split(relu_2.i3, 4)\n"
      "parallel(relu_2.i2)\n"
      "compute_at(conv2d_nchwc_1_conv, relu_2.i3.outer)\n"
      "reorder(conv2d_nchwc_1_conv.ry, conv2d_nchwc_1_conv.rx, conv2d_nchwc_1_conv.rci, conv2d_nchwc_1_conv.i3, "
      "conv2d_nchwc_1_conv.i4)\n"
      "vectorize(conv2d_nchwc_1_conv.i4)\n"
      "vectorize(relu_2.i4)\n");
}

std::string final_program(const KernelLowering& l) { return l.steps.empty() ? "" : l.steps.back().record.text(); }

bool has_artifact(const KernelMeasurement& m, const std::string& name) {
  for (const auto& [n, text] : m.artifacts)
    if (n == name && !text.empty()) return true;
  return false;
}

}  // namespace

class EditLoopTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir cache_;
  StudioSnapshotPtr snapshot_;

  std::unique_ptr<KernelEditLoop> make_loop() {
    auto loop = std::make_unique<KernelEditLoop>(QStringLiteral(TESSEL_MEASURE_EXE));
    loop->set_pass_options(test::direct_convs());  // as the studio passes its session's options
    loop->set_snapshot(snapshot_);
    return loop;
  }

 private Q_SLOTS:
  void initTestCase() {
    // Calibration results go to a private cache; injected faults are allowed in the child only
    // because this test sets the variable.
    qputenv("TESSEL_CACHE_DIR", cache_.path().toUtf8());
    qputenv("TESSEL_MEASURE_ALLOW_INJECT", "1");
    PluginManager::global().load_all();  // the default schedule's vector width comes from the llvm target
    snapshot_ = test::compile_now(test::sample_model("resnet_block"), "ref", test::direct_convs());
    QVERIFY(snapshot_ && !snapshot_->has_errors());
  }

  void hand_schedule_is_lowered_verified_and_timed() {
    auto loop = make_loop();
    QSignalSpy lowered(loop.get(), &KernelEditLoop::lowered);
    QSignalSpy measured(loop.get(), &KernelEditLoop::measured);
    loop->open_kernel(kConv);
    QVERIFY(loop->wait_until_idle(60000));
    KernelLoweringPtr before = loop->lowering(kConv);
    QVERIFY(before && before->error.empty() && before->is_default_schedule);
    QCOMPARE(before->steps.size(), before->schedule.steps.size() + 1);
    KernelMeasurementPtr default_measurement = loop->measurement(kConv);
    QVERIFY(default_measurement);
    QCOMPARE(default_measurement->verdict, KernelMeasurement::Verdict::kCorrect);

    loop->set_schedule(kConv, conv_hand_schedule());
    QVERIFY(loop->wait_until_idle(60000));
    KernelLoweringPtr after = loop->lowering(kConv);
    QVERIFY(after && after->error.empty());
    QVERIFY(!after->is_default_schedule);
    QVERIFY(after->generation > before->generation);
    QCOMPARE(after->schedule, conv_hand_schedule());
    QVERIFY(final_program(*after) != final_program(*before));
    QVERIFY(QString::fromStdString(final_program(*after)).contains("i3.outer in 0..4"));
    QVERIFY(!after->passes.empty());

    KernelMeasurementPtr m = loop->measurement(kConv);
    QVERIFY(m);
    QCOMPARE(m->generation, after->generation);
    QVERIFY2(m->verdict == KernelMeasurement::Verdict::kCorrect, m->error.c_str());
    QVERIFY(m->ms_min > 0 && m->ms_median >= m->ms_min);
    QVERIFY(m->max_abs_error < 1e-3);
    QVERIFY(m->flops > 0 && m->gflops > 0);
    QVERIFY(has_artifact(*m, "asm"));
    QCOMPARE(lowered.size(), 2);
    QCOMPARE(measured.size(), 2);
    auto t = loop->timing(kConv);
    QVERIFY(t.edit_to_lowered_ms > 0 && t.edit_to_measured_ms >= t.edit_to_lowered_ms);
    qInfo("conv kernel: relower %.1f ms (worker %.1f ms), edit->measured %.0f ms; default %.4f ms, hand %.4f ms",
          t.edit_to_lowered_ms, after->lower_ms, t.edit_to_measured_ms, default_measurement->ms_min, m->ms_min);
  }

  void invalid_step_shows_its_error_and_is_not_measured() {
    auto loop = make_loop();
    schedule::Schedule s = conv_hand_schedule();
    s.steps.insert(s.steps.begin() + 2, schedule::parse_step("split(relu_2.nope, 4)"));
    loop->set_schedule(kConv, s);
    QVERIFY(loop->wait_until_idle(60000));
    KernelLoweringPtr l = loop->lowering(kConv);
    QVERIFY(l);
    QCOMPARE(l->error_step, 2);
    QVERIFY2(QString::fromStdString(l->error).contains("step 3 split(relu_2.nope, 4)"), l->error.c_str());
    QCOMPARE(l->steps.size(), size_t{4});  // initial, two good steps, the failing one
    KernelMeasurementPtr m = loop->measurement(kConv);
    QVERIFY(m);
    QCOMPARE(m->verdict, KernelMeasurement::Verdict::kFailed);
    QVERIFY(QString::fromStdString(m->error).startsWith("not measured"));
  }

  void crashing_kernel_is_reported_and_the_next_edit_works() {
    auto loop = make_loop();
    QSignalSpy measuring(loop.get(), &KernelEditLoop::measuring);
    loop->set_injected_fault("crash");
    loop->set_schedule(kConv, conv_hand_schedule());
    // Another kernel's request queued behind the crashing one runs in a fresh process.
    QVERIFY(measuring.wait(20000));
    loop->set_injected_fault("");
    const QString other = "fused_conv2d_nchwc_add_relu_2";
    loop->open_kernel(other);
    QVERIFY(loop->wait_until_idle(60000));
    KernelMeasurementPtr queued = loop->measurement(other);
    QVERIFY2(queued && queued->verdict == KernelMeasurement::Verdict::kCorrect,
             queued ? queued->error.c_str() : "no measurement");
    KernelMeasurementPtr m = loop->measurement(kConv);
    QVERIFY(m);
    QCOMPARE(m->verdict, KernelMeasurement::Verdict::kFailed);
    QVERIFY2(QString::fromStdString(m->error).contains("crashed (signal 11)"), m->error.c_str());
    QVERIFY(QString::fromStdString(m->error).contains(kConv));

    loop->set_schedule(kConv, conv_hand_schedule());
    QVERIFY(loop->wait_until_idle(60000));
    m = loop->measurement(kConv);
    QVERIFY2(m && m->verdict == KernelMeasurement::Verdict::kCorrect, m ? m->error.c_str() : "no measurement");
    QCOMPARE(loop->measuring_process_restarts(), 1);  // one crash, one new process
  }

  void hanging_kernel_times_out_and_the_next_edit_works() {
    auto loop = make_loop();
    loop->set_measure_timeout_ms(3000);
    loop->set_injected_fault("hang");
    loop->set_schedule(kConv, conv_hand_schedule());
    QVERIFY(loop->wait_until_idle(60000));
    KernelMeasurementPtr m = loop->measurement(kConv);
    QVERIFY(m);
    QCOMPARE(m->verdict, KernelMeasurement::Verdict::kFailed);
    QVERIFY2(QString::fromStdString(m->error).contains("timed out after 3000 ms on kernel '" + kConv + "'"),
             m->error.c_str());

    loop->set_injected_fault("");
    loop->set_measure_timeout_ms(20000);
    loop->set_schedule(kConv, conv_hand_schedule());
    QVERIFY(loop->wait_until_idle(60000));
    m = loop->measurement(kConv);
    QVERIFY2(m && m->verdict == KernelMeasurement::Verdict::kCorrect, m ? m->error.c_str() : "no measurement");
  }

  void stale_edit_is_dropped() {
    auto loop = make_loop();
    QSignalSpy lowered(loop.get(), &KernelEditLoop::lowered);
    QSignalSpy measured(loop.get(), &KernelEditLoop::measured);
    schedule::Schedule first = conv_hand_schedule();
    first.steps.pop_back();
    // Two edits before the event loop runs: the first one's lowering is never shown.
    loop->set_schedule(kConv, first);
    loop->set_schedule(kConv, conv_hand_schedule());
    QVERIFY(loop->wait_until_idle(60000));
    QCOMPARE(lowered.size(), 1);
    QCOMPARE(lowered[0][0].value<KernelLoweringPtr>()->schedule, conv_hand_schedule());
    QCOMPARE(measured.size(), 1);

    // An edit while the previous schedule is being measured: the busy process is killed and only
    // the newer measurement arrives.
    loop->set_injected_fault("hang");
    QSignalSpy measuring(loop.get(), &KernelEditLoop::measuring);
    loop->set_schedule(kConv, first);
    QVERIFY(measuring.wait(20000));
    loop->set_injected_fault("");
    const int restarts = loop->measuring_process_restarts();
    loop->set_schedule(kConv, conv_hand_schedule());
    QVERIFY(loop->wait_until_idle(60000));
    QCOMPARE(measured.size(), 2);
    KernelMeasurementPtr m = measured[1][0].value<KernelMeasurementPtr>();
    QCOMPARE(m->generation, loop->lowering(kConv)->generation);
    QVERIFY2(m->verdict == KernelMeasurement::Verdict::kCorrect, m->error.c_str());
    QCOMPARE(loop->measuring_process_restarts(), restarts + 1);
  }

  void profile_and_calibration_run_in_the_measuring_process() {
    auto loop = make_loop();
    QSignalSpy ceilings(loop.get(), &KernelEditLoop::ceilings_ready);
    loop->request_ceilings();
    QVERIFY(ceilings.wait(30000));
    QVERIFY(!ceilings[0][0].value<CeilingsResultPtr>()->ceilings);  // a fresh cache: never calibrated
    loop->calibrate(/*quick=*/true);
    QVERIFY(ceilings.wait(120000));
    CeilingsResultPtr c = ceilings[1][0].value<CeilingsResultPtr>();
    QVERIFY2(c->ceilings && c->error.empty(), c->error.c_str());
    QVERIFY(c->ceilings->peak_gflops() > 0 && c->ceilings->dram_gbps() > 0);

    QSignalSpy profiled(loop.get(), &KernelEditLoop::profiled);
    loop->set_schedule(kConv, conv_hand_schedule());
    loop->profile_model();
    QVERIFY(loop->wait_until_idle(120000));
    QCOMPARE(profiled.size(), 1);
    ModelProfilePtr p = profiled[0][0].value<ModelProfilePtr>();
    QVERIFY2(p->error.empty(), p->error.c_str());
    QCOMPARE(p->profile.kernels.size(), snapshot_->fusion->groups.size());
    QCOMPARE(p->profile.last_run.kernel_spans_ms.size(), p->profile.kernels.size());
    QVERIFY(p->ceilings.has_value());  // calibrated above
    for (const auto& k : p->profile.kernels) QVERIFY(k.ms_min > 0 || k.flops == 0);
  }
};

QTEST_MAIN(EditLoopTest)
#include "test_edit_loop.moc"
