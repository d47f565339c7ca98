// The device pipeline pane (views/pipeline): lanes built from a hand-made timeline value, its
// utilization and overlap computed by hand and compared, the hover text, zoom and pan on the cycle
// axis, the one-line answer for a kernel without device lanes, and the profile pane's tab that
// hosts it following the selected kernel; end to end, a resnet_block profile on accel-sim from
// the measuring process gives every offloaded kernel its lanes.
//
// The timeline (cycles 0..50):
//   load     [LOAD inp 0-10][LOAD wgt 10-20]          [LOAD inp 30-40]
//   compute                      [GEMM 15-35                ]
//   store                                                [STORE 35-45]
// busy: load 30, compute 20, store 10; two or more busy: 15-20, 30-35 (load+compute), 35-40
// (load+store) = 15 cycles.
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include "core/analysis/profile.h"
#include "studio_fixtures.h"
#include "views/edit/kernel_edit_loop.h"
#include "views/pipeline/pipeline_timeline.h"
#include "views/profile/profile_pane.h"

using namespace tessel;
using namespace tessel::views;

namespace {

DeviceLanes hand_made(size_t max_intervals = kMaxDeviceIntervals) {
  std::vector<DeviceInterval> intervals{
      {.lane = 0, .kind = 0, .start = 0, .end = 10, .first = 0},
      {.lane = 0, .kind = 1, .start = 10, .end = 20, .first = 1, .notifies = 0b010},
      {.lane = 1, .kind = 2, .start = 15, .end = 35, .first = 2, .waits_on = 0b001, .notifies = 0b100},
      {.lane = 0, .kind = 0, .start = 30, .end = 40, .first = 3},
      {.lane = 2, .kind = 3, .start = 35, .end = 45, .first = 4, .waits_on = 0b010},
  };
  return make_device_lanes({"load", "compute", "store"}, {"LOAD inp", "LOAD wgt", "GEMM", "STORE"},
                           std::move(intervals), 50, 200, max_intervals);
}

// Two kernels: the first ran on the device (lanes in the last run, as the measuring process sends
// them: through run_times_json), the second on the CPU.
ModelProfilePtr profile_with_lanes() {
  auto m = std::make_shared<ModelProfile>();
  m->profile.target = "accel-sim";
  for (const char* name : {"conv_on_device", "pool_on_cpu"}) {
    analysis::KernelProfile k;
    k.name = name;
    k.ms_min = k.ms_median = 0.25;
    m->profile.kernels.push_back(k);
  }
  m->profile.last_run.kernel_spans_ms = {{0, 0.25}, {0.25, 0.5}};
  m->profile.last_run.kernel_ms = {0.25, 0.25};
  m->profile.last_run.device_lanes.push_back({0, std::make_shared<const DeviceLanes>(hand_made())});
  m->profile.last_run = analysis::run_times_from_json(analysis::run_times_json(m->profile.last_run));
  return m;
}

}  // namespace

class TestPipelineTimeline : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void summary_counts_busy_and_overlap() {
    const DeviceLanes d = hand_made();
    QCOMPARE(d.summary.busy, (std::vector<int64_t>{30, 20, 10}));
    QCOMPARE(d.summary.overlap_cycles, int64_t{15});
    QCOMPARE(d.summary.utilization(0), 0.6);
    QVERIFY(d.note.empty());
    QCOMPARE(pipeline_summary_text(d),
             QString("50 cycles · load 60% · compute 40% · store 20% · overlap 15 cycles (30%)"));
    // A lane that overlaps itself counts once towards the overlap with the others.
    const LaneSummary s = summarize_lanes(2,
                                          {{.lane = 0, .start = 0, .end = 10, .busy = 10},
                                           {.lane = 0, .start = 5, .end = 15, .busy = 10},
                                           {.lane = 1, .start = 12, .end = 20, .busy = 8}},
                                          20);
    QCOMPARE(s.busy, (std::vector<int64_t>{20, 8}));
    QCOMPARE(s.overlap_cycles, int64_t{3});
  }

  void merging_keeps_the_summary_exact_and_says_so() {
    const DeviceLanes d = hand_made(3);  // one interval per lane at most
    QCOMPARE(d.intervals.size(), size_t{3});
    QCOMPARE(d.instructions, int64_t{5});
    QCOMPARE(d.summary.overlap_cycles, int64_t{15});
    QVERIFY2(!d.note.empty(), d.note.c_str());
    const DeviceInterval& load = d.intervals[0];
    QCOMPARE(load.count, int64_t{3});
    QCOMPARE(load.busy, int64_t{30});
    QCOMPARE(load.end, int64_t{40});
    QCOMPARE(d.kinds[static_cast<size_t>(load.kind)], std::string("mixed"));  // LOAD inp and LOAD wgt
    QCOMPARE(load.notifies, 0b010u);
  }

  void pane_draws_the_selected_kernels_lanes() {
    const ModelProfilePtr m = profile_with_lanes();
    PipelinePane pane;
    pane.resize(700, 160);
    pane.show();
    pane.show_kernel(&m->profile, "conv_on_device");
    QVERIFY2(pane.summary_text().startsWith("conv_on_device: 50 cycles · load 60%"), qPrintable(pane.summary_text()));
    QVERIFY2(pane.summary_text().contains("overlap 15 cycles (30%)"), qPrintable(pane.summary_text()));
    PipelineTimelineWidget* t = pane.timeline();
    QVERIFY(t->lanes() && t->isVisible());
    QCOMPARE(t->lanes()->lanes.size(), size_t{3});
    QCOMPARE(t->view_begin(), 0.0);
    QCOMPARE(t->view_end(), 50.0);

    // The GEMM's box, hovered in its middle.
    const DeviceInterval* gemm = nullptr;
    for (const DeviceInterval& i : t->lanes()->intervals)
      if (i.lane == 1) gemm = &i;
    QVERIFY(gemm);
    const QRectF box = t->interval_rect(*gemm);
    QCOMPARE(t->interval_at(box.center()), gemm);
    QVERIFY(!t->interval_at(QPointF(box.center().x(), box.center().y() + 28)));  // the store unit is idle there
    const QString tip = interval_text(*t->lanes(), *gemm);
    QVERIFY2(tip.contains("instruction 2: GEMM on compute") && tip.contains("cycles 15 to 35 (20)") &&
                 tip.contains("waits for a token from: load") && tip.contains("gives a token to: store"),
             qPrintable(tip));

    // Zoom in twice around cycle 25, pan past the end (clamped), back to the whole call.
    t->zoom(2, 25);
    QCOMPARE(t->view_begin(), 12.5);
    QCOMPARE(t->view_end(), 37.5);
    QVERIFY(t->interval_rect(*gemm).width() > box.width() * 1.9);
    t->set_view(40, 65);
    QCOMPARE(t->view_begin(), 25.0);
    QCOMPARE(t->view_end(), 50.0);
    t->reset_view();
    QCOMPARE(t->view_end(), 50.0);
    const QImage image = t->grab().toImage();
    QVERIFY(!image.isNull());

    pane.show_kernel(&m->profile, "pool_on_cpu");
    QCOMPARE(pane.summary_text(),
             QString("pool_on_cpu: no device timeline (it did not run on a simulated accelerator)."));
    QVERIFY(!pane.timeline()->lanes() && !pane.timeline()->isVisible());
  }

  void profile_pane_hosts_the_pipeline_of_the_selected_kernel() {
    ProfilePane pane;
    pane.resize(900, 300);
    pane.set_profile(profile_with_lanes());
    QCOMPARE(pane.views()->currentWidget(), static_cast<QWidget*>(pane.pipeline()));  // device lanes: shown first
    QCOMPARE(pane.pipeline()->summary_text(), QString("Select a kernel to see its device pipeline."));
    pane.set_selected_kernel("conv_on_device");
    QVERIFY(pane.pipeline()->summary_text().contains("overlap 15 cycles"));
    pane.table()->selectRow(1);
    QVERIFY(pane.pipeline()->summary_text().contains("no device timeline"));
    pane.clear();
    QVERIFY(pane.pipeline()->summary_text().startsWith("No profile yet"));
  }

  // The studio's path: the measuring process profiles the model on accel-sim and sends the last
  // run (run_times_json) with the lanes; the pane draws the offloaded kernels' and names the others.
  void measured_profile_on_the_accelerator_has_lanes() {
    StudioSnapshotPtr snap = test::compile_now(test::sample_model("resnet_block"), "accel-sim");
    KernelEditLoop loop(QStringLiteral(TESSEL_MEASURE_EXE));
    loop.set_snapshot(snap);
    loop.set_target("accel-sim");
    QSignalSpy profiled(&loop, &KernelEditLoop::profiled);
    loop.profile_model();
    QVERIFY(profiled.wait(120000));
    ModelProfilePtr p = profiled[0][0].value<ModelProfilePtr>();
    QVERIFY2(p->error.empty(), p->error.c_str());
    ProfilePane pane;
    pane.set_profile(p);
    QCOMPARE(pane.views()->currentWidget(), static_cast<QWidget*>(pane.pipeline()));
    int with_lanes = 0, without = 0;
    for (const analysis::KernelProfile& k : p->profile.kernels) {
      pane.set_selected_kernel(QString::fromStdString(k.name));
      const QString text = pane.pipeline()->summary_text();
      if (device_lanes_of(p->profile, k.name)) {
        ++with_lanes;
        QVERIFY2(text.contains(" cycles · load ") && text.contains("overlap"), qPrintable(text));
        QCOMPARE(pane.pipeline()->timeline()->lanes()->lanes.size(), size_t{3});
      } else {
        ++without;
        QVERIFY2(text.contains("no device timeline"), qPrintable(text));
      }
    }
    QVERIFY(with_lanes > 0 && without > 0);  // the convolutions offloaded, the quantizers on the host
  }
};

QTEST_MAIN(TestPipelineTimeline)
#include "test_pipeline_timeline.moc"
