// Issue 18's story as one run through the real main window (offscreen), in the order a new user
// took it: open the sample → step the passes → edit a kernel's schedule → profile → calibrate →
// start a lesson (the edited session is saved when asked) → the studio is killed → restore →
// open another model. No edit is lost on the way, and no pane shows the previous model after the
// last step.
#include <QComboBox>
#include <QSettings>
#include <QUndoStack>
#include <QtTest>

#include "app/studio/main_window.h"
#include "core/compile/kernel_compiler.h"
#include "core/schedule/schedule.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/profile/profile_pane.h"
#include "views/roofline/roofline_pane.h"
#include "views/schedule/schedule_editor_pane.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

namespace {

constexpr int kWaitMs = 180000;
const QString kLessons = QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons");

QByteArray read_all(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class StudioStoryTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;

  std::unique_ptr<MainWindow> window() {
    studio::MainWindowOptions options = test::window_options(home_.path());
    options.offer_recovery = true;  // the story restores after a kill
    options.quick_calibration = true;
    return test::show_window(options);
  }

 private Q_SLOTS:
  void initTestCase() { test::isolate_studio("studio_story_test", home_.path()); }

  void open_passes_edit_profile_calibrate_lesson_kill_restore_open_another() {
    const QString saved = home_.filePath("edited.tessel");
    QString kernel;
    std::string edit;  // the hand schedule the user writes
    QStringList asked;
    {
      auto w = window();
      w->session_gate()->ask_unsaved = [&asked](const QString&, const QString& text) {
        asked << text;
        return QMessageBox::Save;
      };
      w->session_gate()->ask_save_path = [saved](const QString&) { return saved; };

      // Open, then step back to fuse_ops and forward again.
      w->open_file(test::sample_model());
      QVERIFY(w->controller()->wait_until_idle(60000));
      StudioSnapshotPtr snap = w->controller()->snapshot();
      const int fuse = test::pass_index(*snap, "fuse_ops");
      QVERIFY(fuse > 0);
      w->selection()->set_pass(fuse);
      QVERIFY(w->panes().graph->wait_for_layout(30000));
      QCOMPARE(w->panes().graph->shown_pass(), fuse);
      w->selection()->set_pass(snap->last_pass());

      // Edit the first kernel's schedule: its output's outer loop in parallel, nothing else.
      const FusionGroup& group = snap->fusion->groups.front();
      kernel = QString::fromStdString(group.kernel_name);
      const schedule::ScheduleState plain = schedule::initial_state(compile::kernel_dag(*snap->optimized, group));
      const schedule::Stage& out = plain.stages.back();
      edit = "parallel(" + out.name + "." + out.axes[0].name + ")\n";
      w->selection()->set_kernel(kernel);
      ScheduleEditorPane* editor = w->panes().schedule;
      QCOMPARE(editor->kernel(), kernel);
      QVERIFY(editor->apply_text(QString::fromStdString(edit)));
      QCOMPARE(editor->entries().size(), size_t(1));
      QVERIFY(w->controller()->is_modified());
      QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));

      // Profile the model, then calibrate: the header takes the ceilings.
      ProfilePane* profile = w->panes().profile;
      profile->set_profiling();
      w->edit_loop()->profile_model();
      QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
      QVERIFY2(profile->profile() && profile->profile()->error.empty(),
               profile->profile() ? profile->profile()->error.c_str() : "no profile");
      w->start_calibration();
      QTRY_VERIFY_WITH_TIMEOUT(!w->edit_loop()->is_calibrating(), kWaitMs);
      QCoreApplication::processEvents();
      QVERIFY2(profile->status_text().contains("ceilings: peak"), qPrintable(profile->status_text()));
      QVERIFY(w->panes().roofline->has_ceilings());

      // A lesson replaces the edited session: asked first, and Save keeps the edit in a file.
      w->start_lesson(kLessons + "/optimize_matmul.json");
      QCOMPARE(asked.size(), 1);
      QVERIFY(w->lesson_runner());
      QVERIFY2(read_all(saved).contains(kernel.toUtf8()), read_all(saved).constData());
      QVERIFY(w->controller()->wait_until_idle(60000));
      w->lesson_runner()->next();
      QCOMPARE(w->lesson_runner()->page_index(), 1);
      QVERIFY(w->controller()->wait_until_idle(60000));
      QTRY_VERIFY_WITH_TIMEOUT(read_all(home_.filePath("recovery.tessel")).contains("\"page\": 1"), 10000);
    }  // killed: the window goes away without its close event

    auto w = window();
    w->session_gate()->ask_unsaved = [](const QString&, const QString&) { return QMessageBox::Discard; };
    QVERIFY(w->has_recovery_offer());
    QVERIFY(w->restore_recovered());
    QVERIFY(w->lesson_runner());
    QCOMPARE(w->lesson_runner()->page_index(), 1);
    QVERIFY(w->controller()->wait_until_idle(60000));

    // Another model: every kernel pane and the profile start empty.
    w->open_file(test::sample_model("mlp"));
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    QCoreApplication::processEvents();
    QVERIFY(QString::fromStdString(w->controller()->document().model_path).endsWith("mlp.onnx"));
    QVERIFY(w->selection()->kernel().isEmpty());
    QVERIFY(w->panes().schedule->kernel().isEmpty());
    QVERIFY(!w->panes().program->lowering());
    ModelProfilePtr stale = w->panes().profile->profile();
    QVERIFY2(!stale, "the profile pane still shows the previous model's profile");

    // The edit made before the lesson is in the saved session.
    w->open_file(saved);
    QVERIFY(w->controller()->wait_until_idle(60000));
    const auto& schedules = w->controller()->document().schedules;
    auto it = schedules.find(kernel.toStdString());
    QVERIFY(it != schedules.end());
    QCOMPARE(it->second, edit);
    w->session_gate()->ask_unsaved = [](const QString&, const QString&) { return QMessageBox::Discard; };
    QVERIFY(w->close());
  }
};

QTEST_MAIN(StudioStoryTest)
#include "test_studio_story.moc"
