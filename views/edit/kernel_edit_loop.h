#pragma once
// The studio's edit loop for one kernel at a time: an edit re-lowers at once on a worker thread,
// then the kernel is compiled, verified against the reference kernels and timed in a separate
// measuring process (`tessel-measure`, see views/edit/measure_client.h), so a schedule that
// crashes or hangs costs an error message, never the studio.
//
//   UI thread                     worker thread                 measuring process (QProcess)
//   set_schedule(k, s) ──gen++──▶ DAG of k, lower every step
//        ▲ lowered(KernelLowering) ◀─┘ (stale generation dropped)
//        │                            request {model, target, kernel, schedule} ──▶ compile, verify, time
//        └── measured(KernelMeasurement) ◀──────────────── reply (or crash / timeout → kFailed)
//
// A newer edit of the same kernel cancels the older one: its lowering result is dropped and its
// measurement request is abandoned (the process is killed and restarted if it is still busy).
// A schedule whose lowering fails is not sent to the measuring process: `measured` then carries
// kFailed with "not measured: <the lowering error>".
//
// Usage (the mediator in app/studio):
//   auto* loop = new KernelEditLoop({}, window);          // finds tessel-measure next to the studio
//   loop->set_pass_options(doc.pass_options);              // before set_snapshot: kernel names depend on fusion
//   connect(controller, &SessionController::compiled, loop, &KernelEditLoop::set_snapshot);
//   connect(selection, &Selection::kernel_changed, loop, &KernelEditLoop::open_kernel);
//   connect(loop, &KernelEditLoop::lowered, ...);  connect(loop, &KernelEditLoop::measured, ...);
//   schedule_editor.on_edit = [loop](k, s) { loop->set_schedule(k, s); };
#include <QObject>
#include <QString>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "views/common/kernel_results.h"
#include "views/common/snapshot.h"
#include "views/edit/measure_protocol.h"

namespace tessel::views {

class KernelEditLoop : public QObject {
  Q_OBJECT

 public:
  // `measure_program`: path of the tessel-measure executable (empty: $TESSEL_MEASURE, else found
  // next to the running executable or in the build tree's app/measure).
  explicit KernelEditLoop(QString measure_program = {}, QObject* parent = nullptr);
  ~KernelEditLoop() override;

  // A new compile of the model: forgets per-kernel results (they describe the old graph) and kernel
  // state that no longer applies (kernel names that are gone), keeps hand schedules of kernels that
  // still exist, and re-opens the current kernel if it still exists.
  void set_snapshot(tessel::views::StudioSnapshotPtr snapshot);
  StudioSnapshotPtr snapshot() const { return snapshot_; }
  // The target kernels are measured with ("llvm" by default; the studio's own target is often
  // "ref", which generates no code). Its vector width also shapes the default schedules.
  void set_target(const QString& target);
  QString target() const { return QString::fromStdString(context_.target); }
  // The session's pass options, sent with every request (fusion decides the kernels' names).
  void set_pass_options(const nlohmann::json& options);
  void set_measure_timeout_ms(int ms);  // default 20000; a kernel taking longer is killed

  // The kernel's current schedule: the hand schedule if one was set, else the default one.
  // Starts lowering (and measuring) if this kernel has no result yet.
  void open_kernel(const QString& kernel);
  QString current_kernel() const { return current_; }
  // An edit: replaces the kernel's schedule, re-lowers, re-measures. Invalid steps are not an
  // error of the loop: the lowering result carries `error` / `error_step`.
  void set_schedule(const QString& kernel, const schedule::Schedule& s);
  void reset_to_default(const QString& kernel);
  // The kernel's hand schedules (saved in the session); kernels on their default are absent.
  const std::map<std::string, schedule::Schedule>& hand_schedules() const { return hand_; }
  void set_hand_schedules(std::map<std::string, schedule::Schedule> s);  // from a loaded session
  // Profiles the whole model with the hand schedules in the measuring process → profiled.
  void profile_model();
  // The machine ceilings cached for the target (nothing is measured) → ceilings_ready.
  void request_ceilings();
  // Measures the ceilings in the measuring process (seconds; `quick`: smaller and fewer runs),
  // caches them for later sessions → ceilings_ready.
  void calibrate(bool quick = false);
  // Stops a calibration in progress (the measuring process is killed and restarts for the next
  // request): no ceilings_ready follows, the cached ceilings stay as they were.
  void cancel_calibration();
  bool is_calibrating() const { return calibrating_; }

  KernelLoweringPtr lowering(const QString& kernel) const;
  KernelMeasurementPtr measurement(const QString& kernel) const;
  // Wall time of the kernel's last edit (set_schedule / open_kernel / reset) until its lowering and
  // its measurement were delivered on the UI thread; 0 until delivered.
  struct EditTiming {
    double edit_to_lowered_ms = 0;
    double edit_to_measured_ms = 0;
  };
  EditTiming timing(const QString& kernel) const;
  // Tests: processes events until no lowering or measurement is pending; false on timeout.
  bool wait_until_idle(int timeout_ms);
  // Tests: a fault every measure request asks for ("crash" or "hang"; "" for none), which
  // tessel-measure honours only with TESSEL_MEASURE_ALLOW_INJECT=1.
  void set_injected_fault(const std::string& fault) { inject_ = fault; }
  int measuring_process_restarts() const;

 Q_SIGNALS:
  void lowered(tessel::views::KernelLoweringPtr result);
  void measuring(const QString& kernel);  // a measurement started (the badge shows "…")
  void measured(tessel::views::KernelMeasurementPtr result);
  void profiled(tessel::views::ModelProfilePtr result);
  void ceilings_ready(tessel::views::CeilingsResultPtr result);

 private:
  struct State;
  struct KernelState;
  KernelState& kernel_state(const QString& kernel);
  void start(const QString& kernel);  // a new generation: lower, then measure
  void deliver_lowering(const QString& kernel, KernelLoweringPtr result);
  void start_measuring(const QString& kernel, const KernelLowering& lowering);

  std::unique_ptr<State> state_;
  std::map<std::string, schedule::Schedule> hand_;
  StudioSnapshotPtr snapshot_;
  MeasureContext context_;
  QString current_;
  std::string inject_;
  int timeout_ms_ = 20000;
  bool calibrating_ = false;
};

}  // namespace tessel::views

Q_DECLARE_METATYPE(tessel::views::KernelLoweringPtr)
Q_DECLARE_METATYPE(tessel::views::KernelMeasurementPtr)
Q_DECLARE_METATYPE(tessel::views::ModelProfilePtr)
Q_DECLARE_METATYPE(tessel::views::CeilingsResultPtr)
