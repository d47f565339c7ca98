// "Never lose an edit", through the real main window: a damaged recovery file never stops the
// studio (it is set aside and named), a pending recovery is never overwritten before the user has
// answered, and every path that replaces a modified session (Open, recent files, the Welcome page,
// lessons, drag and drop, the command palette, restoring) asks first, and Cancel cancels. A
// restore brings back the lesson page and autosave keeps the pane layout.
#include <QDockWidget>
#include <QDropEvent>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QStatusBar>
#include <QUndoStack>
#include <QtTest>
#include <fstream>

#include "app/studio/command_palette.h"
#include "app/studio/main_window.h"
#include "core/schedule/schedule.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/schedule/schedule_editor_pane.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

namespace {

const QString kLessons = QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons");

QByteArray read_all(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write_all(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

// A recovery file as a killed studio leaves it: the sample with a target edit.
QByteArray valid_recovery(const QString& model, const QString& target = "ref -vector_bits=256") {
  RecoveryRecord r;
  r.doc.model_path = model.toStdString();
  r.doc.target = target.toStdString();
  r.modified = true;
  return QByteArray::fromStdString(recovery_to_json(r).dump(2));
}

}  // namespace

class StudioUnsavedEditsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;
  QString recovery_;
  QStringList asked_;  // the texts of every unsaved-changes question

  std::unique_ptr<MainWindow> window(bool offer_recovery = true) {
    studio::MainWindowOptions options = test::window_options(home_.path());
    options.recovery_path = recovery_;
    options.offer_recovery = offer_recovery;
    return test::show_window(options);
  }

  // The window answers every unsaved-changes question with `answer` (and records it).
  void answer_with(MainWindow& w, QMessageBox::StandardButton answer, const QString& save_path = {}) {
    w.session_gate()->ask_unsaved = [this, answer](const QString&, const QString& text) {
      asked_ << text;
      return answer;
    };
    w.session_gate()->ask_save_path = [save_path](const QString&) { return save_path; };
  }

  // The sample, opened and then edited (a target change): an unsaved session.
  std::unique_ptr<MainWindow> modified_session() {
    QFile::remove(recovery_);
    auto w = window();
    w->open_file(test::sample_model());
    w->controller()->set_target("ref -vector_bits=256");
    if (!w->controller()->wait_until_idle(60000) || !w->controller()->is_modified()) return nullptr;
    return w;
  }

  // The session is still the modified sample, and the recovery file still holds it.
  bool still_the_edited_sample(MainWindow& w) {
    return w.controller()->is_modified() &&
           w.controller()->document().model_path == QFileInfo(test::sample_model()).absoluteFilePath().toStdString() &&
           w.controller()->document().target == "ref -vector_bits=256" &&
           read_all(recovery_).contains("vector_bits=256");
  }

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_studio("studio_unsaved_edits_test", home_.path());
    recovery_ = home_.filePath("recovery.tessel");
  }

  void init() { asked_.clear(); }

  // Issue 12: each of these used to crash the studio at every start, or was silently dropped.
  void a_damaged_recovery_file_is_set_aside_and_named_at_start() {
    const std::string model = test::sample_model().toStdString();
    struct Damaged {
      QByteArray text;
      QString expected;  // in the banner, after the file name
    };
    const QList<Damaged> damaged = {
        {"[1, 2]", "the top level must be an object, got array"},
        {"{\"session\": 3}", "field 'session' must be an object, got integer"},
        {"{\"session\": {\"format\": \"tessel-session\", \"version\": \"1\"}}",
         "field 'session.version' must be an integer, got string"},
        {QByteArray::fromStdString(nlohmann::json{
             {"session",
              {{"format", "tessel-session"}, {"version", 1}, {"model", {{"path", model}}}, {"schedules", {{"k", 7}}}}}}
                                       .dump()),
         "field 'session.schedules.k' must be a string, got integer"},
        {QByteArray::fromStdString(nlohmann::json{
             {"session", {{"format", "tessel-session"}, {"version", 1}, {"model", {{"path", model}}}}},
             {"session_path", 12}}.dump()),
         "field 'session_path' must be a string, got integer"},
        {QByteArray::fromStdString(
             nlohmann::json{{"session", {{"format", "tessel-session"}, {"version", 1}, {"model", {{"path", model}}}}},
                            {"lesson", {{"path", "x.json"}, {"page", 123456789}}}}
                 .dump()),
         "field 'lesson.page' must be between 0 and 9999"},
        {"{\"session\": {\"format\": \"tessel-session\", \"vers", "not valid JSON"},
        {"{\"session\": {\"format\": \"tessel-session\", \"version\": 1e999}}", "not valid JSON: number overflow"},
        {QByteArray(100000, '[') + QByteArray(100000, ']'), "nested deeper than 64 levels"},
        {"", "not valid JSON"},
    };
    for (const Damaged& d : damaged) {
      QDir home(home_.path());
      for (const QString& old : home.entryList({"recovery.tessel.bad-*"})) home.remove(old);
      write_all(recovery_, d.text);
      auto w = window();
      QVERIFY2(!w->has_recovery_offer(), d.expected.toUtf8());
      const QString banner = w->banner_text();
      QVERIFY2(banner.contains(recovery_ + ": " + d.expected), qPrintable(banner));
      // Kept aside (not deleted), under a name the next start does not read again.
      QVERIFY(!QFile::exists(recovery_));
      const QStringList aside = home.entryList({"recovery.tessel.bad-*"});
      QCOMPARE(aside.size(), 1);
      QCOMPARE(read_all(home.filePath(aside[0])), d.text);
      QVERIFY2(banner.contains(aside[0]), qPrintable(banner));
      // The studio is usable, and autosave works again.
      w->open_file(test::sample_model());
      QVERIFY(w->controller()->wait_until_idle(60000));
      QVERIFY(w->controller()->snapshot() && !w->controller()->snapshot()->has_errors());
      QVERIFY(read_all(recovery_).contains("tessel-session"));
      w->controller()->discard_recovery();
    }
  }

  // Issue 12: opening a file while a recovery was pending overwrote it at once.
  void a_pending_recovery_is_not_overwritten_until_answered() {
    const QByteArray pending = valid_recovery(QFileInfo(test::sample_model()).absoluteFilePath());
    write_all(recovery_, pending);
    {
      auto w = window();
      QVERIFY(w->has_recovery_offer());
      QVERIFY(w->banner_text().contains("ended unexpectedly"));
      w->open_file(test::sample_model("mlp"));
      w->controller()->set_target("ref -vector_bits=128");
      QVERIFY(w->controller()->wait_until_idle(60000));
      QCOMPARE(read_all(recovery_), pending);
      QVERIFY2(w->banner_text().contains("ended unexpectedly"), qPrintable(w->banner_text()));  // still offered
      // A studio closed without answering keeps the offer for next time (no question: the mlp
      // session is answered Discard).
      answer_with(*w, QMessageBox::Discard);
      QVERIFY(w->close());
      QCOMPARE(read_all(recovery_), pending);
    }
    {
      auto w = window();
      QVERIFY(w->has_recovery_offer());
      w->discard_recovered();  // the user's answer: autosave takes over the file
      QVERIFY(!w->has_recovery_offer());
      QVERIFY(!QFile::exists(recovery_));  // nothing open: nothing to autosave
      w->open_file(test::sample_model("mlp"));
      QVERIFY(read_all(recovery_).contains("mlp.onnx"));
      w->controller()->discard_recovery();
    }
  }

  // Issue 12: `--restore --screenshot` ignored the recovery and overwrote the autosave; a
  // screenshot without --restore must leave it alone.
  void restore_with_screenshot_restores_and_a_plain_screenshot_keeps_the_recovery() {
    QTemporaryDir home;
    const QString recovery = home.filePath("recovery.tessel");
    const QByteArray pending = valid_recovery(test::sample_model("mlp"));
    write_all(recovery, pending);
    auto run = [&](const QStringList& extra) {
      QProcess studio;
      studio.setEnvironment(test::child_environment(home.path()));
      studio.start(TESSEL_STUDIO_EXE, QStringList{"--recovery-file", recovery, "--screenshot",
                                                  home.filePath("shot.png"), "--size", "1000x700"} +
                                          extra);
      if (!studio.waitForFinished(120000)) return QString("timeout");
      return QString::number(studio.exitCode()) + " " + studio.readAllStandardError();
    };
    QString plain = run({"--open", test::sample_model()});
    QVERIFY2(plain.startsWith("0 "), qPrintable(plain));
    QCOMPARE(read_all(recovery), pending);
    QString restored = run({"--restore"});
    QVERIFY2(restored.startsWith("0 "), qPrintable(restored));
    QVERIFY2(restored.contains("restored the recovered session") && restored.contains("mlp.onnx"),
             qPrintable(restored));
    QVERIFY(read_all(recovery).contains("vector_bits=256"));  // the restored session, autosaved
  }

  // Issue 18: Cancel in the question before a lesson replaced the session anyway.
  void starting_a_lesson_from_a_modified_session_asks_and_cancel_cancels() {
    auto w = modified_session();
    QVERIFY(w);
    const QString lesson = kLessons + "/optimize_matmul.json";
    answer_with(*w, QMessageBox::Cancel);
    w->start_lesson(lesson);
    QCOMPARE(asked_.size(), 1);
    QVERIFY2(asked_[0].contains("Starting the lesson") && asked_[0].contains("resnet_block.onnx") &&
                 asked_[0].contains("vector_bits=256"),
             qPrintable(asked_[0]));
    QVERIFY(!w->lesson_runner());
    QVERIFY(still_the_edited_sample(*w));
    // Save, then cancel the file dialog: still nothing replaced.
    answer_with(*w, QMessageBox::Save, QString());
    w->start_lesson(lesson);
    QVERIFY(!w->lesson_runner());
    QVERIFY(still_the_edited_sample(*w));
    // Save to a file: saved, then the lesson starts.
    const QString saved = home_.filePath("before_lesson.tessel");
    answer_with(*w, QMessageBox::Save, saved);
    w->start_lesson(lesson);
    QVERIFY(w->lesson_runner());
    QCOMPARE(load_session(saved.toStdString()).target, std::string("ref -vector_bits=256"));
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(QString::fromStdString(w->controller()->document().model_path).endsWith("matmul_256.graph"));
    w->controller()->discard_recovery();
  }

  // Issue 18: one click on a recent file replaced a modified session without asking. Every path
  // goes through the same question; Cancel leaves the session and the recovery file as they were.
  void every_path_that_replaces_a_modified_session_asks_first() {
    const QString mlp = test::sample_model("mlp");
    QSettings().setValue("recent_files", QStringList{mlp});  // opening the sample puts it first
    auto w = modified_session();
    QVERIFY(w);
    answer_with(*w, QMessageBox::Cancel);
    struct Path {
      const char* name;
      std::function<void()> replace;
    };
    w->open_file(test::sample_model());  // modified: asks; canceled
    QCOMPARE(asked_.size(), 1);
    const QList<Path> paths = {
        {"File ▸ Open (and anything calling open_file)", [&] { w->open_file(mlp); }},
        {"Welcome page", [&] { w->welcome()->on_open(mlp); }},
        {"File ▸ Open Recent",
         [&] {
           studio::CommandPalette* palette = w->command_palette();
           palette->open_palette();
           QList<QAction*> found = palette->matching("open recent mlp");
           QVERIFY(!found.isEmpty());
           found[0]->trigger();  // what the menu and the command palette both do
         }},
        {"Lessons menu", [&] { w->start_lesson(kLessons + "/why_fusion.json"); }},
        {"drag and drop",
         [&] {
           QMimeData data;
           data.setUrls({QUrl::fromLocalFile(mlp)});
           QDropEvent drop(QPointF(100, 100), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
           // Straight to the window: QApplication routes drops only during a real drag.
           static_cast<QObject*>(w.get())->event(&drop);
           QTest::qWait(50);  // the drop opens the file after it returns
         }},
    };
    for (const Path& p : paths) {
      const int before = static_cast<int>(asked_.size());
      p.replace();
      QVERIFY(w->controller()->wait_until_idle(60000));
      QVERIFY2(asked_.size() == before + 1, p.name);
      QVERIFY2(still_the_edited_sample(*w), p.name);
    }
    // The question names what is lost and what replaces it.
    QVERIFY2(asked_.last().contains("Opening mlp.onnx") && asked_.last().contains("target ref -vector_bits=256"),
             qPrintable(asked_.last()));
    // Discard: replaced, and the recovery file now holds what the user chose.
    answer_with(*w, QMessageBox::Discard);
    w->welcome()->on_open(mlp);
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(QString::fromStdString(w->controller()->document().model_path).endsWith("mlp.onnx"));
    QVERIFY(!w->controller()->is_modified());
    QVERIFY(read_all(recovery_).contains("mlp.onnx"));
    // An unmodified session is replaced without a question.
    const int before = static_cast<int>(asked_.size());
    w->open_file(test::sample_model());
    QCOMPARE(static_cast<int>(asked_.size()), before);
    // Closing asks too; Cancel keeps the window open.
    w->controller()->set_target("ref -vector_bits=512");
    answer_with(*w, QMessageBox::Cancel);
    QVERIFY(!w->close());
    QVERIFY(w->isVisible());
    answer_with(*w, QMessageBox::Discard);
    QVERIFY(w->close());
    QVERIFY(!QFile::exists(recovery_));
  }

  // Issue 18: after a crash and restore, the undo history was gone.
  void a_restore_brings_back_the_schedule_undo_history() {
    QFile::remove(recovery_);
    const schedule::Schedule steps = schedule::parse_schedule("split(a.i, 8)\nsplit(a.j, 4)\n");
    QString kernel;
    size_t base = 0;  // the kernel's default steps
    {
      auto w = window();
      w->open_file(test::sample_model());
      QVERIFY(w->controller()->wait_until_idle(60000));
      kernel = QString::fromStdString(w->controller()->snapshot()->fusion->groups.front().kernel_name);
      w->selection()->set_kernel(kernel);
      ScheduleEditorPane* editor = w->panes().schedule;
      QCOMPARE(editor->kernel(), kernel);
      const int before = editor->undo_stack()->count();
      base = editor->entries().size();
      editor->add_step(steps.steps[0], 0);
      editor->add_step(steps.steps[1], 1);
      editor->undo_stack()->undo();
      QCOMPARE(editor->undo_stack()->count(), before + 2);
      QTRY_VERIFY_WITH_TIMEOUT(read_all(recovery_).contains("\"history\""), 10000);
    }  // "crash"
    auto w = window();
    QVERIFY(w->restore_recovered());
    QVERIFY(w->controller()->wait_until_idle(60000));
    w->selection()->set_kernel(kernel);
    ScheduleEditorPane* editor = w->panes().schedule;
    QCOMPARE(editor->kernel(), kernel);
    QVERIFY2(editor->undo_stack()->count() >= 2,
             qPrintable(QString("stack %1, histories %2, status '%3', recovery: %4")
                            .arg(editor->undo_stack()->count())
                            .arg(editor->histories().size())
                            .arg(w->statusBar()->currentMessage())
                            .arg(QString::fromUtf8(read_all(recovery_)).left(600))));
    QVERIFY(editor->undo_stack()->canRedo());  // the undone edit can be redone
    QCOMPARE(editor->entries().size(), base + 1);
    editor->undo_stack()->redo();
    QCOMPARE(editor->entries().size(), base + 2);
    editor->undo_stack()->undo();
    editor->undo_stack()->undo();
    QCOMPARE(editor->entries().size(), base);  // back to the default steps, through the restored history
    answer_with(*w, QMessageBox::Discard);
    QVERIFY(w->close());
  }

  // Issue 18: after a crash and restore, the lesson page and the window layout were gone.
  void a_restore_brings_back_the_lesson_page_and_the_layout_is_autosaved() {
    QFile::remove(recovery_);
    {
      auto w = window();
      auto* memory = w->findChild<QDockWidget*>("dock_memory");
      QVERIFY(memory && memory->isVisible());
      QTest::qWait(10);
      const QByteArray saved_before = QSettings().value("window/state").toByteArray();
      memory->hide();
      w->start_lesson(kLessons + "/optimize_matmul.json");
      QVERIFY(w->lesson_runner());
      QVERIFY(w->controller()->wait_until_idle(60000));
      w->lesson_runner()->next();
      w->lesson_runner()->next();
      QCOMPARE(w->lesson_runner()->page_index(), 2);
      QVERIFY(w->controller()->wait_until_idle(60000));
      QTRY_VERIFY_WITH_TIMEOUT(read_all(recovery_).contains("\"page\": 2"), 10000);
      // The layout reaches the settings without a clean close (autosaved every few seconds).
      QTRY_VERIFY_WITH_TIMEOUT(QSettings().value("window/state").toByteArray() != saved_before, 8000);
      // "Crash": the window goes away without its close event.
    }
    const QByteArray left = read_all(recovery_);
    QVERIFY(!left.isEmpty());
    auto w = window();
    QVERIFY(w->has_recovery_offer());
    QVERIFY(!w->findChild<QDockWidget*>("dock_memory")->isVisible());
    QVERIFY(w->restore_recovered());
    QVERIFY(w->lesson_runner());
    QCOMPARE(w->lesson_runner()->page_index(), 2);
    QVERIFY(w->findChild<QDockWidget*>("dock_lesson")->isVisible());
    QVERIFY(w->controller()->wait_until_idle(60000));
    QVERIFY(QString::fromStdString(w->controller()->document().model_path).endsWith("matmul_256.graph"));
    QVERIFY(!w->controller()->document().schedules.empty());  // the page's hand schedule came back
    w->findChild<QDockWidget*>("dock_memory")->show();
    answer_with(*w, QMessageBox::Discard);
    QVERIFY(w->close());
  }
};

QTEST_MAIN(StudioUnsavedEditsTest)
#include "test_studio_unsaved_edits.moc"
