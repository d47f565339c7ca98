// The lessons in resources/lessons: they load, every schedule they set lowers on the kernel it names
// (in the model and pass options of its page), a malformed lesson gives one error naming the file
// and page, and both walkthroughs run through the real KernelEditLoop and measuring process: the
// matmul lesson's steps are measured faster than its naive loops, the unfused resnet block moves
// more bytes than the fused one. Plus a screenshot of the lesson pane. A page's target holds for
// later pages; the cooperative fetching lesson (labelled opencl: test_lessons_opencl) compiles and
// checks every page on the opencl target, and only its cooperative page binds the tile copies to
// threadIdx. The virtual threads lesson compiles every page for accel-sim (a simulator: no device
// needed), each kernel matches the reference, and only its two-thread page has dependence tokens.
#include <QComboBox>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <fstream>
#include <map>

#include "core/plugin/plugin_manager.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/edit/kernel_edit_loop.h"
#include "views/edit/kernel_lowering.h"
#include "views/lessons/lesson_pane.h"
#include "views/lessons/lesson_runner.h"
#include "views/roofline/roofline_pane.h"
#include "views/schedule/schedule_editor_pane.h"
#include "views/session/compile_model.h"

using namespace tessel;
using namespace tessel::views;

namespace {

const std::string kLessons = TESSEL_SOURCE_DIR "/resources/lessons";
constexpr int kOpenClWaitMs = 180000;

// `target` empty: the session's default.
StudioSnapshotPtr compile_with(const std::string& model, const nlohmann::json& pass_options,
                               const std::string& target = {}) {
  SessionDocument doc;
  doc.model_path = model;
  doc.pass_options = pass_options;
  if (!target.empty()) doc.target = target;
  return compile_model(doc, CompileProgress{});
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The OpenCL tests run only when named on the command line (see tests/views/CMakeLists.txt).
bool named_on_command_line() { return QCoreApplication::arguments().contains(QTest::currentTestFunction()); }

bool target_available(const std::string& target) {
  const std::vector<std::string> targets = available_targets();
  return target.empty() || std::find(targets.begin(), targets.end(), target) != targets.end();
}

const Lesson* find_lesson(const std::vector<Lesson>& lessons, const QString& word) {
  for (const Lesson& l : lessons)
    if (QString::fromStdString(l.title).contains(word, Qt::CaseInsensitive)) return &l;
  return nullptr;
}

// The mediator's wiring, minus the window: pages open models, select kernels, set schedules and
// profile through the edit loop; its results go back to the runner.
struct LessonHarness {
  KernelEditLoop loop{QStringLiteral(TESSEL_MEASURE_EXE)};
  std::unique_ptr<LessonRunner> runner;

  std::string model, target;
  nlohmann::json options;

  explicit LessonHarness(const Lesson& lesson) {
    LessonActions actions;
    actions.open_model = [this](const QString& path, const nlohmann::json& pass_options, const QString& t) {
      model = path.toStdString();
      options = pass_options;
      if (!t.isEmpty()) target = t.toStdString();
      compile();
    };
    actions.set_target = [this](const QString& t) {
      target = t.toStdString();
      compile();
    };
    actions.select_kernel = [this](const QString& k) { loop.open_kernel(k); };
    actions.set_schedule = [this](const QString& k, const schedule::Schedule& s) { loop.set_schedule(k, s); };
    actions.reset_schedule = [this](const QString& k) { loop.reset_to_default(k); };
    actions.profile = [this] { loop.profile_model(); };
    runner = std::make_unique<LessonRunner>(lesson, actions);
    QObject::connect(&loop, &KernelEditLoop::measured,
                     [this](KernelMeasurementPtr m) { runner->note_measurement(*m); });
    QObject::connect(&loop, &KernelEditLoop::profiled, [this](ModelProfilePtr p) { runner->note_profile(*p); });
  }

  void compile() {
    if (!target.empty()) loop.set_target(QString::fromStdString(target));
    loop.set_pass_options(options);
    loop.set_snapshot(compile_with(model, options, target));
  }
};

}  // namespace

class LessonsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir cache_;
  std::vector<Lesson> lessons_;

 private Q_SLOTS:
  void initTestCase() {
    qputenv("TESSEL_CACHE_DIR", cache_.path().toUtf8());
    PluginManager::global().load_all();
  }

  void lessons_load_and_their_schedules_lower() {
    for (const std::string& f : lesson_files(kLessons)) lessons_.push_back(load_lesson(f));
    QVERIFY(lessons_.size() >= 2);
    QVERIFY(find_lesson(lessons_, "matmul"));
    QVERIFY(find_lesson(lessons_, "fusion"));
    QVERIFY(find_lesson(lessons_, "cooperative"));
    QVERIFY(find_lesson(lessons_, "virtual threads"));
    for (const Lesson& l : lessons_) {
      QVERIFY(!l.pages.empty());
      StudioSnapshotPtr snap;
      nlohmann::json options = nlohmann::json::object();
      for (size_t k = 0; k < l.pages.size(); ++k) {
        const LessonPage& p = l.pages[k];
        if (p.model_path) options = p.pass_options;
        const std::string where = l.path + " page " + std::to_string(k + 1);
        const std::string target = l.target_at(k);
        if (!target_available(target)) {
          // Lowering needs only the target's plugin, not a device; a build without it cannot check.
          qInfo("%s: target '%s' is not in this build, not lowered", where.c_str(), target.c_str());
          continue;
        }
        if (p.model_path || !p.target.empty()) snap = compile_with(l.model_at(k), options, target);
        if (p.kernel.empty()) continue;
        QVERIFY2(snap && !snap->has_errors(), where.c_str());
        std::string why;
        QVERIFY2(kernel_dag(*snap, p.kernel, &why), (where + ": " + why).c_str());
        if (p.schedule_action != LessonPage::ScheduleAction::kHand) continue;
        KernelLoweringPtr lowered = lower_kernel(snap, p.kernel, p.schedule, snap->target, 1);
        QVERIFY2(lowered->error.empty(), (where + ": " + lowered->error).c_str());
        QCOMPARE(lowered->steps.size(), p.schedule.steps.size() + 1);
      }
    }
  }

  void a_malformed_lesson_names_file_and_page() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("broken.json").toStdString();
    // (Built as JSON values: moc does not follow raw string literals.)
    nlohmann::json broken = {
        {"format", "tessel-lesson"},
        {"title", "Broken"},
        {"pages",
         {{{"title", "One"}, {"text", "t"}, {"open_model", {{"path", kLessons + "/matmul_256.graph"}}}},
          {{"title", "Two"},
           {"text", "t"},
           {"select_kernel", "fused_mat_mul_0"},
           {"schedule", {"tile(matmul_0.i0, 8"}}}}}};
    std::ofstream(path) << broken.dump();
    try {
      load_lesson(path);
      QFAIL("a bad schedule step loaded");
    } catch (const Error& e) {
      const QString message = e.what();
      QVERIFY2(message.startsWith(QString::fromStdString(path) + ": page 2 'Two': schedule"), e.what());
    }
    nlohmann::json early = {{"format", "tessel-lesson"},
                            {"title", "Early"},
                            {"pages", {{{"title", "One"}, {"text", "t"}, {"select_kernel", "k"}}}}};
    std::ofstream(path) << early.dump();
    QVERIFY_THROWS_EXCEPTION(Error, load_lesson(path));
  }

  // A page's target holds for the pages after it; the runner opens the model on it, or switches
  // the open model's target, only when it changes.
  void a_page_sets_the_target_of_later_pages() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("targets.json").toStdString();
    const nlohmann::json model = {{"path", kLessons + "/matmul_256.graph"}};
    nlohmann::json lesson = {{"format", "tessel-lesson"},
                             {"title", "Targets"},
                             {"pages",
                              {{{"title", "Host"}, {"text", "t"}, {"open_model", model}},
                               {{"title", "Device"}, {"text", "t"}, {"target", "opencl"}},
                               {{"title", "Still device"}, {"text", "t"}},
                               {{"title", "Same model"}, {"text", "t"}, {"open_model", model}, {"target", "c"}}}}};
    std::ofstream(path) << lesson.dump();
    const Lesson l = load_lesson(path);
    QCOMPARE(l.target_at(0), std::string());
    QCOMPARE(l.target_at(2), std::string("opencl"));
    QCOMPARE(l.target_at(3), std::string("c"));

    QStringList calls;
    LessonActions actions;
    actions.open_model = [&](const QString& m, const nlohmann::json&, const QString& target) {
      calls << QFileInfo(m).fileName() + " on '" + target + "'";
    };
    actions.set_target = [&](const QString& target) { calls << "target " + target; };
    LessonRunner runner(l, actions);
    for (int k : {0, 1, 2, 0, 1, 3}) runner.go_to(k);
    // The last page names the open model again: not reopened, only its target changes.
    QCOMPARE(calls, QStringList({"matmul_256.graph on ''", "target opencl", "target c"}));
  }

  void matmul_lesson_measures_each_step_through_the_edit_loop() {
    const Lesson* lesson = find_lesson(lessons_, "matmul");
    QVERIFY(lesson);
    LessonHarness h(*lesson);
    LessonPane pane;
    pane.set_runner(h.runner.get());
    h.runner->on_result = [&](int) { pane.refresh(); };
    for (int k = 0; k < h.runner->page_count(); ++k) {
      h.runner->go_to(k);
      QVERIFY(h.loop.wait_until_idle(120000));
      const LessonPageResult& r = h.runner->result(k);
      if (h.runner->page().schedule_action == LessonPage::ScheduleAction::kNone) continue;
      KernelMeasurementPtr m = h.loop.measurement(QString::fromStdString(h.runner->page().kernel));
      QVERIFY2(m && m->verdict == KernelMeasurement::Verdict::kCorrect, m ? m->error.c_str() : "no measurement");
      QVERIFY2(r.kernel && r.kernel->ms > 0, h.runner->page().title.c_str());
      qInfo("%-36s %s", h.runner->page().title.c_str(), h.runner->result_text(k).c_str());
    }
    // Naive loops against tiled + reordered + vectorized + parallel: measured now, in this run.
    // How much faster depends on the machine and its load (that is for benchmarks); what the lesson
    // must get right is that its speed-up is the ratio of the two pages' measured times.
    int parallel_page = -1, naive_page = -1;
    for (int k = 0; k < h.runner->page_count(); ++k) {
      if (lesson->pages[static_cast<size_t>(k)].title == "Parallel") parallel_page = k;
      if (lesson->pages[static_cast<size_t>(k)].title == "Naive loops") naive_page = k;
    }
    QVERIFY(parallel_page > 0 && naive_page >= 0);
    const std::optional<double> speedup = h.runner->speedup(parallel_page);
    QVERIFY(speedup && *speedup > 0);
    QCOMPARE(*speedup, h.runner->result(naive_page).kernel->ms / h.runner->result(parallel_page).kernel->ms);
    QVERIFY(QString::fromStdString(h.runner->result_text(parallel_page)).contains(" than 'Naive loops'") ||
            QString::fromStdString(h.runner->result_text(parallel_page)).contains("the speed of 'Naive loops'"));

    h.runner->go_to(parallel_page);
    pane.refresh();
    pane.resize(520, 480);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QVERIFY(pane.result_text().contains(" than 'Naive loops'") || pane.result_text().contains("the speed of"));
    QTemporaryDir dir;
    QVERIFY(pane.grab().save(dir.filePath("lesson.png"), "PNG"));
    if (qEnvironmentVariableIsSet("TESSEL_SHOTS_DIR"))
      pane.grab().save(QDir(qEnvironmentVariable("TESSEL_SHOTS_DIR")).filePath("lesson.png"), "PNG");
    QImage back(dir.filePath("lesson.png"));
    QVERIFY(!back.isNull() && test::distinct_colors(back) > 8);
  }

  void fusion_lesson_shows_unfused_kernels_moving_more_bytes() {
    const Lesson* lesson = find_lesson(lessons_, "fusion");
    QVERIFY(lesson);
    LessonHarness h(*lesson);
    for (int k = 0; k < 2; ++k) {
      h.runner->go_to(k);
      QVERIFY(h.loop.wait_until_idle(120000));
      QVERIFY2(h.runner->result(k).model_ms, lesson->pages[static_cast<size_t>(k)].title.c_str());
      qInfo("%-16s %s", lesson->pages[static_cast<size_t>(k)].title.c_str(), h.runner->result_text(k).c_str());
    }
    const LessonPageResult& fused = h.runner->result(0);
    const LessonPageResult& unfused = h.runner->result(1);
    QVERIFY(unfused.kernels > fused.kernels);
    QVERIFY(unfused.model_bytes > fused.model_bytes);
    QVERIFY(QString::fromStdString(h.runner->result_text(1)).contains("its bytes"));
  }

  // Needs an OpenCL device (PoCL in CI): runs only when named on the command line, as the ctest
  // test_lessons_opencl does (labelled opencl, so scripts/check leaves it out where there is none).
  // Every page compiles for opencl and matches the reference; the shared-memory page's copy loops
  // are run whole by every thread, the cooperative page's are bound to the threads. Times are
  // printed, not compared: on PoCL work-groups run on CPU cores.
  void cooperative_fetching_lesson_on_opencl() {
    if (!named_on_command_line()) QSKIP("needs an OpenCL device: run by test_lessons_opencl");
    const Lesson lesson = load_lesson(kLessons + "/cooperative_fetching.json");
    LessonHarness h(lesson);
    struct Page {
      std::string program;  // the loop program after the lowering passes
      std::string opencl;   // the generated OpenCL C
    };
    std::map<std::string, Page> pages;  // by the page title's first word
    for (int k = 0; k < h.runner->page_count(); ++k) {
      h.runner->go_to(k);
      QVERIFY(h.loop.wait_until_idle(kOpenClWaitMs));
      const LessonPage& p = h.runner->page();
      const QString kernel = QString::fromStdString(p.kernel);
      KernelLoweringPtr lowered = h.loop.lowering(kernel);
      QVERIFY2(lowered && lowered->error.empty() && !lowered->passes.empty(), p.title.c_str());
      KernelMeasurementPtr m = h.loop.measurement(kernel);
      QVERIFY2(m && m->verdict == KernelMeasurement::Verdict::kCorrect, m ? m->error.c_str() : "no measurement");
      QVERIFY2(QString::fromStdString(m->target).startsWith("opencl"), m->target.c_str());
      QVERIFY2(h.runner->result(k).kernel, p.title.c_str());
      Page& page = pages[p.title.substr(0, p.title.find(' '))];
      page.program = lowered->passes.back().record.text();
      for (const auto& [name, text] : m->artifacts)
        if (name == "opencl") page.opencl = text;
      qInfo("%-52s %s", p.title.c_str(), h.runner->result_text(k).c_str());
    }
    QCOMPARE(pages.size(), size_t{3});
    const Page& naive = pages["Blocks"];
    const Page& shared = pages["Shared"];
    const Page& cooperative = pages["Cooperative"];

    // One thread per element of C on every page; no shared memory before the second page.
    for (const Page* p : {&naive, &shared, &cooperative}) {
      QVERIFY(p->program.find("bind(blockIdx.y)") != std::string::npos);
      QVERIFY(p->program.find("bind(threadIdx.x)") != std::string::npos);
    }
    QCOMPARE(count(naive.opencl, "__local"), 0);
    QCOMPARE(count(naive.opencl, "barrier("), 0);
    QCOMPARE(count(naive.opencl, "get_local_id"), 2);

    // Both tiles in __local memory with a barrier before and after their copy, on both pages.
    for (const Page* p : {&shared, &cooperative}) {
      QCOMPARE(count(p->opencl, "__local float"), 2);
      QCOMPARE(count(p->program, "barrier(shared)"), 2);
      QCOMPARE(count(p->opencl, "barrier(CLK_LOCAL_MEM_FENCE"), 2);
    }
    // The copy loops: plain loops every thread runs whole, against loops bound to the threads.
    QCOMPARE(count(shared.program, "for ax0 in 0..16 {"), 2);
    QCOMPARE(count(shared.program, "for ax1 in 0..16 {"), 2);
    QCOMPARE(count(shared.program, "for ax0 in 0..16 bind("), 0);
    QCOMPARE(count(shared.opencl, "get_local_id"), 2);  // only C's threads
    QCOMPARE(count(cooperative.program, "for ax0 in 0..16 bind(threadIdx.y)"), 2);
    QCOMPARE(count(cooperative.program, "for ax1 in 0..16 bind(threadIdx.x)"), 2);
    QCOMPARE(count(cooperative.program, "for ax0 in 0..16 {"), 0);
    QCOMPARE(count(cooperative.opencl, "get_local_id"), 6);  // C's threads and both copies
  }

  // Every page on accel-sim: the kernel compiles for the accelerator and matches the reference; with
  // one virtual thread the loop program has no dependence tokens (the code generator orders the
  // units), with two the lowering interleaves dep_push/dep_pop between the threads' loads, GEMMs and
  // stores, and the simulated kernel is faster.
  void virtual_threads_lesson_on_the_accelerator() {
    if (!target_available("accel-sim")) QSKIP("the accel_sim plugin is not in this build");
    const Lesson lesson = load_lesson(kLessons + "/virtual_threads.json");
    LessonHarness h(lesson);
    std::map<std::string, std::string> programs;  // by page title
    std::map<std::string, double> cycles;
    int one_page = -1, two_page = -1;
    for (int k = 0; k < h.runner->page_count(); ++k) {
      h.runner->go_to(k);
      QVERIFY(h.loop.wait_until_idle(120000));
      const LessonPage& p = h.runner->page();
      QCOMPARE(lesson.target_at(static_cast<size_t>(k)), std::string("accel-sim"));
      if (p.schedule_action != LessonPage::ScheduleAction::kHand) continue;
      const QString kernel = QString::fromStdString(p.kernel);
      KernelLoweringPtr lowered = h.loop.lowering(kernel);
      QVERIFY2(lowered && lowered->error.empty() && !lowered->passes.empty(),
               (p.title + ": " + (lowered ? lowered->error : "not lowered")).c_str());
      KernelMeasurementPtr m = h.loop.measurement(kernel);
      QVERIFY2(m && m->verdict == KernelMeasurement::Verdict::kCorrect, m ? m->error.c_str() : "no measurement");
      QVERIFY2(QString::fromStdString(m->target).startsWith("accel-sim"), m->target.c_str());
      QVERIFY2(h.runner->result(k).kernel, p.title.c_str());
      programs[p.title] = lowered->passes.back().record.text();
      // The accelerator's own time: the simulated cycles in the instruction listing the program
      // pane shows (the page's time is the host's, simulating).
      for (const auto& [name, text] : m->artifacts)
        if (name == "accel_program") {
          const size_t at = text.find("simulated: ");
          QVERIFY2(at != std::string::npos, text.substr(0, 400).c_str());
          cycles[p.title] = std::stod(text.substr(at + 11));
          qInfo("%s", text.substr(at, text.find('\n', at) - at).c_str());
        }
      if (p.title == "One virtual thread") one_page = k;
      if (p.title == "Two virtual threads") two_page = k;
      qInfo("%-24s %s", p.title.c_str(), h.runner->result_text(k).c_str());
    }
    QVERIFY(one_page >= 0 && two_page > one_page);
    const std::string& one = programs["One virtual thread"];
    const std::string& two = programs["Two virtual threads"];
    QCOMPARE(count(one, "dep_push("), 0);
    QCOMPARE(count(one, "dep_pop("), 0);
    QVERIFY(count(two, "dep_push(0, 1)") > 0 && count(two, "dep_pop(0, 1)") > 0);  // load → compute
    QVERIFY(count(two, "dep_push(1, 0)") > 0 && count(two, "dep_pop(1, 0)") > 0);  // compute → load
    QVERIFY(count(two, "dep_push(1, 2)") > 0 && count(two, "dep_pop(1, 2)") > 0);  // compute → store
    QCOMPARE(count(two, "dep_push("), count(two, "dep_pop("));
    // The figures the lesson's text quotes (the simulator's cycles do not depend on the host).
    QCOMPARE(cycles["One virtual thread"], 522112.0);
    QCOMPARE(cycles["Two virtual threads"], 429828.0);
  }

  // The virtual threads lesson in the real main window: the model opens on accel-sim, the schedule
  // editor offers the scratchpads, and the roofline pane gets the accelerator's roofline from the
  // mediator's worker (each offloaded layer with 1 and 2 virtual threads).
  void virtual_threads_lesson_in_the_studio_window() {
    if (!target_available("accel-sim")) QSKIP("the accel_sim plugin is not in this build");
    QTemporaryDir home;
    test::isolate_studio("lessons_test", home.path());
    auto w = test::show_window(test::window_options(home.path()));
    w->start_lesson(QString::fromStdString(kLessons + "/virtual_threads.json"));
    QVERIFY(w->lesson_runner());
    QVERIFY(w->controller()->wait_until_idle(120000));
    QCOMPARE(w->controller()->document().target, std::string("accel-sim"));
    auto* schedule = dynamic_cast<ScheduleEditorPane*>(w->pane_by_name("schedule"));
    QVERIFY(schedule);
    const std::vector<std::string>& scopes = schedule->target_offer().scopes;
    QVERIFY(std::find(scopes.begin(), scopes.end(), "accel.wgt") != scopes.end());
    QVERIFY(w->mediator()->accel_roofline()->wait_until_idle(120000));
    auto* roofline = dynamic_cast<RooflinePane*>(w->pane_by_name("roofline"));
    QVERIFY(roofline);
    QVERIFY(roofline->shows_accelerator());
    QCOMPARE(roofline->arrow_count(), 2);
    w->lesson_runner()->go_to(w->lesson_runner()->page_count() - 1);
    QVERIFY(w->controller()->wait_until_idle(120000));
    QVERIFY(w->edit_loop()->wait_until_idle(120000));
    QVERIFY(w->mediator()->accel_roofline()->wait_until_idle(120000));
    QVERIFY(roofline->shows_accelerator());
  }

  // The lesson in the real main window: its first page opens the model on opencl (the target
  // picker follows), and the cooperative page is measured there.
  void cooperative_fetching_lesson_in_the_studio_window() {
    if (!named_on_command_line()) QSKIP("needs an OpenCL device: run by test_lessons_opencl");
    QTemporaryDir home;
    test::isolate_studio("lessons_test", home.path());
    auto w = test::show_window(test::window_options(home.path()));
    w->start_lesson(QString::fromStdString(kLessons + "/cooperative_fetching.json"));
    QVERIFY(w->lesson_runner());
    QVERIFY(w->controller()->wait_until_idle(kOpenClWaitMs));
    QCOMPARE(w->controller()->document().target, std::string("opencl"));
    auto* picker = w->findChild<QComboBox*>("target_picker");
    QVERIFY(picker);
    QCOMPARE(picker->currentText(), QStringLiteral("opencl"));
    w->lesson_runner()->go_to(w->lesson_runner()->page_count() - 1);
    QVERIFY(w->controller()->wait_until_idle(kOpenClWaitMs));
    QVERIFY(w->edit_loop()->wait_until_idle(kOpenClWaitMs));
    KernelMeasurementPtr m = w->edit_loop()->measurement(QString::fromStdString(w->lesson_runner()->page().kernel));
    QVERIFY2(m && m->verdict == KernelMeasurement::Verdict::kCorrect, m ? m->error.c_str() : "no measurement");
    QVERIFY2(QString::fromStdString(m->target).startsWith("opencl"), m->target.c_str());
    QVERIFY(w->lesson_runner()->result(w->lesson_runner()->page_index()).kernel);
  }
};

QTEST_MAIN(LessonsTest)
#include "test_lessons.moc"
