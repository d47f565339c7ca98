// The program pane on real lowerings (core program_after_each_step / _each_pass): a split step
// shows new loops marked as added; scrubbing, hiding steps that changed nothing, the passes, the
// side-by-side alignment; loop lines pick the step that made them and steps mark their lines;
// artifact tabs with find; and the schedule editor wired to it as the studio wires them, where
// undo brings back the exact previous program.
#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QSlider>
#include <QTabWidget>
#include <QTextBlock>
#include <QUndoStack>
#include <QElapsedTimer>
#include <QtTest>

#include "core/lower/line_diff.h"
#include "core/lower/step_views.h"
#include "core/schedule/default_schedule.h"
#include "core/te/op_builders.h"
#include "studio_fixtures.h"
#include "views/program/find_bar.h"
#include "views/edit/kernel_lowering.h"
#include "views/program/program_diff.h"
#include "views/program/program_pane.h"
#include "views/program/program_step_model.h"
#include "views/schedule/schedule_editor_pane.h"

using namespace tessel;
using namespace tessel::views;
using schedule::arg;
using schedule::step;

namespace {

// What the edit loop publishes for one edit: the program after every step, the passes, the error.
KernelLoweringPtr lower_kernel(const std::string& kernel, const te::ComputeDag& dag, const schedule::Schedule& s,
                               int64_t generation) {
  return lower_schedule(kernel, dag, s, false, generation);
}

bool any_line(const QStringList& lines, const QString& needle) {
  for (const QString& l : lines)
    if (l.contains(needle)) return true;
  return false;
}

// Block number of the first line of the inline view containing `needle` that is not a removed
// one ("- "), -1 when none.
int line_of(QPlainTextEdit* edit, const QString& needle) {
  for (QTextBlock b = edit->document()->begin(); b.isValid(); b = b.next())
    if (b.text().contains(needle) && !b.text().startsWith("- ")) return b.blockNumber();
  return -1;
}

}  // namespace

class ProgramPaneTest : public QObject {
  Q_OBJECT

 private:
  te::ComputeDag matmul_ = te::matmul_dag(64, 32, 16);

 private Q_SLOTS:
  void inline_and_side_by_side_diffs_line_up() {
    std::string before = "a\nb\nc\nd\n", after = "a\nx\ny\nc\nd\ne\n";
    std::vector<DiffLine> d = inline_diff(before, after);
    int added = 0, removed = 0, same = 0;
    for (const DiffLine& l : d) {
      added += l.kind == DiffLine::Kind::kAdded;
      removed += l.kind == DiffLine::Kind::kRemoved;
      same += l.kind == DiffLine::Kind::kSame;
    }
    QCOMPARE(added, 3);  // x, y, e
    QCOMPARE(removed, 1);  // b
    QCOMPARE(same, 3);
    SideBySide sbs = side_by_side(d);
    QCOMPARE(sbs.left.size(), sbs.right.size());
    for (size_t i = 0; i < sbs.left.size(); ++i)
      if (sbs.left[i].kind == DiffLine::Kind::kSame) QCOMPARE(sbs.left[i].text, sbs.right[i].text);
    QCOMPARE(inline_diff("p\nq\n", "p\nq\n").size(), size_t{2});
    // Too large for the UI thread: the worker's hunks are shown instead, gaps as one line.
    std::string many_before, many_after;
    for (int i = 0; i < 40; ++i) {
      many_before += "line " + std::to_string(i) + "\n";
      many_after += (i == 5 || i == 30 ? "changed " : "line ") + std::to_string(i) + "\n";
    }
    std::string hunks = lower::line_diff(many_before, many_after);
    std::vector<DiffLine> full = inline_diff(many_before, many_after, hunks);
    QCOMPARE(full.size(), size_t{42});  // every line, two of them twice (removed and added)
    std::vector<DiffLine> capped = inline_diff(many_before, many_after, hunks, /*max_cells=*/10);
    QVERIFY(capped.size() < full.size());
    int gaps = 0, changed = 0;
    for (const DiffLine& l : capped) {
      gaps += l.text == "\xe2\x8b\xaf";
      changed += l.kind != DiffLine::Kind::kSame;
    }
    QCOMPARE(gaps, 1);
    QCOMPARE(changed, 4);
    QCOMPARE(loop_var_of_line("    for i.outer in 0..8 parallel {"), std::string("i.outer"));
    QCOMPARE(loop_var_of_line("  C[i] = 0"), std::string());
  }

  void a_split_step_adds_loops_marked_in_the_diff() {
    ProgramPane pane;
    pane.show_lowering(lower_kernel("matmul", matmul_, {}, 1));
    const std::string unscheduled = pane.current_program();
    QVERIFY(unscheduled.find("for i in 0..64") != std::string::npos);
    QVERIFY(pane.added_lines().isEmpty());
    schedule::Schedule split{{step("split", {arg("C.i"), arg(8)})}};
    KernelLoweringPtr low = lower_kernel("matmul", matmul_, split, 2);
    pane.show_lowering(low);
    QCOMPARE(pane.current_view(), 1);  // the newest step is shown
    QVERIFY(pane.current_program() != unscheduled);
    QCOMPARE(pane.current_program(), low->steps[1].record.text());
    QVERIFY2(any_line(pane.added_lines(), "for i.outer in 0..8"), qPrintable(pane.added_lines().join('\n')));
    QVERIFY(any_line(pane.added_lines(), "for i.inner in 0..8"));
    QVERIFY(any_line(pane.removed_lines(), "for i in 0..64"));
    // In the text: marked lines and a coloured background on them.
    int outer = line_of(pane.program_edit(), "for i.outer");
    QVERIFY(outer >= 0);
    QVERIFY(pane.program_edit()->document()->findBlockByNumber(outer).text().startsWith("+ "));
    bool marked = false;
    for (const QTextEdit::ExtraSelection& s : pane.program_edit()->extraSelections())
      marked |= s.cursor.blockNumber() == outer && s.format.background().color() != QColor();
    QVERIFY(marked);
    // Side by side: the removed loop on the left, the new ones on the right, aligned.
    pane.set_diff_mode(ProgramPane::DiffMode::kSideBySide);
    QVERIFY(any_line(pane.added_lines(), "for i.outer"));
    QList<QPlainTextEdit*> edits = pane.findChildren<QPlainTextEdit*>();
    QVERIFY(edits.size() >= 3);
  }

  void scrubbing_hiding_unchanged_steps_and_passes() {
    ProgramPane pane;
    ProgramStepModel* model = pane.model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    // compute_root of a stage already at the root changes nothing.
    schedule::Schedule s{{step("split", {arg("C.i"), arg(8)}), step("compute_root", {arg("C")}),
                          step("parallel", {arg("C.i.outer")})}};
    KernelLoweringPtr low = lower_kernel("matmul", matmul_, s, 1);
    QVERIFY(low->error.empty());
    QVERIFY(!low->steps[2].record.changed);
    pane.show_lowering(low);
    QCOMPARE(model->rowCount(), 4);
    QCOMPARE(pane.slider()->maximum(), 3);
    pane.slider()->setValue(0);
    QCOMPARE(pane.current_view(), 0);
    QCOMPARE(pane.current_program(), low->steps[0].record.text());
    pane.step_list()->setCurrentIndex(model->index(1));
    QCOMPARE(pane.current_view(), 1);
    QCOMPARE(pane.slider()->value(), 1);
    pane.set_hide_unchanged(true);
    QCOMPARE(model->rowCount(), 3);
    pane.slider()->setValue(2);
    QCOMPARE(pane.current_view(), 3);  // the hidden view 2 is skipped
    QVERIFY(any_line(pane.added_lines(), "parallel"));
    pane.set_source(ProgramPane::Source::kPasses);
    QCOMPARE(pane.views().size(), low->passes.size());
    QVERIFY(pane.views().size() > 2);
    QCOMPARE(pane.current_program(), low->passes.back().record.text());
  }

  void loops_pick_their_step_and_steps_mark_their_lines() {
    ProgramPane pane;
    std::vector<int> picked;
    pane.on_step_picked = [&](int step) { picked.push_back(step); };
    schedule::Schedule s{{step("split", {arg("C.i"), arg(8)}), step("split", {arg("C.j"), arg(4)}),
                          step("parallel", {arg("C.i.outer")})}};
    pane.show_lowering(lower_kernel("matmul", matmul_, s, 1));
    QCOMPARE(pane.current_view(), 3);
    // A click on a loop line moves the cursor there: the pane names the step that made the loop.
    auto click = [&](const QString& needle) {
      int line = line_of(pane.program_edit(), needle);
      QVERIFY2(line >= 0, qPrintable(needle));
      QTextCursor c(pane.program_edit()->document()->findBlockByNumber(line));
      pane.program_edit()->setTextCursor(c);
    };
    click("for j.outer");
    QVERIFY(picked == std::vector<int>{1});
    click("for i.outer");  // made by step 0, made parallel by step 2: the split made it
    QCOMPARE(picked.back(), 0);
    click("for k in");
    QCOMPARE(picked.back(), -1);  // in the unscheduled program already
    QCOMPARE(pane.picked_step(), -1);
    // The reverse: a step shows its program and marks what it added.
    pane.highlight_step(1);
    QCOMPARE(pane.current_view(), 2);
    QVERIFY(any_line(pane.added_lines(), "for j.outer"));
    QVERIFY(!any_line(pane.added_lines(), "for i.outer"));
  }

  void a_failing_step_is_shown_not_crashed_on() {
    ProgramPane pane;
    schedule::Schedule s{{step("split", {arg("C.i"), arg(8)}), step("fuse", {arg("C.i.outer"), arg("C.k")})}};
    KernelLoweringPtr low = lower_kernel("matmul", matmul_, s, 1);
    QVERIFY(!low->error.empty());
    pane.show_lowering(low);
    QCOMPARE(pane.current_view(), 2);
    QVERIFY(pane.current_program().empty());
    QVERIFY(pane.findChild<QPlainTextEdit*>("program_inline")->toPlainText().contains("for i.outer"));
    pane.set_source(ProgramPane::Source::kPasses);  // no passes for an invalid schedule
    QVERIFY(pane.views().empty());
  }

  void artifacts_get_tabs_with_find() {
    ProgramPane pane;
    pane.show_lowering(lower_kernel("matmul", matmul_, {}, 2));
    auto m = std::make_shared<KernelMeasurement>();
    m->kernel = "matmul";
    m->generation = 2;
    m->artifacts = {{"llvm_ir", "define void @matmul(ptr %A) {\nentry:\n  ret void\n}\n"},
                    {"asm", "matmul:\n  vfmadd231ps %zmm0, %zmm1, %zmm2\n  ret\n"}};
    pane.show_measurement(m);
    QCOMPARE(pane.artifact_names(), (QStringList{"llvm_ir", "asm"}));
    QCOMPARE(pane.tabs()->tabText(1), QString("LLVM IR"));
    QVERIFY(pane.artifact_edit("asm")->toPlainText().contains("vfmadd231ps"));
    pane.tabs()->setCurrentIndex(2);
    FindBar* find = pane.find_bar();
    find->open();
    QVERIFY(find->find("ret"));
    QCOMPARE(find->count_matches("ret"), 1);
    QCOMPARE(pane.artifact_edit("asm")->textCursor().selectedText(), QString("ret"));
    QVERIFY(!find->find("nothing_like_this"));
    // An older edit's measurement or another kernel's is not shown.
    auto old = std::make_shared<KernelMeasurement>(*m);
    old->generation = 1;
    old->artifacts = {{"c_source", "void f() {}"}};
    pane.show_measurement(old);
    QCOMPARE(pane.artifact_names().size(), 2);
    pane.show_lowering(lower_kernel("other", te::relu_dag({8}), {}, 1));
    QVERIFY(pane.artifact_names().isEmpty());
  }

  void editor_and_program_wired_like_the_studio_undo_restores_the_program() {
    // The studio's loop, synchronously: an edit lowers and both panes get the result.
    ScheduleEditorPane editor;
    ProgramPane program;
    int64_t generation = 0;
    editor.on_schedule_edited = [&](const QString& k, const schedule::Schedule& s) {
      KernelLoweringPtr low = lower_kernel(k.toStdString(), matmul_, s, ++generation);
      editor.show_lowering(low);
      program.show_lowering(low);
    };
    editor.on_step_selected = [&](int step) { program.highlight_step(step); };
    program.on_step_picked = [&](int step) { editor.highlight_step(step); };
    schedule::Schedule start{{step("split", {arg("C.j"), arg(8)})}};
    editor.set_kernel("matmul", matmul_, start, schedule::default_cpu_schedule(matmul_));
    editor.on_schedule_edited("matmul", start);
    const std::string before = program.current_program();
    // The user adds a split from the text mode.
    QVERIFY(editor.apply_text("split(C.j, 8)\nsplit(C.i, 16)\n"));
    QVERIFY(program.current_program() != before);
    QVERIFY(any_line(program.added_lines(), "for i.outer in 0..4"));
    // A click on the new loop selects its step in the editor.
    int line = line_of(program.program_edit(), "for i.outer");
    program.pick_line(line);
    QCOMPARE(editor.model()->highlight_row(), 1);
    // Undo: exactly the previous schedule and program.
    editor.undo_stack()->undo();
    QVERIFY(editor.schedule() == start);
    QVERIFY(program.lowering()->schedule == start);
    QCOMPARE(program.current_program(), before);
    // Selecting a step in the editor scrubs the program pane to it.
    editor.step_view()->setCurrentIndex(editor.model()->index(0));
    QCOMPARE(program.current_view(), 1);
  }

  void ui_work_per_edit_on_a_sample_conv_kernel() {
    // What the UI thread does per edit (replay for the forms, diff and draw the program) next to
    // what the worker does (lower every step); printed for the record, bounded loosely so a busy
    // machine does not fail it.
    StudioSnapshotPtr snap = test::compile_now(test::sample_model("resnet_block"), "ref", test::direct_convs());
    QVERIFY(snap && snap->fusion);
    std::string kernel, why;
    for (const FusionGroup& g : snap->fusion->groups)
      if (g.kernel_name.find("conv") != std::string::npos) {
        kernel = g.kernel_name;
        break;
      }
    QVERIFY(!kernel.empty());
    std::optional<te::ComputeDag> dag = kernel_dag(*snap, kernel, &why);
    QVERIFY2(dag, why.c_str());
    schedule::Schedule def = schedule::default_cpu_schedule(*dag);
    QElapsedTimer t;
    t.start();
    KernelLoweringPtr low = lower_kernel(kernel, *dag, def, 1);
    const double worker_ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    QVERIFY2(low->error.empty(), low->error.c_str());
    ScheduleEditorPane editor;
    ProgramPane program;
    t.restart();
    editor.set_kernel(QString::fromStdString(kernel), *dag, def, def);
    editor.show_lowering(low);
    program.show_lowering(low);
    const double open_ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    t.restart();
    editor.set_step_enabled(0, false);  // an edit: replay, forms, list, text
    const double edit_ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    t.restart();
    for (int v = 0; v < static_cast<int>(program.views().size()); ++v) program.show_view(v);
    const double scrub_ms = static_cast<double>(t.nsecsElapsed()) / 1e6 / static_cast<double>(program.views().size());
    qInfo("%s: %zu steps, %zu program lines; worker lowering of every step %.1f ms; UI: open %.1f ms, edit %.1f ms, "
          "scrub %.1f ms per step",
          kernel.c_str(), def.steps.size(), static_cast<size_t>(program.program_edit()->blockCount()), worker_ms, open_ms,
          edit_ms, scrub_ms);
    QVERIFY(open_ms < 2000 && edit_ms < 2000 && scrub_ms < 2000);
  }

  void screenshot_of_the_pane() {
    te::Conv2dParams p;
    p.in_channels = 8;
    p.out_channels = 16;
    te::ComputeDag conv = te::conv2d_dag(p);
    KernelLoweringPtr low = lower_kernel("fused_conv2d_1", conv, schedule::default_cpu_schedule(conv), 1);
    QVERIFY2(low->error.empty(), low->error.c_str());
    ProgramPane pane;
    pane.show_lowering(low);
    pane.highlight_step(0);
    pane.resize(900, 600);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QImage shot = pane.grab().toImage();
    QDir().mkpath(TESSEL_BINARY_DIR "/tests/views/screenshots");
    const QString path = TESSEL_BINARY_DIR "/tests/views/screenshots/program_pane.png";
    QVERIFY(shot.save(path));
    QImage back(path);
    QCOMPARE(back.size(), QSize(900, 600));
    QVERIFY(test::distinct_colors(back) > 8);
    QVERIFY(!pane.added_lines().isEmpty());
  }
};

QTEST_MAIN(ProgramPaneTest)
#include "test_program_pane.moc"
