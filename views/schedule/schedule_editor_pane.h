#pragma once
// The schedule editor: one kernel's tensor expression and its schedule as a list of steps.
// Steps are added from a palette with forms that offer only valid arguments, edited, deleted,
// reordered by drag, disabled (kept in the list, left out of what is lowered); a text mode shows
// the same schedule as text, kept in sync. Every edit is an undo command; errors of the lowering
// are shown on the failing step. The pane never lowers: it reports edits through callbacks.
//
// Wiring (app/studio):
//   auto* pane = new ScheduleEditorPane;
//   pane->on_schedule_edited = [loop](const QString& k, const schedule::Schedule& s) { loop->set_schedule(k, s); };
//   pane->on_reset = [loop](const QString& k) { loop->reset_to_default(k); };
//   pane->same_shape_kernels = [snap](const QString& k) { return same_shape_kernels_in(*snap, k.toStdString()); };
//   pane->on_copy_schedule = [loop](const QString& k, const schedule::Schedule& s) { loop->set_schedule(k, s); };
//   pane->on_step_selected = [program](int step) { program->highlight_step(step); };
//   selection kernel changed -> pane->set_kernel(k, *kernel_dag(*snap, k, &why), current, default_cpu_schedule(dag));
//     (kernel_dag: views/edit/kernel_lowering.h)
//   loop lowered  -> pane->show_lowering(r);   loop measuring -> pane->show_measuring(k);
//   loop measured -> pane->show_measurement(m);
//   edit menu: pane->undo_group()->createUndoAction(menu) / createRedoAction(menu)
//
// Step indices in the callbacks and in highlight_step() are indices into the lowered schedule
// (KernelLowering::schedule.steps, disabled steps not counted), the same as error_step.
#include <QStringList>
#include <QWidget>
#include <functional>
#include <map>
#include <optional>

#include "core/schedule/schedule.h"
#include "views/common/kernel_results.h"
#include "views/common/snapshot.h"
#include "views/schedule/schedule_step_model.h"
#include "views/schedule/step_choices.h"
#include "views/session/session_document.h"

class QLabel;
class QListView;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QUndoGroup;
class QUndoStack;

namespace tessel::views {

class ScheduleHighlighter;
class StepForm;

// Whether a schedule of `a` applies to `b`: the same tensors in the same order, with the same
// names (schedules name stages), shapes, types and reduction extents.
bool same_shape(const te::ComputeDag& a, const te::ComputeDag& b);
// The other kernels of the snapshot with the same shape as `kernel` (for same_shape_kernels).
QStringList same_shape_kernels_in(const StudioSnapshot& snapshot, const std::string& kernel);

class ScheduleEditorPane final : public QWidget {
 public:
  explicit ScheduleEditorPane(QWidget* parent = nullptr);
  ~ScheduleEditorPane() override;

  // Shows `kernel`. `current`: the schedule the edit loop uses for it; `default_schedule`: what
  // "Reset to default" restores. Switching back to a kernel keeps its disabled steps and undo
  // history when `current` is still what the pane last sent for it.
  void set_kernel(const QString& kernel, te::ComputeDag dag, schedule::Schedule current,
                  schedule::Schedule default_schedule);
  // Shows no kernel. `forget_kernels`: another model was opened, so the kernels' step lists and
  // undo histories (kept per kernel name) belong to a model that is gone.
  void clear(bool forget_kernels);
  void show_lowering(KernelLoweringPtr lowering);  // other kernels and older generations are dropped
  void show_measuring(const QString& kernel);      // the badge shows "…"
  void show_measurement(KernelMeasurementPtr measurement);
  void highlight_step(int step);  // selects the row of lowered step `step`; -1 clears
  // The session's target: the argument forms offer its memory scopes and tensor intrinsics.
  void set_target(const std::string& target_spec);
  const TargetOffer& target_offer() const { return offer_; }

  // Session support: the text form of a kernel's steps with disabled ones as "# disabled: ..."
  // comments (still a valid schedule text: parse_schedule skips them); empty for a kernel the
  // pane has not shown. restore_text() seeds a kernel from such text before set_kernel shows it,
  // so disabled steps survive a save and reopen.
  std::string text_form(const QString& kernel) const;
  void restore_text(const QString& kernel, const std::string& text);  // throws Error on bad text
  // Undo histories (for the recovery file): of every kernel with edits. restore_history() rebuilds
  // one without running it: the steps become states[index]. Throws Error on bad text.
  std::map<std::string, ScheduleHistory> histories() const;
  void restore_history(const QString& kernel, const ScheduleHistory& history);

  QString kernel() const { return kernel_; }
  schedule::Schedule schedule() const;  // the enabled steps: what was sent for lowering
  const ScheduleEntries& entries() const;
  QString badge_text() const;
  QString error_text() const;  // the inline error shown now (lowering or text mode), empty when none

  // The user's edits (what the widgets call; public so lessons and tests drive the pane). Each
  // is one undo command and reports the new schedule through on_schedule_edited.
  void add_step(const schedule::ScheduleStep& step, int row = -1);  // -1: after the selected row, or last
  void replace_step(int row, const schedule::ScheduleStep& step);
  void remove_step(int row);
  void move_step(int from, int to);
  void set_step_enabled(int row, bool enabled);
  // Text mode: parses and applies; false (and the error on its line) when a line does not parse.
  bool apply_text(const QString& text);
  void reset_to_default();
  void copy_schedule_to(const QStringList& kernels);  // calls on_copy_schedule for each

  QUndoStack* undo_stack() const;  // the current kernel's
  QUndoGroup* undo_group() const { return undo_group_; }
  ScheduleStepModel* model() const { return model_; }
  QListView* step_view() const { return list_; }
  QPlainTextEdit* text_edit() const { return text_; }
  StepForm* form() const { return form_; }
  QTabWidget* modes() const { return modes_; }

  std::function<void(const QString& kernel, const schedule::Schedule& s)> on_schedule_edited;
  std::function<void(const QString& kernel)> on_reset;
  std::function<QStringList(const QString& kernel)> same_shape_kernels;
  std::function<void(const QString& kernel, const schedule::Schedule& s)> on_copy_schedule;
  std::function<void(int step)> on_step_selected;  // -1 for a disabled row

  // Applies an undo command's state (internal to the pane's commands).
  void apply_entries(const ScheduleEntries& entries, bool is_reset);

 private:
  struct KernelState;
  void push(ScheduleEntries after, const QString& text, bool is_reset = false);
  void refresh_choices();
  void show_errors();
  void sync_text();
  int selected_row() const;
  KernelState* current();

  QString kernel_;
  TargetOffer offer_ = generic_offer();
  std::map<QString, std::unique_ptr<KernelState>> kernels_;
  KernelLoweringPtr lowering_;
  QString text_error_;
  bool syncing_ = false;
  bool keep_text_ = false;  // an edit from the text mode: leave the user's text as typed
  ScheduleStepModel* model_;
  QUndoGroup* undo_group_;
  QLabel *title_, *badge_, *error_;
  QPlainTextEdit* expression_;
  QTabWidget* modes_;
  QListView* list_;
  QPlainTextEdit* text_;
  ScheduleHighlighter* highlighter_;
  StepForm* form_;
  QPushButton *delete_, *reset_, *copy_;
};

}  // namespace tessel::views
