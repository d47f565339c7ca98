// The "done when", through the real main window: on the default sample, take the conv
// kernel, schedule it by hand (tile + vectorize + parallel) and watch the program, the assembly,
// the measured time and the roofline point change; undo restores the exact previous program; a
// crashing kernel costs a message, not the studio; the session keeps the hand schedule.
#include <QDockWidget>
#include <QPlainTextEdit>
#include <QSettings>
#include <QUndoStack>
#include <QtTest>

#include "app/studio/main_window.h"
#include "core/plugin/plugin_manager.h"
#include "studio_fixtures.h"
#include "studio_window_fixtures.h"
#include "views/edit/kernel_lowering.h"

using namespace tessel;
using namespace tessel::views;
using tessel::studio::MainWindow;

namespace {

constexpr int kWaitMs = 180000;

// The first conv's kernel: the direct conv2d_nchwc, or the output transform where winograd_convs
// split it (both element-wise outputs of rank 5, which the hand schedule below tiles).
QString conv_kernel(const StudioSnapshot& snap) {
  for (const FusionGroup& g : snap.fusion->groups)
    if (g.kernel_name.find("conv2d") != std::string::npos || g.kernel_name.find("winograd_output") != std::string::npos)
      return QString::fromStdString(g.kernel_name);
  return {};
}

QString artifact_text(const KernelMeasurement& m, const std::string& name) {
  for (const auto& [n, text] : m.artifacts)
    if (n == name) return QString::fromStdString(text);
  return {};
}

}  // namespace

class StudioKernelEditTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir home_;

  std::unique_ptr<MainWindow> open(const QString& file) {
    auto w = test::show_window(test::window_options(home_.path()));
    if (!test::open_and_wait(*w, file)) return nullptr;
    return w;
  }

  // Applies one edit as the user does (through the schedule editor) and waits for its measurement.
  static KernelMeasurementPtr edit_and_measure(MainWindow& w, const std::function<void()>& edit) {
    edit();
    if (!w.edit_loop()->wait_until_idle(kWaitMs)) return nullptr;
    return w.edit_loop()->measurement(w.selection()->kernel());
  }

 private Q_SLOTS:
  void initTestCase() {
    test::isolate_studio("studio_kernel_edit_test", home_.path());
    qputenv("TESSEL_MEASURE_ALLOW_INJECT", "1");  // inherited by the measuring process
    PluginManager::global().load_all();           // the default schedules ask the llvm target for its vector width
  }

  void a_hand_schedule_changes_program_assembly_time_and_roofline() {
    auto w = open(test::sample_model());
    QVERIFY(w);
    const QString kernel = conv_kernel(*w->controller()->snapshot());
    QVERIFY(!kernel.isEmpty());
    w->selection()->set_kernel(kernel);  // as a click on the conv in the graph does
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    ScheduleEditorPane* editor = w->panes().schedule;
    ProgramPane* program = w->panes().program;
    QCOMPARE(editor->kernel(), kernel);
    QVERIFY(program->lowering() && QString::fromStdString(program->lowering()->kernel) == kernel);

    // Start from the naive loops: an empty schedule typed in text mode.
    KernelMeasurementPtr naive = edit_and_measure(*w, [&] { QVERIFY(editor->apply_text("")); });
    QVERIFY(naive);
    QCOMPARE(naive->verdict, KernelMeasurement::Verdict::kCorrect);
    QVERIFY(naive->ms_min > 0);
    const std::string naive_program = program->current_program();
    const QString naive_asm = artifact_text(*naive, "asm");
    QVERIFY2(!naive_asm.isEmpty(), "the llvm plugin returns the kernel's assembly");
    QVERIFY2(program->artifact_names().contains("asm"), qPrintable(program->artifact_names().join(",")));
    QCOMPARE(program->artifact_edit("asm")->toPlainText(), naive_asm);

    // tile + vectorize + parallel on the kernel's output stage.
    std::string why;
    auto dag = kernel_dag(*w->controller()->snapshot(), kernel.toStdString(), &why);
    QVERIFY2(dag, why.c_str());
    const te::Tensor& out = dag->outputs.back();
    QVERIFY(out->axes.size() >= 3);
    auto axis = [&](size_t k) { return out->name + "." + out->axes[k].var->name; };
    const size_t rank = out->axes.size();
    using schedule::arg;
    const schedule::ScheduleStep tile =
        schedule::step("tile", {arg(axis(rank - 3)), arg(axis(rank - 2)), arg(int64_t{4}), arg(int64_t{4})});
    const schedule::ScheduleStep vectorize = schedule::step("vectorize", {arg(axis(rank - 1))});
    const schedule::ScheduleStep parallel = schedule::step("parallel", {arg(axis(rank - 3) + ".outer")});

    KernelMeasurementPtr tiled = edit_and_measure(*w, [&] { editor->add_step(tile); });
    QVERIFY(tiled && tiled->verdict == KernelMeasurement::Verdict::kCorrect);
    const std::string tiled_program = program->current_program();
    QVERIFY(tiled_program != naive_program);
    QVERIFY2(program->added_lines().join("\n").contains(".outer"), "the diff marks the new loops");

    KernelMeasurementPtr vectorized = edit_and_measure(*w, [&] { editor->add_step(vectorize); });
    QVERIFY(vectorized && vectorized->verdict == KernelMeasurement::Verdict::kCorrect);
    QVERIFY(program->added_lines().join("\n").contains("vectorized"));

    KernelMeasurementPtr parallelized = edit_and_measure(*w, [&] { editor->add_step(parallel); });
    QVERIFY(parallelized && parallelized->verdict == KernelMeasurement::Verdict::kCorrect);
    QVERIFY(program->added_lines().join("\n").contains("parallel"));
    QCOMPARE(editor->schedule().steps.size(), size_t{3});
    QVERIFY(parallelized->ms_min > 0);
    QVERIFY2(artifact_text(*parallelized, "asm") != naive_asm, "the assembly changed with the schedule");
    QVERIFY(parallelized->generation > naive->generation);
    // The roofline point moved, with an arrow from where it was.
    QVERIFY(w->panes().roofline->point_count() >= 1);
    QVERIFY(w->panes().roofline->has_arrow());
    QVERIFY(!w->panes().roofline->tooltip(kernel).isEmpty());

    // Undo restores the exact previous program.
    const std::string before_parallel = [&] {
      auto l = w->edit_loop()->lowering(kernel);
      return l->steps.at(l->steps.size() - 2).record.text();
    }();
    edit_and_measure(*w, [&] { editor->undo_stack()->undo(); });
    QCOMPARE(editor->schedule().steps.size(), size_t{2});
    QCOMPARE(program->current_program(), before_parallel);
    edit_and_measure(*w, [&] { editor->undo_stack()->redo(); });
    QCOMPARE(editor->schedule().steps.size(), size_t{3});

    // The session keeps the hand schedule; a new window reopens it.
    const QString session = home_.filePath("edited.tessel");
    w->controller()->save_as(session);
    const schedule::Schedule saved = editor->schedule();
    w.reset();
    auto reopened = open(session);
    QVERIFY(reopened);
    const auto& hand = reopened->edit_loop()->hand_schedules();
    QVERIFY(hand.count(kernel.toStdString()));
    QCOMPARE(hand.at(kernel.toStdString()), saved);
    reopened->selection()->set_kernel(kernel);
    QVERIFY(reopened->edit_loop()->wait_until_idle(kWaitMs));
    QCOMPARE(reopened->panes().schedule->schedule(), saved);
    QVERIFY(!reopened->edit_loop()->lowering(kernel)->is_default_schedule);
  }

  void a_crashing_kernel_is_reported_and_the_studio_goes_on() {
    auto w = open(test::sample_model());
    QVERIFY(w);
    const QString kernel = conv_kernel(*w->controller()->snapshot());
    w->selection()->set_kernel(kernel);
    QVERIFY(w->edit_loop()->wait_until_idle(kWaitMs));
    ScheduleEditorPane* editor = w->panes().schedule;

    w->edit_loop()->set_injected_fault("crash");
    KernelMeasurementPtr crashed = edit_and_measure(*w, [&] { QVERIFY(editor->apply_text("")); });
    QVERIFY(crashed);
    QCOMPARE(crashed->verdict, KernelMeasurement::Verdict::kFailed);
    QVERIFY2(QString::fromStdString(crashed->error).contains(kernel), crashed->error.c_str());
    QVERIFY2(editor->badge_text().startsWith(QString::fromUtf8("✗")), qPrintable(editor->badge_text()));
    QVERIFY(w->isVisible());

    // The next edit measures normally in a restarted process.
    w->edit_loop()->set_injected_fault("");
    KernelMeasurementPtr next = edit_and_measure(*w, [&] { editor->reset_to_default(); });
    QVERIFY(next);
    QCOMPARE(next->verdict, KernelMeasurement::Verdict::kCorrect);
    QVERIFY(w->edit_loop()->measuring_process_restarts() >= 1);
  }

  // Lessons > "Optimize a matmul step by step" drives the real panes: its pages open the model,
  // pick the kernel and set each schedule in the editor; each page is measured.
  void the_matmul_lesson_drives_the_real_panes() {
    studio::MainWindowOptions options = test::window_options(home_.path());
    options.recovery_path = home_.filePath("recovery-lesson.tessel");
    auto window = test::show_window(options);
    MainWindow& w = *window;
    w.start_lesson(options.lessons_dir + "/optimize_matmul.json");
    LessonRunner* runner = w.lesson_runner();
    QVERIFY(runner);
    QVERIFY(w.controller()->wait_until_idle(60000));
    QVERIFY(w.edit_loop()->wait_until_idle(kWaitMs));
    const QString kernel = QString::fromStdString(runner->page().kernel);
    QCOMPARE(w.selection()->kernel(), kernel);
    QCOMPARE(w.panes().schedule->kernel(), kernel);
    QVERIFY(w.panes().schedule->schedule().steps.empty());  // page 1: the naive loops
    while (runner->next()) {
      QVERIFY(w.controller()->wait_until_idle(60000));
      QVERIFY(w.edit_loop()->wait_until_idle(kWaitMs));
      const LessonPage& page = runner->page();
      if (page.schedule_action == LessonPage::ScheduleAction::kHand)
        QCOMPARE(w.panes().schedule->schedule(), page.schedule);
      QVERIFY2(!runner->result_text(runner->page_index()).empty(), page.title.c_str());
    }
    // The parallel page is faster than the naive loops it compares against.
    int parallel_page = -1;
    for (int k = 0; k < runner->page_count(); ++k)
      if (runner->lesson().pages[static_cast<size_t>(k)].title == "Parallel") parallel_page = k;
    QVERIFY(parallel_page > 0);
    QVERIFY(runner->speedup(parallel_page).has_value());
    QVERIFY(*runner->speedup(parallel_page) > 1.0);
  }
};

QTEST_MAIN(StudioKernelEditTest)
#include "test_studio_kernel_edit.moc"
