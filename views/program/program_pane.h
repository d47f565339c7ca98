#pragma once
// The program pane: the loop program after the chosen schedule step with what that step changed
// highlighted (inline diff or side by side), a slider and a list to scrub through the steps
// (Compiler Explorer's pass-by-pass view, for schedule steps), "hide steps that changed
// nothing", the lowering passes of the current schedule the same way, and one tab per artifact
// the target's plugin returned (LLVM IR, assembly, C source) with highlighting and Ctrl+F.
// Clicking a loop line reports the schedule step that made that loop; highlight_step() does
// the reverse (shows the step and the lines it added).
//
// Wiring (app/studio):
//   auto* program = new ProgramPane;
//   loop lowered  -> program->show_lowering(r);     loop measured -> program->show_measurement(m);
//   program->on_step_picked = [editor](int step) { editor->highlight_step(step); };
//   editor->on_step_selected = [program](int step) { program->highlight_step(step); };
//
// Step numbers are indices into KernelLowering::schedule.steps (-1: the unscheduled program);
// view numbers are indices into KernelLowering::steps or ::passes (view = step + 1 for steps).
#include <QStringList>
#include <QWidget>
#include <functional>

#include "views/common/kernel_results.h"
#include "views/program/program_diff.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QListView;
class QPlainTextEdit;
class QSlider;
class QStackedWidget;
class QTabWidget;

namespace tessel::views {

class FindBar;
class ProgramStepModel;

class ProgramPane final : public QWidget {
 public:
  enum class Source { kSteps, kPasses };
  enum class DiffMode { kInline, kSideBySide };

  explicit ProgramPane(QWidget* parent = nullptr);

  // A new lowering shows its last view; the same kernel's older generations are dropped.
  void show_lowering(KernelLoweringPtr lowering);
  // Shows no kernel (another model was opened, or its kernel is gone).
  void clear();
  // Artifact tabs for the shown kernel (a measurement of another kernel or an older edit is dropped).
  void show_measurement(KernelMeasurementPtr measurement);

  void set_source(Source source);
  void set_diff_mode(DiffMode mode);
  void set_hide_unchanged(bool hide);
  void show_view(int view);       // a view of the current source; clamped
  void highlight_step(int step);  // shows schedule step `step` (steps source) and marks the lines it added
  // What clicking line `line` (0-based, of the inline text or the right side) does: when it opens
  // a loop, emphasizes it and reports the step that made the loop through on_step_picked.
  void pick_line(int line);

  std::function<void(int step)> on_step_picked;

  // State, for the main window's status line, lessons and tests.
  KernelLoweringPtr lowering() const { return lowering_; }
  int current_view() const { return view_; }
  int picked_step() const { return picked_step_; }
  const std::vector<lower::ViewRecord>& views() const;  // of the current source
  std::string current_program() const;  // the program text of the current view, exactly (empty for a failed step)
  QStringList added_lines() const;      // lines the current view added / removed against the one before
  QStringList removed_lines() const;
  QStringList artifact_names() const;
  QPlainTextEdit* artifact_edit(const QString& name) const;
  QPlainTextEdit* program_edit() const { return inline_; }  // the inline view
  QTabWidget* tabs() const { return tabs_; }
  QSlider* slider() const { return slider_; }
  QListView* step_list() const { return list_; }
  ProgramStepModel* model() const { return model_; }
  FindBar* find_bar() const { return find_; }

 private:
  void render();
  void sync_scrubbers();
  void rebuild_source();

  KernelLoweringPtr lowering_;
  KernelMeasurementPtr measurement_;
  Source source_ = Source::kSteps;
  DiffMode mode_ = DiffMode::kInline;
  int view_ = 0, picked_step_ = -2, picked_line_ = -1;
  bool syncing_ = false;
  std::vector<DiffLine> diff_;  // of the current view
  ProgramStepModel* model_;
  QLabel *title_, *status_;
  QComboBox *source_box_, *mode_box_;
  QCheckBox* hide_;
  QSlider* slider_;
  QListView* list_;
  QTabWidget* tabs_;
  QStackedWidget* stack_;
  QPlainTextEdit *inline_, *left_, *right_;
  FindBar* find_;
};

}  // namespace tessel::views
