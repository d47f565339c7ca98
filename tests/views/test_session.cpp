// The session: .tessel files, the SessionController's worker compile (progress, cancel, errors that
// leave the studio usable) and crash recovery with a real studio killed by SIGKILL.
#include <QProcess>
#include <QSignalSpy>
#include <QtTest>
#include <fstream>
#include <thread>

#include "app/studio/main_window.h"
#include "core/schedule/default_schedule.h"
#include "studio_fixtures.h"
#include "views/edit/kernel_lowering.h"
#include "views/schedule/schedule_editor_pane.h"
#include "views/session/session_controller.h"

using namespace tessel;
using namespace tessel::views;

class SessionTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings of the in-process window stay out of ~
    QCoreApplication::setOrganizationName("TesselTest");
    QCoreApplication::setApplicationName("session_test");
  }

  void session_file_round_trips_with_relative_model_path() {
    QTemporaryDir dir;
    QString model = dir.filePath("models/m.onnx");
    QDir().mkpath(dir.filePath("models"));
    QVERIFY(QFile::copy(test::sample_model(), model));
    SessionDocument doc;
    doc.model_path = model.toStdString();
    doc.model_sha256 = file_sha256(doc.model_path);
    doc.target = "ref -vector_bits=256";
    doc.pass_options = {{"fuse", false}};
    doc.tuning_records = dir.filePath("sessions/s.records.jsonl").toStdString();
    QDir().mkpath(dir.filePath("sessions"));
    QString path = dir.filePath("sessions/s.tessel");
    save_session(doc, path.toStdString());
    std::ifstream in(path.toStdString());
    nlohmann::json j = nlohmann::json::parse(in);
    QCOMPARE(QString::fromStdString(j["model"]["path"]), QString("../models/m.onnx"));
    QCOMPARE(QString::fromStdString(j["tuning_records"]), QString("s.records.jsonl"));
    QCOMPARE(j["model"]["sha256"].get<std::string>().size(), size_t{64});
    SessionDocument back = load_session(path.toStdString());
    QCOMPARE(QString::fromStdString(back.model_path), QFileInfo(model).absoluteFilePath());
    QVERIFY(back == doc);
  }

  void malformed_session_names_the_file_and_the_problem() {
    QTemporaryDir dir;
    auto write = [&](const char* name, const char* text) {
      QFile f(dir.filePath(name));
      f.open(QIODevice::WriteOnly);
      f.write(text);
      return dir.filePath(name).toStdString();
    };
    auto message = [](const std::string& path) -> std::string {
      try {
        load_session(path);
      } catch (const Error& e) {
        return e.what();
      }
      return "no error";
    };
    std::string not_json = write("a.tessel", "{nope");
    QVERIFY(message(not_json).find("a.tessel: not valid JSON") != std::string::npos);
    std::string no_model = write("b.tessel", R"({"format": "tessel-session", "version": 1})");
    QVERIFY2(message(no_model).find("b.tessel: field 'model' is missing") != std::string::npos,
             message(no_model).c_str());
    std::string bad_options = write(
        "c.tessel", R"({"format": "tessel-session", "version": 1, "model": {"path": "x.onnx"}, "pass_options": 3})");
    QVERIFY2(
        message(bad_options).find("c.tessel: field 'pass_options' must be an object, got integer") != std::string::npos,
        message(bad_options).c_str());
    // Not a regular file: refused at once (a FIFO would block the studio forever).
    QVERIFY2(message(dir.path().toStdString()).find("is a folder") != std::string::npos,
             message(dir.path().toStdString()).c_str());
  }

  void session_keeps_per_kernel_schedules() {
    // A real kernel of the sample and its default schedule, as the schedule editor saves it
    // (text form, a disabled step as a comment).
    StudioSnapshotPtr snap = test::compile_now(test::sample_model());
    QVERIFY(snap && snap->fusion && !snap->fusion->groups.empty());
    const std::string kernel = snap->fusion->groups.front().kernel_name;
    std::string why;
    std::optional<te::ComputeDag> dag = kernel_dag(*snap, kernel, &why);
    QVERIFY2(dag.has_value(), why.c_str());
    schedule::Schedule def = schedule::default_cpu_schedule(*dag);
    QVERIFY(!def.steps.empty());
    QTemporaryDir dir;
    SessionDocument doc;
    doc.model_path = test::sample_model().toStdString();
    doc.schedules[kernel] = schedule::to_text(def) + "# disabled: unroll(" + kernel + "_nope.x)\n";
    doc.schedules["other_kernel"] = "split(C.i, 8)\n";
    QString path = dir.filePath("s.tessel");
    save_session(doc, path.toStdString());
    SessionDocument back = load_session(path.toStdString());
    QVERIFY(back == doc);
    QVERIFY(schedule::parse_schedule(back.schedules.at(kernel)) == def);  // the comment is not a step
    // No edits: no member, so sessions without schedules look as before.
    doc.schedules.clear();
    QVERIFY(!session_to_json(doc, dir.path().toStdString()).contains("schedules"));
    QVERIFY(load_session((save_session(doc, path.toStdString()), path.toStdString())).schedules.empty());
  }

  void malformed_schedules_name_the_kernel_and_the_line() {
    QTemporaryDir dir;
    auto message = [&](const char* schedules) -> std::string {
      QFile f(dir.filePath("s.tessel"));
      f.open(QIODevice::WriteOnly | QIODevice::Truncate);
      f.write(QByteArray(R"({"format": "tessel-session", "version": 1, "model": {"path": "m.onnx"}, "schedules": )") +
              schedules + "}");
      f.close();
      try {
        load_session(dir.filePath("s.tessel").toStdString());
      } catch (const Error& e) {
        return e.what();
      }
      return "no error";
    };
    std::string bad_step = message(R"({"fused_conv_1": "split(conv.y, 4)\nsplit(conv.x 4)\n"})");
    QVERIFY2(bad_step.find("s.tessel: field 'schedules.fused_conv_1' is not a valid schedule") != std::string::npos,
             bad_step.c_str());
    QVERIFY2(bad_step.find("line 2") != std::string::npos, bad_step.c_str());
    std::string not_text = message(R"({"k": 3})");
    QVERIFY2(not_text.find("field 'schedules.k' must be a string, got integer") != std::string::npos, not_text.c_str());
    QVERIFY(message("[]").find("field 'schedules' must be an object, got array") != std::string::npos);
  }

  // Issue 12: session and recovery files come from anywhere. Every damage is one line naming the
  // file and the field, through the Qt-free readers (parse_session_text, parse_recovery_text).
  void damaged_session_and_recovery_texts_name_the_file_and_the_field() {
    auto session_error = [](const std::string& text) -> std::string {
      try {
        parse_session_text(text, "/s", "s.tessel");
      } catch (const Error& e) {
        return e.what();
      }
      return "no error";
    };
    auto recovery_error = [](const std::string& text) -> std::string {
      try {
        parse_recovery_text(text, "r.tessel");
      } catch (const Error& e) {
        return e.what();
      }
      return "no error";
    };
    const std::string head = "{\"format\": \"tessel-session\", \"version\": 1, \"model\": {\"path\": \"m.onnx\"}";
    const std::vector<std::pair<std::string, std::string>> sessions = {
        {"[]", "s.tessel: the top level must be an object, got array"},
        {"42", "s.tessel: the top level must be an object, got integer"},
        {"", "s.tessel: not valid JSON"},
        {"{\"format\": \"tessel-session\", \"vers", "s.tessel: not valid JSON: parse error at line 1, column 35"},
        {"{\"format\": 3}", "s.tessel: field 'format' must be a string, got integer"},
        {"{\"format\": \"tessel-lesson\"}",
         "s.tessel: field 'format' must be \"tessel-session\", got \"tessel-lesson\""},
        {"{\"format\": \"tessel-session\"}", "s.tessel: field 'version' is missing"},
        {"{\"format\": \"tessel-session\", \"version\": \"1\"}", "field 'version' must be an integer, got string"},
        {"{\"format\": \"tessel-session\", \"version\": 2}", "field 'version' must be 1, got 2"},
        {"{\"format\": \"tessel-session\", \"version\": 99999999999999999999}",
         "field 'version' must be an integer, got number"},
        {"{\"format\": \"tessel-session\", \"version\": 18446744073709551615}", "field 'version' must be at most 1"},
        {"{\"format\": \"tessel-session\", \"version\": -9223372036854775808}", "field 'version' must be 1"},
        {"{\"format\": \"tessel-session\", \"version\": 1.5}", "field 'version' must be an integer, got number"},
        {"{\"format\": \"tessel-session\", \"version\": 1e999}", "s.tessel: not valid JSON: number overflow"},
        {"{\"format\": \"tessel-session\", \"version\": 1, \"model\": null}",
         "field 'model' must be an object, got null"},
        {"{\"format\": \"tessel-session\", \"version\": 1, \"model\": {\"path\": 5}}",
         "field 'model.path' must be a string, got integer"},
        {"{\"format\": \"tessel-session\", \"version\": 1, \"model\": {\"path\": \"\"}}",
         "field 'model.path' must not be empty"},
        {"{\"format\": \"tessel-session\", \"version\": 1, \"model\": {\"path\": \"m\", \"sha256\": []}}",
         "field 'model.sha256' must be a string, got array"},
        {"{\"format\": \"tessel-session\", \"version\": 1, \"model\": {\"path\": \"m\", \"sha256\": \"zz\"}}",
         "field 'model.sha256' must be 64 hexadecimal digits"},
        {head + ", \"target\": false}", "field 'target' must be a string, got boolean"},
        {head + ", \"pass_options\": {\"fuse\": \"no\"}}", "field 'pass_options' is wrong: pass option 'fuse'"},
        {head + ", \"schedules\": {\"k\": {\"steps\": 1}}}", "field 'schedules.k' must be a string, got object"},
        {head + ", \"schedules\": {\"a b\\u0001\": 1}}", "field 'schedules[\"a b\\x01\"]' must be a string"},
        {head + ", \"pass_options\": {\"x\": " + std::string(5000, '[') + std::string(5000, ']') + "}}",
         "s.tessel: nested deeper than 64 levels"},
    };
    for (const auto& [text, expected] : sessions) {
      const std::string got = session_error(text);
      QVERIFY2(got.find(expected) != std::string::npos, (text.substr(0, 80) + " -> " + got).c_str());
      QVERIFY2(got.find("json.exception") == std::string::npos, got.c_str());
      QVERIFY2(got.size() < 400, got.c_str());  // one line, whatever the file holds
    }
    const std::string session = head + "}";
    const std::vector<std::pair<std::string, std::string>> recoveries = {
        {"null", "r.tessel: the top level must be an object, got null"},
        {"{}", "r.tessel: field 'session' is missing"},
        {"{\"session\": 1}", "field 'session' must be an object, got integer"},
        {"{\"session\": {\"format\": \"tessel-session\", \"version\": 1, \"model\": {\"path\": 0}}}",
         "r.tessel: field 'session.model.path' must be a string, got integer"},
        {"{\"session\": " + session + ", \"session_path\": 12}", "field 'session_path' must be a string, got integer"},
        {"{\"session\": " + session + ", \"modified\": \"yes\"}", "field 'modified' must be true or false, got string"},
        {"{\"session\": " + session + ", \"lesson\": {\"path\": \"l.json\", \"page\": -1}}",
         "field 'lesson.page' must be between 0 and 9999, got -1"},
        {"{\"session\": " + session + ", \"lesson\": {\"page\": 1}}", "field 'lesson.path' is missing"},
        {"{\"session\": " + session +
             ", \"history\": {\"k\": {\"states\": [\"\"], \"labels\": [\"a\"], \"index\": 0}}}",
         "field 'history.k.states' must hold one more state than there are labels"},
        {"{\"session\": " + session +
             ", \"history\": {\"k\": {\"states\": [\"\", \"x(\"], \"labels\": [\"a\"], \"index\": 1}}}",
         "field 'history.k.states[1]' is not a valid schedule"},
        {"{\"session\": " + session + ", \"history\": {\"k\": {\"states\": [\"\"], \"labels\": [], \"index\": 5}}}",
         "field 'history.k.index' must be 0, got 5"},
    };
    for (const auto& [text, expected] : recoveries) {
      const std::string got = recovery_error(text);
      QVERIFY2(got.find(expected) != std::string::npos, (text.substr(0, 80) + " -> " + got).c_str());
    }
    // What the studio writes reads back the same.
    RecoveryRecord r;
    r.doc.model_path = "/models/m.onnx";
    r.doc.target = "ref -vector_bits=256";
    r.doc.schedules["k"] = "split(C.i, 8)\n";
    r.session_path = "/home/u/s.tessel";
    r.modified = false;
    r.lesson_path = "/lessons/l.json";
    r.lesson_page = 3;
    r.histories["k"] = {{"", "split(C.i, 8)\n", "split(C.i, 8)\n# disabled: parallel(C.i.outer)\n"},
                        {"Add split(C.i, 8)", "Add parallel(C.i.outer)"},
                        1};
    QVERIFY(parse_recovery_text(recovery_to_json(r).dump(2), "r.tessel") == r);
  }

  void controller_compiles_on_a_worker_with_progress_then_saves_and_reopens() {
    QTemporaryDir dir;
    SessionController controller(&compile_model);
    controller.set_recovery_path(dir.filePath("recovery.tessel"));
    QSignalSpy progress(&controller, &SessionController::progress);
    QSignalSpy compiled(&controller, &SessionController::compiled);
    controller.open_model(test::sample_model());
    QVERIFY(controller.is_busy());  // open returns at once; the work is on the worker
    QVERIFY(controller.wait_until_idle(60000));
    QCOMPARE(compiled.count(), 1);
    QVERIFY(progress.count() >= 3);  // import, graph passes, each pass...
    QStringList stages;
    for (const auto& args : progress) stages << args[0].toString();
    QVERIFY2(stages.join("|").contains("pass fuse_ops"), qPrintable(stages.join("|")));
    StudioSnapshotPtr first = controller.snapshot();
    QVERIFY(first && !first->has_errors());
    QVERIFY(!controller.is_modified());

    controller.set_target("ref -vector_bits=256");
    QVERIFY(controller.is_modified());
    QVERIFY(controller.wait_until_idle(60000));
    QVERIFY(controller.snapshot() != first);
    QVERIFY2(controller.snapshot()->target.find("vector_bits=256") != std::string::npos,
             controller.snapshot()->target.c_str());

    QString path = dir.filePath("saved.tessel");
    controller.save_as(path);
    QVERIFY(!controller.is_modified());
    SessionController reopened(&compile_model);
    reopened.open_session(path);
    QVERIFY(reopened.wait_until_idle(60000));
    QVERIFY(reopened.document() == controller.document());
    QCOMPARE(reopened.session_path(), QFileInfo(path).absoluteFilePath());
    QCOMPARE(reopened.snapshot()->optimized->nodes.size(), controller.snapshot()->optimized->nodes.size());
  }

  void a_bad_model_becomes_diagnostics_and_the_next_open_works() {
    QTemporaryDir dir;
    QString bad = dir.filePath("bad.onnx");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("garbage");
    f.close();
    SessionController controller(&compile_model);
    controller.open_model(bad);
    QVERIFY(controller.wait_until_idle(60000));
    QVERIFY(controller.snapshot()->has_errors());
    QCOMPARE(controller.snapshot()->diagnostics[0].stage, std::string("import"));
    controller.open_model(test::sample_model());
    QVERIFY(controller.wait_until_idle(60000));
    QVERIFY(!controller.snapshot()->has_errors());
  }

  void cancel_stops_a_running_compile() {
    std::atomic<bool> started{false};
    CompileFunction slow = [&](const SessionDocument&, const CompileProgress& progress) -> StudioSnapshotPtr {
      started = true;
      for (int i = 0; i < 2000; ++i) {  // up to 20 s, unless canceled
        progress.check_canceled();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return std::make_shared<StudioSnapshot>();
    };
    SessionController controller(slow);
    QSignalSpy canceled(&controller, &SessionController::compile_canceled);
    QSignalSpy compiled(&controller, &SessionController::compiled);
    controller.open_model(test::sample_model());
    QTRY_VERIFY_WITH_TIMEOUT(started.load(), 5000);
    QElapsedTimer t;
    t.start();
    controller.cancel();
    QVERIFY(controller.wait_until_idle(5000));
    QVERIFY(t.elapsed() < 2000);
    QCOMPARE(canceled.count(), 1);
    QCOMPARE(compiled.count(), 0);
  }

  void a_newer_compile_supersedes_a_running_one() {
    std::atomic<int> calls{0};
    CompileFunction fn = [&](const SessionDocument& doc, const CompileProgress& progress) -> StudioSnapshotPtr {
      ++calls;
      if (doc.target == "slow")
        for (int i = 0; i < 500; ++i) {
          progress.check_canceled();
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      auto s = std::make_shared<StudioSnapshot>();
      s->target = doc.target;
      return s;
    };
    SessionController controller(fn);
    QSignalSpy compiled(&controller, &SessionController::compiled);
    SessionDocument doc;
    doc.model_path = "/x.onnx";
    doc.target = "slow";
    controller.open_document(doc, {}, false);
    controller.set_target("fast");
    QVERIFY(controller.wait_until_idle(10000));
    QCOMPARE(compiled.count(), 1);
    QCOMPARE(controller.snapshot()->target, std::string("fast"));
  }

  void killed_studio_leaves_a_recovery_that_the_next_one_restores() {
    QTemporaryDir home;
    QString recovery = home.filePath("recovery.tessel");
    QProcess studio;
    studio.setEnvironment(test::child_environment(home.path()));
    studio.start(TESSEL_STUDIO_EXE,
                 {"--open", test::sample_model(), "--set-target", "ref -vector_bits=256", "--recovery-file", recovery});
    QVERIFY(studio.waitForStarted(10000));
    // The target edit is the user's typing: it must reach the autosave before the kill.
    QTRY_VERIFY_WITH_TIMEOUT(
        QFile(recovery).exists() &&
            [&] {
              QFile f(recovery);
              f.open(QIODevice::ReadOnly);
              return f.readAll().contains("vector_bits=256");
            }(),
        30000);
    studio.kill();  // SIGKILL: no clean close, no chance to remove the file
    QVERIFY(studio.waitForFinished(10000));
    QCOMPARE(studio.exitStatus(), QProcess::CrashExit);
    QVERIFY(QFile::exists(recovery));

    auto recovered = SessionController::read_recovery(recovery).record;
    QVERIFY(recovered);
    QCOMPARE(recovered->doc.target, std::string("ref -vector_bits=256"));
    QCOMPARE(QString::fromStdString(recovered->doc.model_path), QFileInfo(test::sample_model()).absoluteFilePath());

    // The next studio offers it (non-modal banner) and restores it.
    studio::MainWindowOptions options;
    options.recovery_path = recovery;
    options.models_dir = QFileInfo(test::sample_model()).absolutePath();
    studio::MainWindow window(options);
    QVERIFY(window.has_recovery_offer());
    QVERIFY(window.banner_text().contains("ended unexpectedly"));
    QVERIFY(window.restore_recovered());
    QCOMPARE(window.controller()->document().target, std::string("ref -vector_bits=256"));
    QVERIFY(window.controller()->is_modified());  // restored edits are still unsaved
    QVERIFY(window.controller()->wait_until_idle(60000));
    QVERIFY(!window.controller()->snapshot()->has_errors());
    // A clean close of an unmodified session removes the recovery file.
    window.controller()->save_as(home.filePath("saved.tessel"));
    QVERIFY(window.close());
    QVERIFY(!QFile::exists(recovery));
  }
};

QTEST_MAIN(SessionTest)
#include "test_session.moc"
