// Numbers that agree, through the real main window: one definition of a kernel's time (the median
// of the runs, with its spread) in the schedule editor's badge, the lesson text, the Profile table
// and the roofline; GFLOP/s always of the time shown; the best code-generating target by default,
// named where it measured; Calibrate with progress and Cancel, its ceilings in the Profile header.
#include <QComboBox>
#include <QRegularExpression>
#include <QSettings>
#include <QTableView>
#include <QToolButton>
#include <QtTest>

#include "app/studio/job_indicator.h"
#include "app/studio/main_window.h"
#include "core/compile/kernel_compiler.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/common/kernel_time.h"
#include "views/lessons/lesson_pane.h"
#include "views/profile/profile_table_model.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

namespace {

constexpr int kWaitMs = 180000;

// "0.652 ms ±2.1% · 355.5 GFLOP/s" → {0.652, 355.5}; {0, 0} when `text` holds no such time.
std::pair<double, double> time_and_gflops(const QString& text) {
  static const QRegularExpression re(QString::fromUtf8("([0-9.]+) ms ±[0-9.]+% · ([0-9.]+) GFLOP/s"));
  const QRegularExpressionMatch m = re.match(text);
  return m.hasMatch() ? std::pair{m.captured(1).toDouble(), m.captured(2).toDouble()} : std::pair{0.0, 0.0};
}

QString cell(ProfilePane* pane, int row, int column) {
  return pane->model()->data(pane->model()->index(row, column)).toString();
}

}  // namespace

class StudioNumbersTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;

  std::unique_ptr<MainWindow> window(bool quick_calibration = false) {
    studio::MainWindowOptions options = test::window_options(home_.path());
    options.quick_calibration = quick_calibration;
    return test::show_window(options);
  }

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_studio("studio_numbers_test", home_.path());  // no ceilings until calibrated
  }

  void a_new_session_starts_on_the_best_code_generating_target() {
    auto w = window();
    const std::string best = compile::default_target().kind();
    QVERIFY2(compile::generates_code(compile::default_target()), "this build loads a backend plugin");
    auto* picker = w->findChild<QComboBox*>("target_picker");
    QVERIFY(picker);
    QCOMPARE(picker->currentText().toStdString(), best);
    w->open_file(test::sample_model());
    QVERIFY(w->controller()->wait_until_idle(60000));
    QCOMPARE(w->controller()->document().target, best);
    QCOMPARE(picker->currentText().toStdString(), best);
  }

  void badge_lesson_profile_and_roofline_show_one_time() {
    auto w = window();
    w->start_lesson(QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons/optimize_matmul.json"));
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    const QString kernel = "fused_mat_mul_0";
    QCOMPARE(w->panes().schedule->kernel(), kernel);
    KernelMeasurementPtr m = w->edit_loop()->measurement(kernel);
    QVERIFY(m && m->verdict == KernelMeasurement::Verdict::kCorrect);
    QVERIFY(m->repeats >= 5 && m->ms_q1 <= m->ms_median && m->ms_median <= m->ms_q3);
    const KernelTime t = kernel_time(*m);
    const QString shown = QString::fromStdString(t.text());

    // The badge: the time, its spread, GFLOP/s of that time, and the target that measured it.
    const QString badge = w->panes().schedule->badge_text();
    QVERIFY2(badge.contains(shown), qPrintable(badge + " / " + shown));
    QVERIFY2(badge.contains(QString::fromStdString(compile::default_target().kind())), qPrintable(badge));
    const auto [ms, gflops] = time_and_gflops(badge);
    QVERIFY2(ms > 0, qPrintable(badge));
    const double expected = static_cast<double>(m->flops) / (ms * 1e6);
    QVERIFY2(std::abs(gflops - expected) <= 0.01 * expected,
             qPrintable(QString("%1: %2 FLOPs in %3 ms is %4 GFLOP/s").arg(badge).arg(m->flops).arg(ms).arg(expected)));

    // The lesson's result: the same words.
    const QString lesson_text = static_cast<LessonPane*>(w->pane_by_name("lesson"))->result_text();
    QVERIFY2(lesson_text.contains(shown), qPrintable(lesson_text + " / " + shown));

    // A profile row of the same statistics shows the same numbers; so does the roofline point.
    auto profile = std::make_shared<ModelProfile>();
    profile->profile.target = m->target;
    profile->profile.repeats = m->repeats;
    analysis::KernelProfile k;
    k.name = m->kernel;
    k.ms_min = m->ms_min;
    k.ms_median = m->ms_median;
    k.ms_q1 = m->ms_q1;
    k.ms_q3 = m->ms_q3;
    k.flops = m->flops;
    k.bytes = m->bytes;
    k.intensity = m->intensity;
    k.gflops = m->gflops;  // the measuring process's (at the fastest run): not what is shown
    profile->profile.kernels = {k};
    profile->profile.last_run.kernel_ms = {k.ms_median};
    profile->profile.last_run.kernel_spans_ms = {{0, k.ms_median}};
    Q_EMIT w->edit_loop()->profiled(profile);
    ProfilePane* pane = w->panes().profile;
    QCOMPARE(pane->model()->rowCount(), 1);
    QCOMPARE(cell(pane, 0, ProfileTableModel::kTime), QString::fromStdString(t.time_text()));
    QVERIFY2(badge.contains(cell(pane, 0, ProfileTableModel::kGflops) + " GFLOP/s"),
             qPrintable(cell(pane, 0, ProfileTableModel::kGflops)));
    QVERIFY2(pane->status_text().contains(QString("median of %1 runs").arg(m->repeats)),
             qPrintable(pane->status_text()));
    QVERIFY2(w->panes().roofline->tooltip(kernel).contains(shown), qPrintable(w->panes().roofline->tooltip(kernel)));

    // The real profile: every row's GFLOP/s is its FLOPs over the time in its row; the header
    // names the target and the definition.
    pane->set_profiling();
    w->edit_loop()->profile_model();
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    ModelProfilePtr real = pane->profile();
    QVERIFY(real && real->error.empty() && !real->profile.kernels.empty());
    for (int row = 0; row < pane->model()->rowCount(); ++row) {
      const analysis::KernelProfile& kp = real->profile.kernels[static_cast<size_t>(row)];
      const QString time = cell(pane, row, ProfileTableModel::kTime);
      QCOMPARE(time, QString::fromStdString(kernel_time(kp, real->profile).time_text()));
      if (kp.flops == 0) continue;
      const double row_ms = time.section(' ', 0, 0).toDouble();
      const double row_gflops = cell(pane, row, ProfileTableModel::kGflops).toDouble();
      const double want = static_cast<double>(kp.flops) / (row_ms * 1e6);
      QVERIFY2(std::abs(row_gflops - want) <= 0.01 * want + 0.05, qPrintable(time));
    }
    QVERIFY2(pane->status_text().contains(QString::fromStdString(real->profile.target)),
             qPrintable(pane->status_text()));
    QVERIFY2(pane->status_text().contains(QString("median of %1 runs").arg(real->profile.repeats)),
             qPrintable(pane->status_text()));
  }

  void calibrate_shows_progress_cancels_and_fills_the_profile_header() {
    auto w = window(true);
    w->open_file(test::sample_model());
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    ProfilePane* pane = w->panes().profile;
    pane->set_profiling();
    w->edit_loop()->profile_model();
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    QVERIFY2(pane->status_text().contains("no ceilings"), qPrintable(pane->status_text()));

    // Cancel: the job stops, nothing changes.
    studio::JobIndicator* job = w->calibration_job();
    w->start_calibration();
    QVERIFY(job->running() && job->isVisible());
    QVERIFY2(job->text().contains("Calibrating"), qPrintable(job->text()));
    QVERIFY(w->edit_loop()->is_calibrating());
    QTest::mouseClick(job->cancel_button(), Qt::LeftButton);  // at once: even a quick one is still running
    QVERIFY(!job->running() && !job->isVisible());
    QVERIFY(!w->edit_loop()->is_calibrating());
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    QVERIFY2(pane->status_text().contains("no ceilings"), qPrintable(pane->status_text()));
    QVERIFY(!w->panes().roofline->has_ceilings());
    QVERIFY(w->panes().roofline->calibrate_offered());

    // Calibrate to the end: the header takes the ceilings.
    w->start_calibration();
    QVERIFY(job->running());
    QTRY_VERIFY_WITH_TIMEOUT(!w->edit_loop()->is_calibrating(), kWaitMs);
    QCoreApplication::processEvents();
    QVERIFY(!job->running());
    QVERIFY(w->panes().roofline->has_ceilings());
    QVERIFY2(!pane->status_text().contains("no ceilings") && pane->status_text().contains("ceilings: peak"),
             qPrintable(pane->status_text()));
    bool attainable = false;
    for (int row = 0; row < pane->model()->rowCount(); ++row)
      attainable |= cell(pane, row, ProfileTableModel::kAttainable) != QString::fromUtf8("—");
    QVERIFY2(attainable, "the attainable column follows the new ceilings");
  }
};

QTEST_MAIN(StudioNumbersTest)
#include "test_studio_numbers.moc"
