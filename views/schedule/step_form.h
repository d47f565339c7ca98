#pragma once
// The schedule editor's palette and argument form: every step kind (schedule::step_kinds()) and,
// for the chosen kind, one widget per argument that offers only valid choices at the edited
// point of the schedule (StepChoices): the loop axes that exist with their extents, stages,
// tensors, scopes, thread tags; factors are spin boxes bounded by the axis's extent.
//
//   [split ▾]  splits a loop into an outer and an inner loop
//   axis    [C.i  (extent 64) ▾]
//   factor  [ 8 ] of 64
//   mode    [factor (inner extent) ▾]
//                                  [Add step] [Replace selected]
//
// Argument widgets are named "arg0", "arg1", ... (QComboBox, QSpinBox or QListWidget) so tests
// and lessons drive the form as a user would.
#include <QWidget>
#include <functional>
#include <vector>

#include "core/schedule/step.h"
#include "views/schedule/step_choices.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;

namespace tessel::views {

class StepForm final : public QWidget {
 public:
  explicit StepForm(QWidget* parent = nullptr);

  void set_choices(StepChoices choices);  // keeps the kind and, where still valid, the arguments
  void set_kind(const QString& kind);
  QString kind() const;
  void load(const schedule::ScheduleStep& step);  // kind and arguments of an existing step
  schedule::ScheduleStep current_step() const;
  void set_replace_enabled(bool on);

  QComboBox* palette() const { return kinds_; }
  QPushButton* add_button() const { return add_; }
  QPushButton* replace_button() const { return replace_; }

  std::function<void(const schedule::ScheduleStep&)> on_add;
  std::function<void(const schedule::ScheduleStep&)> on_replace;


 private:
  void rebuild();
  void refill(size_t i);  // repopulates argument i from the choices and its inputs
  void refresh_dependents(size_t changed);
  void update_buttons();

  StepChoices choices_;
  QComboBox* kinds_;
  QLabel* doc_;
  QFormLayout* form_;
  QPushButton *add_, *replace_;
  std::vector<QWidget*> widgets_;
  std::vector<QLabel*> hints_;
  bool replace_allowed_ = false;  // a step is selected
};

}  // namespace tessel::views
