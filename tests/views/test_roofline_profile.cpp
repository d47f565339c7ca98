// The roofline and profile panes: geometry of the ceilings, one point per kernel (from a real
// profile of resnet_block measured by tessel-measure, and from a small fixture), the arrow after an
// edit, "Calibrate" without ceilings, the sortable profile table under QAbstractItemModelTester,
// row selection, Chrome trace / CSV / PNG / SVG exports, and a screenshot of each pane. On an
// accelerator target: the machine model's roofs and each offloaded layer's move from 1 to 2
// virtual threads, computed off the UI thread.
#include <QAbstractItemModelTester>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "core/plugin/plugin_manager.h"
#include "studio_fixtures.h"
#include "views/edit/kernel_edit_loop.h"
#include "views/profile/profile_pane.h"
#include "views/profile/profile_table_model.h"
#include "views/profile/timeline_widget.h"
#include "views/roofline/accel_roofline_runner.h"
#include "views/roofline/roofline_pane.h"

using namespace tessel;
using namespace tessel::views;

namespace {

analysis::MachineCeilings fixture_ceilings() {
  analysis::MachineCeilings c;
  c.machine = "fixture";
  c.compute = {{"fma_512", 200}, {"fma_256", 100}};
  c.bandwidth = {{"l2", 150}, {"dram", 25}};
  return c;
}

analysis::KernelProfile kernel(const std::string& name, double ms, int64_t flops, int64_t bytes) {
  analysis::KernelProfile k;
  k.name = name;
  k.ms_min = ms;
  k.ms_median = ms * 1.1;
  k.flops = flops;
  k.bytes = bytes;
  k.gflops = static_cast<double>(flops) / (ms / 1e3) / 1e9;
  k.gbps = static_cast<double>(bytes) / (ms / 1e3) / 1e9;
  k.intensity = bytes > 0 ? static_cast<double>(flops) / static_cast<double>(bytes) : 0;
  return k;
}

// Three kernels that compute (one slow conv, one fast conv, a pool) and one layout transform
// that moves bytes only; the last run's spans follow one another.
ModelProfilePtr fixture_profile(bool with_ceilings) {
  auto m = std::make_shared<ModelProfile>();
  m->profile.target = "llvm -num_threads=2";
  m->profile.threads = 2;
  m->profile.kernels = {kernel("layout_0", 0.005, 0, 32768), kernel("conv_1", 0.30, 1187840, 42048),
                        kernel("conv_2", 0.02, 1191936, 58432), kernel("pool_3", 0.004, 9216, 20480)};
  double t = 0;
  for (const auto& k : m->profile.kernels) {
    m->profile.last_run.kernel_spans_ms.emplace_back(t, t + k.ms_median);
    m->profile.last_run.kernel_ms.push_back(k.ms_median);
    t += k.ms_median;
  }
  m->profile.last_run.total_ms = m->profile.total_ms = t;
  if (with_ceilings) {
    m->ceilings = fixture_ceilings();
    for (auto& k : m->profile.kernels)
      if (k.intensity > 0) k.attainable_gflops = m->ceilings->attainable(k.intensity, &k.bound);
  }
  return m;
}

}  // namespace

class RooflineProfileTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir cache_;

 private Q_SLOTS:
  void initTestCase() {
    qputenv("TESSEL_CACHE_DIR", cache_.path().toUtf8());
    PluginManager::global().load_all();
  }

  void ceilings_are_horizontal_roofs_and_unit_slopes() {
    const analysis::MachineCeilings c = fixture_ceilings();
    const AxisRange range{0.01, 1000, 0.1, 1000};
    std::vector<CeilingSegment> segments = ceiling_segments(c, range);
    QCOMPARE(segments.size(), size_t{4});
    for (const CeilingSegment& s : segments) {
      if (s.is_compute) {
        QCOMPARE(s.y0, s.y1);
        QCOMPARE(s.x1, range.x_max);
        QCOMPARE(s.x0, s.y0 / 150.0);  // starts where the best bandwidth (l2) reaches it
      } else {
        QVERIFY(std::abs(s.y0 / s.x0 - s.y1 / s.x1) < 1e-9);  // y = bandwidth · x
        QCOMPARE(s.y1, 200.0);                                // ends at the peak
      }
    }
    auto profile = fixture_profile(true);
    RooflineData d = roofline_from_profile(profile->profile, c);
    QCOMPARE(d.points.size(), size_t{3});
    QCOMPARE(d.not_shown, std::vector<std::string>{"layout_0"});
    AxisRange r = axis_range(d.points, c);
    for (const RooflinePoint& p : d.points) {
      QVERIFY(p.intensity > r.x_min && p.intensity < r.x_max);
      QVERIFY(p.gflops > r.y_min && p.gflops < r.y_max);
    }
    QVERIFY(r.y_max > 200);
    const RooflinePoint& pool = d.points[2];
    QCOMPARE(pool.bound, std::string("memory (dram)"));
    QVERIFY(std::abs(pool.attainable_gflops - 25 * pool.intensity) < 1e-9);
  }

  void roofline_shows_a_point_per_kernel_of_a_measured_profile() {
    StudioSnapshotPtr snap = test::compile_now(test::sample_model("resnet_block"), "ref", test::direct_convs());
    KernelEditLoop loop(QStringLiteral(TESSEL_MEASURE_EXE));
    loop.set_pass_options(test::direct_convs());
    loop.set_snapshot(snap);
    QSignalSpy ceilings(&loop, &KernelEditLoop::ceilings_ready);
    QSignalSpy profiled(&loop, &KernelEditLoop::profiled);
    RooflinePane pane;
    pane.resize(800, 520);
    QVERIFY(pane.calibrate_offered());  // nothing known yet
    int calibrations = 0;
    pane.on_calibrate_requested = [&] { ++calibrations, loop.calibrate(/*quick=*/true); };
    QPushButton* calibrate = pane.findChild<QPushButton*>("calibrate");
    QVERIFY(calibrate);
    calibrate->click();
    QCOMPARE(calibrations, 1);
    QVERIFY(ceilings.wait(120000));
    CeilingsResultPtr c = ceilings[0][0].value<CeilingsResultPtr>();
    QVERIFY2(c->ceilings, c->error.c_str());
    pane.set_ceilings(c->ceilings);
    QVERIFY(!pane.calibrate_offered());

    loop.profile_model();
    QVERIFY(profiled.wait(120000));
    ModelProfilePtr p = profiled[0][0].value<ModelProfilePtr>();
    QVERIFY2(p->error.empty(), p->error.c_str());
    pane.set_profile(p);
    int with_flops = 0;
    for (const auto& k : p->profile.kernels) with_flops += k.flops > 0 ? 1 : 0;
    QVERIFY(with_flops >= 4);  // two convs, max pool, global average pool, dense
    QCOMPARE(pane.point_count(), with_flops);
    QCOMPARE(pane.not_shown().size(), static_cast<qsizetype>(p->profile.kernels.size()) - with_flops);
    const QString tip = pane.tooltip("fused_conv2d_nchwc_relu_1");
    QVERIFY2(tip.contains("GFLOP/s") && tip.contains("FLOP/byte") && tip.contains("% of attainable") &&
                 tip.contains("bound by"),
             qPrintable(tip));

    ProfilePane profile;
    profile.set_profile(p);
    QCOMPARE(profile.model()->rowCount(), static_cast<int>(p->profile.kernels.size()));
    // One lane for the kernels, one per pool thread that ran a chunk of a parallel loop (chunks go
    // to whichever thread is free: on a busy machine the calling thread may have run them all).
    QVERIFY(!profile.timeline()->lanes().empty());
    QVERIFY(profile.timeline()->lanes().size() <= static_cast<size_t>(p->profile.threads));
    QCOMPARE(profile.timeline()->lanes()[0].boxes.size(), p->profile.kernels.size());
  }

  void an_edit_moves_the_point_and_draws_an_arrow() {
    RooflinePane pane;
    pane.resize(800, 520);
    pane.set_profile(fixture_profile(true));
    pane.set_selected_kernel("conv_1");
    QCOMPARE(pane.point_count(), 3);
    QVERIFY(!pane.has_arrow());
    auto m = std::make_shared<KernelMeasurement>();
    m->kernel = "conv_1";
    m->verdict = KernelMeasurement::Verdict::kCorrect;
    m->flops = 1187840;
    m->bytes = 42048;
    m->ms_min = 0.014;
    m->ms_median = 0.015;  // the point is at the median time (views/common/kernel_time.h)
    m->gflops = 84.8;      // the measuring process's value at ms_min: not what is drawn
    m->intensity = 28.25;
    pane.set_measurement(m);
    QCOMPARE(pane.point_count(), 3);
    QVERIFY(pane.has_arrow());
    QVERIFY(pane.tooltip("conv_1").contains("79.2 GFLOP/s"));
    // A failed measurement has no place on the chart and moves nothing.
    auto failed = std::make_shared<KernelMeasurement>();
    failed->kernel = "conv_2";
    failed->verdict = KernelMeasurement::Verdict::kFailed;
    pane.set_measurement(failed);
    QCOMPARE(pane.point_count(), 3);

    QTemporaryDir dir;
    QVERIFY(pane.export_png(dir.filePath("roofline.png")));
    QVERIFY(pane.export_svg(dir.filePath("roofline.svg")));
    QImage png(dir.filePath("roofline.png"));
    QVERIFY(!png.isNull() && test::distinct_colors(png) > 8);
    QFile svg(dir.filePath("roofline.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray text = svg.readAll();
    QVERIFY(text.contains("<svg") && text.size() > 2000);
  }

  // The last run per thread: the kernels on the calling thread, the pool's chunks on their own
  // lanes (and tracks of the Chrome trace); the measuring process's JSON carries them over.
  void timeline_has_a_lane_per_pool_thread() {
    auto m = std::make_shared<ModelProfile>(*fixture_profile(false));
    const auto [begin, end] = m->profile.last_run.kernel_spans_ms[1];
    m->profile.last_run.thread_spans = {{1, 0, begin, end - 0.1}, {1, 1, begin + 0.01, end}};
    m->profile.last_run = analysis::run_times_from_json(analysis::run_times_json(m->profile.last_run));
    std::vector<TimelineLane> lanes = timeline_lanes(m->profile);
    QCOMPARE(lanes.size(), size_t{2});
    QCOMPARE(lanes[0].name, std::string("kernels"));
    QCOMPARE(lanes[0].boxes.size(), size_t{4});
    QCOMPARE(lanes[1].name, std::string("thread 1"));
    QCOMPARE(lanes[1].boxes.size(), size_t{1});
    QCOMPARE(lanes[1].boxes[0].kernel, std::string("conv_1"));
    nlohmann::json trace = nlohmann::json::parse(analysis::chrome_trace(m->profile));
    int on_worker = 0;
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "X" && e["tid"] == 2) on_worker += e["name"] == "conv_1" ? 1 : 100;
    QCOMPARE(on_worker, 1);
  }

  void profile_table_sorts_and_selects() {
    ProfilePane pane;
    pane.resize(700, 420);
    QAbstractItemModelTester tester(pane.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QStringList selected;
    pane.on_kernel_selected = [&](const QString& k) { selected << k; };
    pane.set_profile(fixture_profile(false));
    QCOMPARE(pane.model()->rowCount(), 4);
    QCOMPARE(pane.kernel_at_view_row(0), QString("layout_0"));  // execution order until sorted
    double percent = 0;
    for (int r = 0; r < 4; ++r)
      percent += pane.model()->data(pane.model()->index(r, ProfileTableModel::kPercent), Qt::UserRole).toDouble();
    QVERIFY(std::abs(percent - 100) < 1e-9);

    pane.table()->sortByColumn(ProfileTableModel::kTime, Qt::DescendingOrder);
    QCOMPARE(pane.kernel_at_view_row(0), QString("conv_1"));
    QCOMPARE(pane.kernel_at_view_row(3), QString("pool_3"));
    pane.table()->sortByColumn(ProfileTableModel::kGflops, Qt::DescendingOrder);
    QCOMPARE(pane.kernel_at_view_row(0), QString("conv_2"));

    pane.table()->selectRow(1);  // conv_1 in GFLOP/s order
    QCOMPARE(selected, QStringList{"conv_1"});
    pane.set_selected_kernel("pool_3");  // from the shared selection: no call back
    QCOMPARE(selected.size(), 1);
    QCOMPARE(pane.table()->currentIndex().row(), 2);

    QTemporaryDir dir;
    QString error;
    QVERIFY2(pane.export_chrome_trace(dir.filePath("t.json"), &error), qPrintable(error));
    QFile trace(dir.filePath("t.json"));
    QVERIFY(trace.open(QIODevice::ReadOnly));
    const QByteArray bytes = trace.readAll();
    nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
    int complete = 0;
    for (const auto& e : j["traceEvents"]) complete += e["ph"] == "X" ? 1 : 0;
    QCOMPARE(complete, 4);
    QVERIFY(pane.export_csv(dir.filePath("p.csv"), &error));
    QFile csv(dir.filePath("p.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 5);
    QVERIFY(lines[0].startsWith("kernel,ms_median"));
    QVERIFY(lines[2].startsWith("\"conv_1\","));
    QVERIFY(!pane.export_csv(dir.filePath("missing/dir/p.csv"), &error));
    QVERIFY(error.contains("missing/dir/p.csv"));
  }

  // The lesson's conv block on accel-sim: two offloaded convolutions, each a pair of points joined by
  // an arrow that points up (2 virtual threads are faster here), labelled with its kernel; the roofs
  // are the machine model's (16×16 GEMM core at 200 MHz: 102.4 GOP/s; 8 B/cycle: 1.6 GB/s).
  void accelerator_roofline_moves_each_layer_toward_the_roof() {
    StudioSnapshotPtr host = test::compile_now(test::sample_model("resnet_block"));
    QVERIFY(host && !AccelRooflineRunner::applies_to(*host));  // ref: no GEMM core
    StudioSnapshotPtr snap = test::compile_now(TESSEL_SOURCE_DIR "/resources/lessons/conv_64.graph", "accel-sim");
    QVERIFY(snap && !snap->has_errors());
    QVERIFY(AccelRooflineRunner::applies_to(*snap));

    RooflinePane pane;
    pane.resize(820, 560);
    AccelRooflineRunner runner;
    QObject::connect(&runner, &AccelRooflineRunner::started, [&] { pane.set_accelerator_pending(); });
    QObject::connect(&runner, &AccelRooflineRunner::ready,
                     [&](const analysis::AccelRooflinePtr& r) { pane.set_accelerator_roofline(r); });
    QSignalSpy ready(&runner, &AccelRooflineRunner::ready);
    QSignalSpy failed(&runner, &AccelRooflineRunner::failed);
    QVERIFY(!runner.start(host));
    QVERIFY(runner.start(snap));
    QVERIFY(runner.busy());  // the UI thread goes on while the worker simulates
    QVERIFY(pane.footnote().contains("Simulating"));
    QVERIFY(runner.wait_until_idle(120000));
    QCOMPARE(failed.count(), 0);
    QCOMPARE(ready.count(), 1);
    const auto roofline = ready.takeFirst().at(0).value<analysis::AccelRooflinePtr>();
    QVERIFY(roofline);
    QCOMPARE(roofline->layers.size(), size_t{2});

    QVERIFY(pane.shows_accelerator());
    QVERIFY(!pane.calibrate_offered());
    QCOMPARE(pane.arrow_count(), 2);
    QCOMPARE(pane.ceiling_labels(), QStringList({"gemm 16x16 102 GOP/s", "dram 1.6 GB/s"}));
    QVERIFY(pane.axis_titles().contains("op/byte"));
    QVERIFY(pane.legend()->text().contains("1&nbsp;virtual&nbsp;thread"));
    QVERIFY(pane.legend()->text().contains("2&nbsp;virtual&nbsp;threads"));
    const QStringList labels = pane.point_labels();
    QCOMPARE(labels.size(), 2);
    for (const analysis::AccelRooflineLayer& l : roofline->layers) {
      const QString kernel = QString::fromStdString(l.kernel);
      QVERIFY2(labels.filter(kernel).size() == 1, qPrintable(labels.join(", ")));
      QVERIFY(l.two.gops(roofline->clock_mhz) > l.one.gops(roofline->clock_mhz));  // up, toward the roof
      QVERIFY(pane.tooltip(kernel).contains("1 virtual thread") && pane.tooltip(kernel).contains("2 virtual threads"));
    }
    QVERIFY(pane.footnote().contains("run on the host"));

    // A profile does not mix into the accelerator's chart; a new model clears it.
    pane.set_profile(fixture_profile(true));
    QVERIFY(pane.shows_accelerator());
    QCOMPARE(pane.arrow_count(), 2);

    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QTemporaryDir dir;
    QVERIFY(pane.export_png(dir.filePath("roofline_accelerator.png")));
    if (qEnvironmentVariableIsSet("TESSEL_SHOTS_DIR"))
      pane.export_png(QDir(qEnvironmentVariable("TESSEL_SHOTS_DIR")).filePath("roofline_accelerator.png"));
    QVERIFY(test::distinct_colors(QImage(dir.filePath("roofline_accelerator.png"))) > 8);

    pane.clear();
    QVERIFY(!pane.shows_accelerator());
    QCOMPARE(pane.arrow_count(), 0);
    QVERIFY(pane.point_labels().isEmpty());
  }

  void screenshots_of_both_panes() {
    QTemporaryDir dir;
    RooflinePane roofline;
    roofline.resize(800, 520);
    roofline.set_profile(fixture_profile(true));
    roofline.set_selected_kernel("conv_1");
    auto edited = std::make_shared<KernelMeasurement>();  // conv_1 after an edit: the arrow shows
    edited->kernel = "conv_1";
    edited->verdict = KernelMeasurement::Verdict::kCorrect;
    edited->intensity = 28.25;
    edited->gflops = 79.2;
    roofline.set_measurement(edited);
    roofline.show();
    QVERIFY(QTest::qWaitForWindowExposed(&roofline));
    ProfilePane profile;
    profile.resize(800, 420);
    profile.set_profile(fixture_profile(true));
    profile.show();
    QVERIFY(QTest::qWaitForWindowExposed(&profile));
    for (QWidget* w : {static_cast<QWidget*>(&roofline), static_cast<QWidget*>(&profile)}) {
      const QString path = dir.filePath(w->objectName() + ".png");
      QVERIFY(w->grab().save(path, "PNG"));
      // To look at them: TESSEL_SHOTS_DIR=/tmp/shots ctest -R test_roofline_profile
      if (qEnvironmentVariableIsSet("TESSEL_SHOTS_DIR"))
        w->grab().save(QDir(qEnvironmentVariable("TESSEL_SHOTS_DIR")).filePath(w->objectName() + ".png"), "PNG");
      QImage back(path);
      QVERIFY(!back.isNull());
      QVERIFY2(test::distinct_colors(back) > 8, qPrintable(w->objectName()));
    }
  }
};

QTEST_MAIN(RooflineProfileTest)
#include "test_roofline_profile.moc"
