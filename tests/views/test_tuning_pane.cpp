// The Tuning pane through the real main window, with real measurements: a short tune of the
// mlp sample's output layer in tessel-measure draws its best-so-far curve against the default's
// time, logs every trial in the session's records log (core/tune/records reads it back), moves the
// kernel's roofline point, and its best schedule loads into the schedule editor and changes the
// program; Stop in the middle of a run keeps every trial measured so far; a records log written
// before draws its curves again.
#include <QComboBox>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>

#include "app/studio/main_window.h"
#include "core/plugin/plugin_manager.h"
#include "core/schedule/schedule.h"
#include "core/tune/records.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/edit/kernel_lowering.h"
#include "views/session/session_document.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

namespace {

constexpr int kWaitMs = 240000;  // a loaded 2-core machine compiles a candidate in seconds
QString mlp_model() { return QFileInfo(test::sample_model()).absolutePath() + "/mlp.onnx"; }

std::string final_program(const ProgramPane& program) {
  const KernelLoweringPtr l = program.lowering();
  if (!l || l->passes.empty()) return {};
  return l->passes.back().record.text();
}

}  // namespace

class TuningPaneTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;
  // The mlp sample's output layer, the kernel tuned: a Gemm by 64 x 10 weights. Its name depends on
  // the target: "fused_dense_2" where 10 columns make no vector (AVX2's 8 lanes), the packed
  // product "fused_matmul_packed_add_2" where a 10-lane tile holds them (AVX-512).
  QString tuned_kernel_;

  // The mlp sample saved as a session in `name` (so its records log goes beside it), its output
  // layer's kernel selected and measured on its default schedule, tuning timed briefly.
  std::unique_ptr<MainWindow> open_mlp(const QString& name) {
    auto w = test::show_window(test::window_options(home_.path()));
    if (!test::open_and_wait(*w, mlp_model())) return nullptr;
    w->controller()->save_as(QDir(home_.path()).filePath(name));
    const StudioSnapshotPtr snapshot = w->controller()->snapshot();
    if (!snapshot || !snapshot->fusion || snapshot->fusion->groups.empty()) return nullptr;
    tuned_kernel_ = QString::fromStdString(snapshot->fusion->groups.back().kernel_name);
    if (!tuned_kernel_.endsWith("_2")) return nullptr;  // mlp has three layers: the last is kernel 2
    w->selection()->set_kernel(tuned_kernel_);
    if (!w->edit_loop()->wait_until_idle(kWaitMs)) return nullptr;
    w->mediator()->tuning_defaults.min_time_ms = 2;
    w->mediator()->tuning_defaults.batch = 2;
    return w;
  }

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_studio("tuning_pane_test", home_.path());
    PluginManager::global().load_all();  // the search space asks the llvm target for its vector width
  }

  void a_short_tune_draws_logs_moves_the_roofline_and_loads_the_best() {
    auto w = open_mlp("tune.tessel");
    QVERIFY(w);
    TuningPane* pane = static_cast<TuningPane*>(w->pane_by_name("tuning"));
    QVERIFY(pane);
    QVERIFY(pane->start_button()->isEnabled());

    // The user's own starting point: the naive loops. Loading the tuned schedule must change them.
    QVERIFY(w->panes().schedule->apply_text(""));
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    const std::string naive_program = final_program(*w->panes().program);
    QVERIFY(!naive_program.empty());

    QSignalSpy improved(w->tuner(), &TuningRunner::improved);
    QSignalSpy finished(w->tuner(), &TuningRunner::finished);
    pane->scope_box()->setCurrentIndex(0);  // the selected kernel
    pane->trials_box()->setValue(6);
    pane->start_button()->click();
    QVERIFY(pane->is_running());
    QVERIFY(!pane->start_button()->isEnabled());
    QVERIFY(pane->stop_button()->isEnabled());
    QVERIFY(finished.wait(kWaitMs));
    const TuningSummaryPtr summary = finished.at(0).at(0).value<TuningSummaryPtr>();
    QVERIFY2(summary->error.empty(), summary->error.c_str());
    QVERIFY(!summary->stopped);
    QCOMPARE(summary->trials, 6);
    QVERIFY(!pane->is_running());
    QVERIFY(pane->start_button()->isEnabled());

    // The curve and the table.
    QCOMPARE(pane->trials(tuned_kernel_), 6);
    QVERIFY(pane->curve_points(tuned_kernel_) > 0);
    if (pane->default_ms(tuned_kernel_) > 0) {
      QVERIFY(pane->best_ms(tuned_kernel_) > 0);
      QVERIFY(pane->best_ms(tuned_kernel_) <= pane->default_ms(tuned_kernel_));
    } else {
      QVERIFY(pane->failed(tuned_kernel_) > 0);  // the default failed: the pane says how many did
    }
    QVERIFY(pane->status_text().startsWith("Done: 6 trials"));

    // The roofline shows the best schedule's point for the kernel.
    QVERIFY(improved.count() >= 1);
    const TuningBestPtr best = improved.last().at(0).value<TuningBestPtr>();
    QCOMPARE(QString::fromStdString(best->kernel), tuned_kernel_);
    QCOMPARE(best->measurement.verdict, KernelMeasurement::Verdict::kCorrect);
    QVERIFY(best->measurement.flops > 0);
    QVERIFY(!w->panes().roofline->tooltip(tuned_kernel_).isEmpty());

    // The log: every trial, in core/tune's format, beside the session and named in it.
    const QString log = pane->records_path();
    QCOMPARE(log, QDir(home_.path()).filePath("tune.records.jsonl"));
    QCOMPARE(QString::fromStdString(w->controller()->document().tuning_records), log);
    const std::vector<tune::TuningRecord> records = tune::read_records(log.toStdString());
    QCOMPARE(records.size(), size_t{6});
    for (const tune::TuningRecord& r : records) {
      QCOMPARE(QString::fromStdString(r.kernel), tuned_kernel_);
      QCOMPARE(r.kernel_key, records[0].kernel_key);
    }
    std::string why;
    auto dag = kernel_dag(*w->controller()->snapshot(), tuned_kernel_.toStdString(), &why);
    QVERIFY2(dag, why.c_str());
    QCOMPARE(records[0].kernel_key, tune::kernel_key(*dag));
    const tune::BestRecords best_records(records);
    const tune::TuningRecord* logged_best = best_records.best(records[0].kernel_key, records[0].target);
    QVERIFY(logged_best);
    QCOMPARE(logged_best->schedule, best->schedule);

    // `tessel build --records LOG` takes the best schedule from it, as from `tessel tune`'s log.
    QProcess build;
    build.start(QStringLiteral(TESSEL_BINARY_DIR "/app/cli/tessel"),
                {"build", mlp_model(), "-o", QDir(home_.path()).filePath("mlp.so"), "--target",
                 w->edit_loop()->target(), "--records", log});
    QVERIFY(build.waitForFinished(kWaitMs));
    const QString build_report = QString::fromUtf8(build.readAllStandardError());
    QVERIFY2(build.exitCode() == 0, qPrintable(build_report));
    QVERIFY2(build_report.contains("1 of 3 compiled kernels use tuned schedules"), qPrintable(build_report));

    // The log draws the same curve again (a session reopened, or the log opened by the user).
    pane->clear();
    QVERIFY(pane->load_records(log));
    QCOMPARE(pane->trials(tuned_kernel_), 6);
    QCOMPARE(pane->best_ms(tuned_kernel_), logged_best->ms_min);
    QCOMPARE(pane->best_schedule(tuned_kernel_), QString::fromStdString(best->schedule));

    // Saved with the session.
    w->controller()->save();
    QCOMPARE(
        QString::fromStdString(load_session(QDir(home_.path()).filePath("tune.tessel").toStdString()).tuning_records),
        log);

    // One click loads the best schedule: the editor shows its steps, the program its loops.
    pane->select_kernel_row(tuned_kernel_);
    QVERIFY(pane->load_best_button()->isEnabled());
    pane->load_best_button()->click();
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    QCOMPARE(schedule::to_text(w->panes().schedule->schedule()), best->schedule);
    QCOMPARE(schedule::to_text(w->edit_loop()->hand_schedules().at(tuned_kernel_.toStdString())), best->schedule);
    const KernelLoweringPtr lowered = w->panes().program->lowering();
    QVERIFY(lowered);
    QCOMPARE(schedule::to_text(lowered->schedule), best->schedule);
    QVERIFY(final_program(*w->panes().program) != naive_program);
  }

  // A previous tune's log draws the curves as the tune did: per kernel, its records in the log's
  // order, the first its default schedule; its best loads into the editor. The session's log shows
  // by itself in an idle, empty pane; a log the user opens replaces it; a damaged log is an error
  // that leaves the pane as it was; a running search is never replaced.
  void a_records_log_draws_the_curves_of_a_previous_tune() {
    auto record = [](const char* kernel, double ms, const char* error = "") {
      return tune::TuningRecord{std::string("key_") + kernel,
                                kernel,
                                "llvm",
                                "split(C.i, " + std::to_string(static_cast<int>(ms * 100)) + ")\n",
                                ms,
                                ms,
                                error};
    };
    const QString log = QDir(home_.path()).filePath("previous.records.jsonl");
    QFile::remove(log);
    for (const tune::TuningRecord& r :
         {record("fused_dense_0", 2.0), record("fused_dense_0", 3.0), record("fused_dense_1", 1.0, "wrong result"),
          record("fused_dense_0", 1.5), record("fused_dense_1", 0.8), record("fused_dense_0", 1.8),
          record("fused_dense_1", 0.6)})
      tune::append_record(log.toStdString(), r);

    TuningPane pane;
    QString loaded_kernel, loaded_schedule;
    pane.on_load_best = [&](const QString& kernel, const QString& text) {
      loaded_kernel = kernel;
      loaded_schedule = text;
    };
    pane.set_records_path(log);
    QCOMPARE(pane.records_path(), log);
    QCOMPARE(pane.trials("fused_dense_0"), 4);
    QCOMPARE(pane.failed("fused_dense_0"), 0);
    QCOMPARE(pane.default_ms("fused_dense_0"), 2.0);
    QCOMPARE(pane.best_ms("fused_dense_0"), 1.5);
    QCOMPARE(pane.curve_points("fused_dense_0"), 4);  // the best so far after each trial
    QCOMPARE(pane.trials("fused_dense_1"), 3);
    QCOMPARE(pane.failed("fused_dense_1"), 1);
    QCOMPARE(pane.default_ms("fused_dense_1"), 0.0);  // its default schedule failed
    QCOMPARE(pane.best_ms("fused_dense_1"), 0.6);
    QCOMPARE(pane.curve_points("fused_dense_1"), 2);
    QVERIFY2(pane.status_text().contains("7 trials of 2 kernel"), qPrintable(pane.status_text()));
    pane.select_kernel_row("fused_dense_0");
    QVERIFY(pane.load_best_button()->isEnabled());
    pane.load_best_button()->click();
    QCOMPARE(loaded_kernel, QString("fused_dense_0"));
    QCOMPARE(loaded_schedule, QString("split(C.i, 150)\n"));

    // Another log replaces it.
    const QString other = QDir(home_.path()).filePath("other.records.jsonl");
    QFile::remove(other);
    tune::append_record(other.toStdString(), record("fused_dense_2", 1.0));
    QVERIFY(pane.load_records(other));
    QCOMPARE(pane.trials("fused_dense_0"), 0);
    QCOMPARE(pane.trials("fused_dense_2"), 1);
    QCOMPARE(pane.records_path(), other);
    {
      QFile file(other);
      QVERIFY(file.open(QIODevice::Append));
      file.write("not json\n");
    }
    // A damaged line costs only itself (a log is shared, issue 40): the rest is shown, and the
    // status names the line.
    QVERIFY(pane.load_records(other));
    QVERIFY2(pane.status_text().contains("1 damaged line(s) skipped") &&
                 pane.status_text().contains(":2: not a JSON object"),
             qPrintable(pane.status_text()));
    QCOMPARE(pane.trials("fused_dense_2"), 1);
    // Not a regular file: refused, and what was shown stays.
    QVERIFY(!pane.load_records(home_.path()));
    QVERIFY2(pane.status_text().contains("is a folder, not a tuning log file"), qPrintable(pane.status_text()));
    QCOMPARE(pane.trials("fused_dense_2"), 1);

    // A search running: its curves stay.
    pane.show_starting();
    QVERIFY(!pane.load_records(log));
    pane.set_records_path(log);
    QCOMPARE(pane.trials("fused_dense_0"), 0);
    QCOMPARE(pane.trials("fused_dense_2"), 1);
  }

  void stop_in_the_middle_keeps_every_trial_measured() {
    auto w = open_mlp("stop.tessel");
    QVERIFY(w);
    TuningPane* pane = static_cast<TuningPane*>(w->pane_by_name("tuning"));
    QSignalSpy trial(w->tuner(), &TuningRunner::trial_measured);
    QSignalSpy finished(w->tuner(), &TuningRunner::finished);
    pane->trials_box()->setValue(200);
    pane->start_button()->click();
    QVERIFY(trial.wait(kWaitMs));  // the first batch is measured
    pane->stop_button()->click();
    QVERIFY(!pane->stop_button()->isEnabled());
    QVERIFY(finished.count() == 1 || finished.wait(kWaitMs));
    const TuningSummaryPtr summary = finished.at(0).at(0).value<TuningSummaryPtr>();
    QVERIFY2(summary->error.empty(), summary->error.c_str());
    QVERIFY(summary->stopped);
    QVERIFY(summary->trials >= 1);
    QVERIFY(summary->trials < 200);
    QCOMPARE(pane->trials(tuned_kernel_), summary->trials);
    QVERIFY(pane->status_text().startsWith("Stopped"));
    const auto records = tune::read_records(QDir(home_.path()).filePath("stop.records.jsonl").toStdString());
    QCOMPARE(static_cast<int>(records.size()), summary->trials);
    QCOMPARE(trial.count(), summary->trials);
  }
};

QTEST_MAIN(TuningPaneTest)
#include "test_tuning_pane.moc"
