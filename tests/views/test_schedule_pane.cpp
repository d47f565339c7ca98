// The schedule editor pane driven as a user drives it: the palette and its argument forms, the
// text mode, disable / reorder / delete, undo, reset, copy; errors of real lowerings shown on the
// failing step; the measurement badge; a screenshot. Lowerings are built here with the core's
// program_after_each_step, as the edit loop builds them on its worker.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QListView>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextLayout>
#include <QUndoStack>
#include <QtTest>

#include "core/lower/step_views.h"
#include "core/plugin/plugin_manager.h"
#include "core/schedule/default_schedule.h"
#include "core/te/op_builders.h"
#include "studio_fixtures.h"
#include "views/edit/kernel_lowering.h"
#include "views/schedule/schedule_editor_pane.h"
#include "views/schedule/step_choices.h"
#include "views/schedule/step_form.h"

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

}  // namespace

class SchedulePaneTest : public QObject {
  Q_OBJECT

 private:
  te::ComputeDag matmul_ = te::matmul_dag(64, 32, 16);
  std::vector<schedule::Schedule> edits_;
  std::vector<QString> resets_;

  std::unique_ptr<ScheduleEditorPane> make_pane(schedule::Schedule current = {}) {
    auto pane = std::make_unique<ScheduleEditorPane>();
    edits_.clear();
    resets_.clear();
    pane->on_schedule_edited = [this](const QString& k, const schedule::Schedule& s) {
      QCOMPARE(k, QString("matmul"));
      edits_.push_back(s);
    };
    pane->on_reset = [this](const QString& k) { resets_.push_back(k); };
    pane->set_kernel("matmul", matmul_, std::move(current), schedule::default_cpu_schedule(matmul_));
    return pane;
  }

 private Q_SLOTS:
  void choices_replay_the_steps_before_the_edited_one() {
    schedule::Schedule s{{step("split", {arg("C.i"), arg(8)}), step("fuse", {arg("C.i.outer"), arg("C.i.inner")})}};
    StepChoices before = step_choices(matmul_, s, 0);
    QVERIFY(before.error.empty());
    QCOMPARE(before.find_axis("C.i")->extent, int64_t{64});
    QCOMPARE(before.find_axis("C.k")->extent, int64_t{16});
    QVERIFY(before.find_axis("C.k")->is_reduce);
    QVERIFY(before.find_axis("C.i.outer") == nullptr);
    StepChoices after_split = step_choices(matmul_, s, 1);
    QCOMPARE(after_split.find_axis("C.i.outer")->extent, int64_t{8});
    QCOMPARE(after_split.find_axis("C.i.inner")->extent, int64_t{8});
    QVERIFY(after_split.find_axis("C.i") == nullptr);  // no longer a loop
    StepChoices after_fuse = step_choices(matmul_, s, 2);
    QVERIFY(after_fuse.find_axis("C.i.outer.i.inner.fused"));
    QCOMPARE(after_fuse.find_axis("C.i.outer.i.inner.fused")->extent, int64_t{64});
    // nparts: the outer loop has the given number of iterations, the inner one the rest (ceil).
    schedule::Schedule np{{step("split", {arg("C.j"), schedule::keyed("nparts", 3)})}};
    StepChoices n = step_choices(matmul_, np, 1);
    QCOMPARE(n.find_axis("C.j.outer")->extent, int64_t{3});
    QCOMPARE(n.find_axis("C.j.inner")->extent, int64_t{11});
    // A bad step stops the replay and is named with its number.
    schedule::Schedule bad{{step("split", {arg("C.i"), arg(8)}), step("vectorize", {arg("C.nope")})}};
    StepChoices b = step_choices(matmul_, bad, 2);
    QCOMPARE(b.applied, 1);
    QVERIFY2(QString::fromStdString(b.error).startsWith("step 2 vectorize(C.nope)"), b.error.c_str());
    QVERIFY(b.find_axis("C.i.outer"));  // the state of the good steps before it
    // An inlined stage offers no loops any more.
    te::Conv2dParams p;
    te::ComputeDag conv = te::conv2d_dag(p);
    schedule::Schedule inl{{step("compute_inline", {arg("pad")})}};
    QVERIFY(step_choices(conv, inl, 0).find_axis("pad.n"));
    QVERIFY(!step_choices(conv, inl, 1).find_axis("pad.n"));
    QVERIFY(step_choices(conv, inl, 1).find_axis("conv.f"));
  }

  void split_from_the_palette_reports_the_new_schedule() {
    auto pane = make_pane();
    QAbstractItemModelTester tester(pane->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    StepForm* form = pane->form();
    QCOMPARE(form->palette()->count(), static_cast<int>(schedule::step_kinds().size()));
    form->palette()->setCurrentIndex(form->palette()->findData("split"));
    auto* axis = form->findChild<QComboBox*>("arg0");
    auto* factor = form->findChild<QSpinBox*>("arg1");
    QVERIFY(axis && factor);
    // Only the loops that exist are offered, with their extents.
    QStringList offered;
    for (int i = 0; i < axis->count(); ++i) offered << axis->itemData(i).toString();
    QCOMPARE(offered, (QStringList{"C.i", "C.j", "C.k"}));
    QVERIFY(axis->itemText(0).contains("extent 64"));
    axis->setCurrentIndex(axis->findData("C.j"));
    QCOMPARE(factor->maximum(), 32);  // bounded by C.j's extent
    factor->setValue(8);
    QTest::mouseClick(form->add_button(), Qt::LeftButton);
    QCOMPARE(edits_.size(), size_t{1});
    QVERIFY(edits_.back() == (schedule::Schedule{{step("split", {arg("C.j"), arg(8)})}}));
    QCOMPARE(pane->model()->rowCount(), 1);
    QCOMPARE(pane->text_edit()->toPlainText(), QString("split(C.j, 8)\n"));  // the text mode follows
    // The form now offers the split's loops (appending after the last step).
    axis = form->findChild<QComboBox*>("arg0");
    offered.clear();
    for (int i = 0; i < axis->count(); ++i) offered << axis->itemData(i).toString();
    QVERIFY(offered.contains("C.j.outer") && offered.contains("C.j.inner") && !offered.contains("C.j"));
    QVERIFY(pane->error_text().isEmpty());
  }

  void every_kind_has_a_form_whose_defaults_are_valid_steps() {
    // The forms offer only what exists, so their first choices make a step that applies (the
    // exceptions need a state a fresh matmul does not have: double_buffer a compute_at stage,
    // tensorize a loop nest shaped like the intrinsic).
    auto pane = make_pane();
    StepForm* form = pane->form();
    QStringList failed, disabled;
    for (const schedule::StepKindInfo& k : schedule::step_kinds()) {
      form->set_kind(k.name);
      QCOMPARE(form->kind(), QString(k.name));
      if (!form->add_button()->isEnabled()) {
        disabled << k.name;
        continue;
      }
      schedule::ScheduleStep s = form->current_step();
      QCOMPARE(schedule::parse_step(schedule::to_string(s)), s);  // well-formed text
      schedule::ScheduleState state = schedule::initial_state(matmul_);
      try {
        schedule::apply_step(state, s);
      } catch (const Error& e) {
        failed << QString("%1: %2").arg(QString::fromStdString(schedule::to_string(s)), e.what());
      }
    }
    // matmul has no stage besides its output: nothing to compute_at, inline or give a scope.
    QCOMPARE(disabled, (QStringList{"compute_at", "compute_inline", "set_scope"}));
    for (const QString& f : failed)
      QVERIFY2(f.startsWith("double_buffer(") || f.startsWith("tensorize("), qPrintable(failed.join('\n')));
  }

  // The forms offer the session target's memory scopes and only the tensor intrinsics it runs, as
  // its kind declares them: accel-sim its scratchpads and the int8 GEMM of its core's size, a GPU
  // kind shared/local and no intrinsic, a CPU kind (declaring none) the generic scopes and all.
  void choices_offer_the_targets_scopes_and_intrinsics() {
    PluginManager::global().load_all();
    const TargetOffer generic = generic_offer();
    QCOMPARE(generic.scopes, (std::vector<std::string>{"global", "shared", "local"}));
    QVERIFY(generic.intrinsics.size() >= 4);
    QCOMPARE(target_offer("ref").scopes, generic.scopes);
    QCOMPARE(target_offer("ref").intrinsics, generic.intrinsics);
    QCOMPARE(target_offer("no-such-kind").scopes, generic.scopes);  // a plugin not loaded here
    const std::vector<std::string> kinds = TargetKindRegistry::global().names();
    auto has = [&](const char* kind) { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); };
    if (has("opencl")) {
      QCOMPARE(target_offer("opencl").scopes, generic.scopes);
      QVERIFY(target_offer("opencl").intrinsics.empty());
    }
    if (!has("accel-sim")) QSKIP("the accel_sim plugin is not in this build");
    const TargetOffer accel = target_offer("accel-sim");
    QCOMPARE(accel.scopes, (std::vector<std::string>{"global", "accel.inp", "accel.wgt", "accel.acc"}));
    QCOMPARE(accel.intrinsics, std::vector<std::string>{"gemm_16x16x16_i8"});
    QCOMPARE(target_offer("accel-sim -gemm=8").intrinsics, std::vector<std::string>{"gemm_8x8x8_i8"});
    QCOMPARE(step_choices(matmul_, {}, 0, accel).scopes, accel.scopes);

    // The pane's forms: the first intrinsic offered is the accelerator's, the scopes its scratchpads.
    auto pane = make_pane();
    StepForm* form = pane->form();
    form->set_kind("tensorize");
    QCOMPARE(schedule::to_string(form->current_step()).find("gemm_16x16x16_f32") != std::string::npos, true);
    pane->set_target("accel-sim");
    QCOMPARE(pane->target_offer().scopes, accel.scopes);
    form->set_kind("tensorize");
    QVERIFY2(schedule::to_string(form->current_step()).find("gemm_16x16x16_i8") != std::string::npos,
             schedule::to_string(form->current_step()).c_str());
    form->set_kind("cache_read");
    QStringList scopes;
    for (QComboBox* combo : form->findChildren<QComboBox*>())
      for (int i = 0; i < combo->count(); ++i)
        if (combo->itemData(i).toString().startsWith("accel.") || combo->itemData(i).toString() == "shared")
          scopes << combo->itemData(i).toString();
    QCOMPARE(scopes, QStringList({"accel.inp", "accel.wgt", "accel.acc"}));
    pane->set_target("ref");
    QCOMPARE(pane->target_offer().scopes, generic.scopes);
  }

  void undo_restores_the_exact_previous_schedule() {
    schedule::Schedule start{{step("split", {arg("C.i"), arg(16)})}};
    auto pane = make_pane(start);
    QVERIFY(pane->apply_text("split(C.i, 16)\nparallel(C.i.outer)\n"));  // the text mode
    QCOMPARE(edits_.size(), size_t{1});
    QCOMPARE(edits_.back().steps.size(), size_t{2});
    pane->add_step(step("vectorize", {arg("C.j")}));
    QCOMPARE(edits_.size(), size_t{2});
    QCOMPARE(pane->undo_stack()->count(), 2);
    pane->undo_stack()->undo();
    QVERIFY(edits_.back() == pane->schedule());
    QCOMPARE(QString::fromStdString(schedule::to_text(pane->schedule())),
             QString("split(C.i, 16)\nparallel(C.i.outer)\n"));
    pane->undo_stack()->undo();
    QVERIFY(edits_.back() == start);
    QVERIFY(pane->schedule() == start);
    QCOMPARE(pane->text_edit()->toPlainText(), QString("split(C.i, 16)\n"));
    pane->undo_stack()->redo();
    QCOMPARE(edits_.back().steps.size(), size_t{2});
  }

  void invalid_step_shows_its_error_on_that_step() {
    auto pane = make_pane();
    pane->add_step(step("split", {arg("C.i"), arg(8)}));
    pane->add_step(step("split", {arg("C.nope"), arg(4)}));
    // At once, from replaying the steps: row 2 is marked.
    QCOMPARE(pane->model()->error_row(), 1);
    QVERIFY(pane->error_text().contains("step 2 split(C.nope, 4)"));
    // The lowering's own error, mapped to the row: a disabled step before it shifts the rows.
    pane->add_step(step("unroll", {arg("C.k")}), 0);
    pane->set_step_enabled(0, false);
    QCOMPARE(pane->schedule().steps.size(), size_t{2});
    KernelLoweringPtr low = lower_kernel("matmul", matmul_, pane->schedule(), 5);
    QCOMPARE(low->error_step, 1);
    QVERIFY(low->error.find("C.nope") != std::string::npos);
    pane->show_lowering(low);
    QCOMPARE(pane->model()->error_row(), 2);
    QString shown = pane->model()->data(pane->model()->index(2), Qt::DisplayRole).toString();
    QVERIFY2(shown.contains(QString::fromUtf8("✗")) && shown.contains("C.nope"), qPrintable(shown));
    QCOMPARE(pane->model()->data(pane->model()->index(2), Qt::ToolTipRole).toString(),
             QString::fromStdString(low->error));
    // A lowering of an older generation is dropped; a fixed schedule clears the marks.
    pane->remove_step(2);
    pane->show_lowering(lower_kernel("matmul", matmul_, pane->schedule(), 4));
    QCOMPARE(pane->model()->error_row(), -1);
    pane->show_lowering(lower_kernel("matmul", matmul_, pane->schedule(), 6));
    QCOMPARE(pane->model()->error_row(), -1);
    QVERIFY(pane->error_text().isEmpty());
  }

  void text_mode_marks_a_line_that_does_not_parse() {
    auto pane = make_pane();
    QVERIFY(!pane->apply_text("split(C.i, 8)\nbogus(C.i)\n"));
    QVERIFY2(pane->error_text().contains("line 2"), qPrintable(pane->error_text()));
    QVERIFY(pane->error_text().contains("unknown step kind 'bogus'"));
    QVERIFY(edits_.empty());  // nothing applied
    QVERIFY(pane->schedule().steps.empty());
    // The marker: line 2 is underlined with a wave, line 1 is not.
    auto waved = [&](int block) {
      QTextBlock b = pane->text_edit()->document()->findBlockByNumber(block);
      if (!b.isValid() || !b.layout()) return false;
      for (const QTextLayout::FormatRange& r : b.layout()->formats())
        if (r.format.underlineStyle() == QTextCharFormat::WaveUnderline) return true;
      return false;
    };
    QVERIFY(waved(1));
    QVERIFY(!waved(0));
    // A lowering error lands on its line in the text mode too.
    QVERIFY(pane->apply_text("split(C.i, 8)\n\n# a comment\nvectorize(C.nope)\n"));
    QVERIFY(pane->error_text().contains("C.nope"));
    QVERIFY(waved(3) && !waved(0) && !waved(1));
    pane->modes()->setCurrentIndex(1);
    pane->resize(560, 520);
    pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(pane.get()));
    QDir().mkpath(TESSEL_BINARY_DIR "/tests/views/screenshots");
    QVERIFY(pane->grab().save(TESSEL_BINARY_DIR "/tests/views/screenshots/schedule_pane_text.png"));
    // Comments and disabled steps are part of the text form.
    QVERIFY(pane->apply_text("# tile first\nsplit(C.i, 8)\n# disabled: parallel(C.i.outer)\n"));
    QCOMPARE(pane->entries().size(), size_t{2});
    QVERIFY(!pane->entries()[1].enabled);
    QVERIFY(edits_.back() == (schedule::Schedule{{step("split", {arg("C.i"), arg(8)})}}));
    QVERIFY(pane->error_text().isEmpty());
    QCOMPARE(QString::fromStdString(pane->text_form("matmul")),
             QString("split(C.i, 8)\n# disabled: parallel(C.i.outer)\n"));
  }

  void disable_reorder_delete_reset_and_copy() {
    auto pane = make_pane();
    QAbstractItemModelTester tester(pane->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    pane->apply_text("split(C.i, 8)\nsplit(C.j, 4)\nparallel(C.i.outer)\n");
    // The check box disables a step: kept in the list, left out of the schedule.
    QVERIFY(pane->model()->setData(pane->model()->index(1), Qt::Unchecked, Qt::CheckStateRole));
    QCOMPARE(edits_.back().steps.size(), size_t{2});
    QCOMPARE(pane->model()->rowCount(), 3);
    // Drag and drop: the view calls moveRow; the pane makes it a command.
    QVERIFY(pane->model()->moveRow({}, 2, {}, 1));
    QTRY_COMPARE(schedule::to_string(pane->entries()[1].step), std::string("parallel(C.i.outer)"));
    QVERIFY(!pane->entries()[2].enabled);
    // The same through the mime data (a drop between rows): step 3 back to the front.
    std::unique_ptr<QMimeData> drag(pane->model()->mimeData({pane->model()->index(2)}));
    QVERIFY(pane->model()->dropMimeData(drag.get(), Qt::MoveAction, 0, 0, {}));
    QTRY_COMPARE(schedule::to_string(pane->entries()[0].step), std::string("split(C.j, 4)"));
    QVERIFY(!pane->entries()[0].enabled);
    pane->undo_stack()->undo();
    QCOMPARE(schedule::to_string(pane->entries()[2].step), std::string("split(C.j, 4)"));
    pane->remove_step(2);
    QCOMPARE(pane->entries().size(), size_t{2});
    pane->reset_to_default();
    QCOMPARE(resets_.size(), size_t{1});
    QVERIFY(pane->schedule() == schedule::default_cpu_schedule(matmul_));
    pane->undo_stack()->undo();  // back from the reset: the hand schedule is sent again
    QCOMPARE(QString::fromStdString(schedule::to_text(edits_.back())), QString("split(C.i, 8)\nparallel(C.i.outer)\n"));
    std::vector<std::pair<QString, schedule::Schedule>> copies;
    pane->same_shape_kernels = [](const QString&) { return QStringList{"matmul", "matmul_2", "matmul_3"}; };
    pane->on_copy_schedule = [&](const QString& k, const schedule::Schedule& s) { copies.emplace_back(k, s); };
    pane->copy_schedule_to(pane->same_shape_kernels("matmul"));
    QCOMPARE(copies.size(), size_t{2});  // not onto itself
    QCOMPARE(copies[0].first, QString("matmul_2"));
    QVERIFY(copies[1].second == pane->schedule());
  }

  void kernels_keep_their_own_steps_and_history() {
    auto pane = make_pane();
    pane->add_step(step("split", {arg("C.i"), arg(8)}));
    pane->set_step_enabled(0, false);
    te::ComputeDag other = te::relu_dag({4, 16});
    pane->set_kernel("relu", other, {}, schedule::default_cpu_schedule(other));
    QVERIFY(pane->entries().empty());
    QCOMPARE(pane->undo_stack()->count(), 0);
    pane->set_kernel("matmul", matmul_, {}, schedule::default_cpu_schedule(matmul_));
    QCOMPARE(pane->entries().size(), size_t{1});  // the disabled step is still there
    QCOMPARE(pane->undo_stack()->count(), 2);
    // restore_text (a loaded session) brings disabled steps back before the kernel is shown.
    ScheduleEditorPane fresh;
    fresh.restore_text("matmul", pane->text_form("matmul"));
    fresh.set_kernel("matmul", matmul_, {}, {});
    QCOMPARE(fresh.entries().size(), size_t{1});
    QVERIFY(!fresh.entries()[0].enabled);
  }

  void same_shape_kernels_of_a_sample_model() {
    QVERIFY(same_shape(te::matmul_dag(64, 32, 16), te::matmul_dag(64, 32, 16)));
    QVERIFY(!same_shape(te::matmul_dag(64, 32, 16), te::matmul_dag(64, 32, 8)));
    QVERIFY(!same_shape(te::matmul_dag(64, 32, 16), te::conv2d_dag(te::Conv2dParams{})));
    StudioSnapshotPtr snap = test::compile_now(test::sample_model("mlp"));
    QVERIFY(snap && snap->fusion);
    int kernels_with_dags = 0;
    for (const FusionGroup& g : snap->fusion->groups) {
      std::string why;
      std::optional<te::ComputeDag> dag = kernel_dag(*snap, g.kernel_name, &why);
      if (!dag) continue;
      ++kernels_with_dags;
      QStringList same = same_shape_kernels_in(*snap, g.kernel_name);
      QVERIFY(!same.contains(QString::fromStdString(g.kernel_name)));
      for (const QString& other : same) {  // symmetric, and really the same shape
        QVERIFY(same_shape_kernels_in(*snap, other.toStdString()).contains(QString::fromStdString(g.kernel_name)));
        QVERIFY(same_shape(*dag, *kernel_dag(*snap, other.toStdString(), &why)));
      }
    }
    QVERIFY(kernels_with_dags > 0);
    std::string why;
    QVERIFY(!kernel_dag(*snap, "no_such_kernel", &why));
    QVERIFY(why.find("no_such_kernel") != std::string::npos);
  }

  void badge_shows_the_measurement() {
    auto pane = make_pane();
    pane->show_measuring("matmul");
    QVERIFY(pane->badge_text().startsWith(QString::fromUtf8("…")));
    auto m = std::make_shared<KernelMeasurement>();
    m->kernel = "matmul";
    m->generation = 3;
    m->verdict = KernelMeasurement::Verdict::kCorrect;
    m->ms_median = 0.0421;
    m->flops = 131100;  // 3.114 GFLOP/s at the median
    pane->show_measurement(m);
    QVERIFY2(pane->badge_text().startsWith(QString::fromUtf8("✓")), qPrintable(pane->badge_text()));
    QVERIFY(pane->badge_text().contains("0.0421 ms") && pane->badge_text().contains("3.11 GFLOP/s"));
    auto crashed = std::make_shared<KernelMeasurement>(*m);
    crashed->verdict = KernelMeasurement::Verdict::kFailed;
    crashed->error = "measuring process crashed (signal 11) on kernel matmul";
    pane->show_measurement(crashed);
    QVERIFY(pane->badge_text().contains("signal 11"));
    auto other = std::make_shared<KernelMeasurement>(*m);
    other->kernel = "relu";
    pane->show_measurement(other);  // another kernel's: ignored
    QVERIFY(pane->badge_text().contains("signal 11"));
  }

  void screenshot_of_the_pane() {
    te::Conv2dParams p;
    p.in_channels = 8;
    p.out_channels = 16;
    te::ComputeDag conv = te::conv2d_dag(p);
    schedule::Schedule def = schedule::default_cpu_schedule(conv);
    ScheduleEditorPane pane;
    pane.set_kernel("fused_conv2d_1", conv, def, def);
    pane.show_lowering(lower_kernel("fused_conv2d_1", conv, def, 1));
    QVERIFY(pane.error_text().isEmpty());  // the default schedule lowers
    pane.resize(640, 760);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QImage shot = pane.grab().toImage();
    QDir().mkpath(TESSEL_BINARY_DIR "/tests/views/screenshots");
    const QString path = TESSEL_BINARY_DIR "/tests/views/screenshots/schedule_pane.png";
    QVERIFY(shot.save(path));
    QImage back(path);
    QCOMPARE(back.size(), QSize(640, 760));
    QVERIFY(test::distinct_colors(back) > 8);
    QCOMPARE(pane.model()->rowCount(), static_cast<int>(def.steps.size()));
  }
};

QTEST_MAIN(SchedulePaneTest)
#include "test_schedule_pane.moc"
