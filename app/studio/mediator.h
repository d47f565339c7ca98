#pragma once
// The one place panes are connected. Panes write what the user picked into the shared Selection;
// the mediator forwards Selection, SessionController and KernelEditLoop signals to the panes that
// care. No pane holds a pointer to another.
//
//   SessionController ──compiled──▶ mediator ──▶ graph, passes, inspector, memory, diagnostics,
//                                       │         edit loop (new snapshot, the session's schedules)
//   Selection (node, kernel, pass) ──changed──▶ mediator ──▶ the same panes; a kernel also goes to
//                                       │         the schedule editor, the edit loop, roofline, profile
//   schedule editor ──edit──▶ KernelEditLoop ──lowered──▶ schedule editor, program
//                                  │        ──measured──▶ schedule editor (badge), program (artifacts),
//                                  │                      roofline (the point moves)
//                                  └────────  ──profiled──▶ profile, roofline, graph (host↔device edges)
//   every edit ──▶ SessionController::set_schedules (autosaved, saved with the session)
//   tuning pane ──start/stop──▶ TuningRunner ──trial, progress, finished──▶ tuning pane
//                                    └──improved──▶ tuning pane, roofline (the point moves)
//   tuning pane ──load best──▶ the kernel selected, its schedule applied as an edit
#include <QObject>
#include <functional>

#include "views/common/selection.h"
#include "views/diagnostics/diagnostics_pane.h"
#include "views/edit/kernel_edit_loop.h"
#include "views/graph/graph_pane.h"
#include "views/inspector/inspector_pane.h"
#include "views/memory/memory_pane.h"
#include "views/passes/pass_stepper_pane.h"
#include "views/profile/profile_pane.h"
#include "views/program/program_pane.h"
#include "views/roofline/accel_roofline_runner.h"
#include "views/roofline/roofline_pane.h"
#include "views/schedule/schedule_editor_pane.h"
#include "views/session/session_controller.h"
#include "views/tune/tuning_pane.h"
#include "views/tune/tuning_runner.h"

namespace tessel::studio {

struct StudioPanes {
  views::GraphPane* graph = nullptr;
  views::PassStepperPane* passes = nullptr;
  views::InspectorPane* inspector = nullptr;
  views::MemoryPane* memory = nullptr;
  views::DiagnosticsPane* diagnostics = nullptr;
  views::ScheduleEditorPane* schedule = nullptr;
  views::ProgramPane* program = nullptr;
  views::RooflinePane* roofline = nullptr;
  views::ProfilePane* profile = nullptr;
  views::TuningPane* tuning = nullptr;
};

class StudioMediator final : public QObject {
 public:
  StudioMediator(views::Selection* selection, views::SessionController* controller, views::KernelEditLoop* loop,
                 views::TuningRunner* tuner, StudioPanes panes, QObject* parent = nullptr);
  views::StudioSnapshotPtr snapshot() const { return snapshot_; }
  // Runs `action` now when the session has an up-to-date snapshot, else after the compile that is
  // running delivers it (lessons open a model, then select a kernel in it).
  void after_compile(std::function<void()> action);
  // A schedule set from outside the editor (a lesson page): the edit loop, the session and the
  // editor all take it, as if the user had typed it.
  void apply_schedule(const QString& kernel, const schedule::Schedule& s);
  void reset_schedule(const QString& kernel);
  // Called with the first error of a snapshot that has errors (the window shows a banner).
  std::function<void(const QString& message)> on_errors = [](const QString&) {};
  // A passing remark for the status bar ("kernel X has no tensor expression: ...").
  std::function<void(const QString& message)> on_status = [](const QString&) {};
  // Results for whoever else follows them (the running lesson).
  std::function<void(const views::KernelMeasurement&)> on_measured = [](const views::KernelMeasurement&) {};
  std::function<void(const views::ModelProfile&)> on_profiled = [](const views::ModelProfile&) {};
  // The roofline's Calibrate button (the window shows the job's progress and a Cancel).
  std::function<void()> on_calibrate_requested = [this] { loop_->calibrate(); };
  // What every tuning job starts from (the pane's request fills in the kernels and budgets); tests
  // shorten the timing.
  views::TuningJob tuning_defaults;
  // The session's records log, or where a new one goes: beside the saved session, else in the
  // studio's data folder, named after the model.
  QString tuning_records_path() const;
  // Computes the roofline of an accelerator target (its layers simulated) for the roofline pane.
  views::AccelRooflineRunner* accel_roofline() const { return accel_roofline_; }

 private:
  void show_snapshot(const views::StudioSnapshotPtr& snapshot);
  void refresh_inspector();
  void connect_kernel_panes();
  void connect_tuning();
  void start_tuning(const views::TuningRequest& request);
  void load_tuned_schedule(const QString& kernel, const QString& text);
  void show_kernel(const QString& kernel);
  void load_session_schedules();
  void save_session_schedules();

  views::Selection* selection_;
  views::SessionController* controller_;
  views::KernelEditLoop* loop_;
  views::TuningRunner* tuner_;
  StudioPanes panes_;
  views::AccelRooflineRunner* accel_roofline_;
  views::StudioSnapshotPtr snapshot_;
  std::vector<std::function<void()>> after_compile_;
  bool distributing_ = false;
};

}  // namespace tessel::studio
