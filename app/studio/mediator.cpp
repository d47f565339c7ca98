#include "app/studio/mediator.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QUndoGroup>

#include "core/compile/kernel_compiler.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "views/edit/kernel_lowering.h"

namespace tessel::studio {

namespace {

// The session's target compiles the graph; kernels are measured with a code-generating target
// (a session on `ref`, which has no code generator, measures with the default target's kind).
QString measuring_target(const std::string& session_target) {
  try {
    if (session_target.empty() || !compile::generates_code(Target::parse(session_target)))
      return QString::fromStdString(compile::default_target().kind());
  } catch (const Error&) {
    // Its plugin is not loaded here: the measuring process loads plugins and says what is wrong.
  }
  return QString::fromStdString(session_target);
}

bool has_kernel(const views::StudioSnapshot& snap, const QString& kernel) {
  return snap.fusion && compile::has_kernel(*snap.fusion, kernel.toStdString());
}

}  // namespace

StudioMediator::StudioMediator(views::Selection* selection, views::SessionController* controller,
                               views::KernelEditLoop* loop, views::TuningRunner* tuner, StudioPanes panes,
                               QObject* parent)
    : QObject(parent),
      selection_(selection),
      controller_(controller),
      loop_(loop),
      tuner_(tuner),
      panes_(panes),
      accel_roofline_(new views::AccelRooflineRunner(this)) {
  connect(controller, &views::SessionController::compiled, this,
          [this](const views::StudioSnapshotPtr& snap) { show_snapshot(snap); });
  connect(selection, &views::Selection::pass_changed, this, [this](int pass) {
    if (distributing_) return;
    panes_.graph->show_pass(pass);
    panes_.passes->show_pass(pass);
    refresh_inspector();
  });
  connect(selection, &views::Selection::node_changed, this, [this](const QString& node) {
    if (distributing_) return;
    panes_.graph->select_node(node);
    panes_.memory->highlight_node(node);
    refresh_inspector();
  });
  connect(selection, &views::Selection::kernel_changed, this, [this](const QString& kernel) {
    if (distributing_) return;
    refresh_inspector();
    show_kernel(kernel);
  });
  connect_kernel_panes();
  connect_tuning();
}

void StudioMediator::connect_kernel_panes() {
  // Edits go to the edit loop and, as text, into the session (autosaved).
  panes_.schedule->on_schedule_edited = [this](const QString& kernel, const schedule::Schedule& s) {
    loop_->set_schedule(kernel, s);
    save_session_schedules();
  };
  panes_.schedule->on_copy_schedule = panes_.schedule->on_schedule_edited;
  panes_.schedule->on_reset = [this](const QString& kernel) {
    loop_->reset_to_default(kernel);
    save_session_schedules();
  };
  panes_.schedule->same_shape_kernels = [this](const QString& kernel) {
    return snapshot_ ? views::same_shape_kernels_in(*snapshot_, kernel.toStdString()) : QStringList{};
  };
  panes_.schedule->on_step_selected = [this](int step) { panes_.program->highlight_step(step); };
  // Undo and redo move a stack's index after the edit reached the session: autosave the histories
  // again once it has moved.
  connect(panes_.schedule->undo_group(), &QUndoGroup::indexChanged, this,
          [this] { controller_->set_schedule_histories(panes_.schedule->histories()); });
  panes_.program->on_step_picked = [this](int step) { panes_.schedule->highlight_step(step); };
  panes_.roofline->on_kernel_clicked = [this](const QString& k) { selection_->set_kernel(k); };
  panes_.roofline->on_calibrate_requested = [this] { on_calibrate_requested(); };
  panes_.profile->on_kernel_selected = [this](const QString& k) { selection_->set_kernel(k); };
  panes_.profile->on_profile_requested = [this] {
    panes_.profile->set_profiling();
    loop_->profile_model();
  };

  connect(loop_, &views::KernelEditLoop::lowered, this, [this](const views::KernelLoweringPtr& r) {
    panes_.schedule->show_lowering(r);
    panes_.program->show_lowering(r);
  });
  connect(loop_, &views::KernelEditLoop::measuring, this,
          [this](const QString& kernel) { panes_.schedule->show_measuring(kernel); });
  connect(loop_, &views::KernelEditLoop::measured, this, [this](const views::KernelMeasurementPtr& m) {
    panes_.schedule->show_measurement(m);
    panes_.program->show_measurement(m);
    panes_.roofline->set_measurement(m);
    on_measured(*m);
  });
  connect(loop_, &views::KernelEditLoop::profiled, this, [this](const views::ModelProfilePtr& p) {
    panes_.profile->set_profile(p);
    panes_.roofline->set_profile(p);
    panes_.graph->set_device_crossings(views::device_crossings(p->profile));
    on_profiled(*p);
  });
  connect(accel_roofline_, &views::AccelRooflineRunner::started, this,
          [this] { panes_.roofline->set_accelerator_pending(); });
  connect(accel_roofline_, &views::AccelRooflineRunner::ready, this,
          [this](const analysis::AccelRooflinePtr& r) { panes_.roofline->set_accelerator_roofline(r); });
  connect(accel_roofline_, &views::AccelRooflineRunner::failed, this,
          [this](const QString& error) { panes_.roofline->set_accelerator_error(error); });
  connect(loop_, &views::KernelEditLoop::ceilings_ready, this, [this](const views::CeilingsResultPtr& c) {
    panes_.roofline->set_ceilings(c->ceilings);
    panes_.profile->set_ceilings(c->ceilings);
    if (!c->error.empty()) panes_.roofline->set_calibration_error(QString::fromStdString(c->error));
  });
}

void StudioMediator::connect_tuning() {
  panes_.tuning->on_start = [this](const views::TuningRequest& r) { start_tuning(r); };
  panes_.tuning->on_stop = [this] { tuner_->stop(); };
  panes_.tuning->on_load_best = [this](const QString& kernel, const QString& text) {
    load_tuned_schedule(kernel, text);
  };
  connect(tuner_, &views::TuningRunner::started, this,
          [this](const QStringList& kernels) { panes_.tuning->show_started(kernels); });
  connect(tuner_, &views::TuningRunner::trial_measured, this,
          [this](const views::TuningTrialPtr& t) { panes_.tuning->show_trial(t); });
  connect(tuner_, &views::TuningRunner::improved, this, [this](const views::TuningBestPtr& best) {
    panes_.tuning->show_best(best);
    panes_.roofline->set_measurement(std::make_shared<const views::KernelMeasurement>(best->measurement));
  });
  connect(tuner_, &views::TuningRunner::progress, this,
          [this](const views::TuningProgressPtr& p) { panes_.tuning->show_progress(p); });
  connect(tuner_, &views::TuningRunner::finished, this,
          [this](const views::TuningSummaryPtr& s) { panes_.tuning->show_finished(s); });
}

QString StudioMediator::tuning_records_path() const {
  const views::SessionDocument& doc = controller_->document();
  if (!doc.tuning_records.empty()) return QString::fromStdString(doc.tuning_records);
  const QString model = QFileInfo(QString::fromStdString(doc.model_path)).completeBaseName();
  const QString session = controller_->session_path();
  if (!session.isEmpty()) {
    const QFileInfo info(session);
    return info.dir().filePath(info.completeBaseName() + ".records.jsonl");
  }
  const QDir data(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/tuning");
  return data.filePath(model + ".records.jsonl");
}

void StudioMediator::start_tuning(const views::TuningRequest& request) {
  if (!snapshot_ || !snapshot_->fusion) return panes_.tuning->show_error(tr("Open a model to tune first."));
  views::TuningJob job = tuning_defaults;
  job.snapshot = snapshot_;
  job.model =
      measure::ModelRef{snapshot_->model_path, loop_->target().toStdString(), controller_->document().pass_options, {}};
  job.kernels.clear();
  if (request.whole_model) {
    for (const FusionGroup& g : snapshot_->fusion->groups) job.kernels.push_back(g.kernel_name);
  } else if (has_kernel(*snapshot_, selection_->kernel())) {
    job.kernels.push_back(selection_->kernel().toStdString());
  } else {
    return panes_.tuning->show_error(tr("Select a kernel to tune (click one in the graph)."));
  }
  job.trials = request.trials;
  job.time_budget_s = request.time_budget_s;
  const QString log = tuning_records_path();
  if (!QDir().mkpath(QFileInfo(log).absolutePath()))
    return panes_.tuning->show_error(tr("Cannot create the folder of the records log %1").arg(log));
  job.records_log = log.toStdString();
  controller_->set_tuning_records(log);  // saved with the session
  panes_.tuning->set_records_path(log);
  if (tuner_->start(std::move(job)))
    panes_.tuning->show_starting();
  else
    panes_.tuning->show_error(tr("A search is running already: stop it first."));
}

void StudioMediator::load_tuned_schedule(const QString& kernel, const QString& text) {
  if (!snapshot_ || !has_kernel(*snapshot_, kernel))
    return panes_.tuning->show_error(tr("Kernel %1 is not in the model as compiled now.").arg(kernel));
  schedule::Schedule s;
  try {
    s = schedule::parse_schedule(text.toStdString());
  } catch (const Error& e) {
    return panes_.tuning->show_error(tr("The tuned schedule of %1 does not parse: %2").arg(kernel, e.what()));
  }
  if (selection_->kernel() != kernel) selection_->set_kernel(kernel);
  apply_schedule(kernel, s);
}

void StudioMediator::after_compile(std::function<void()> action) {
  if (controller_->is_busy() || !snapshot_)
    after_compile_.push_back(std::move(action));
  else
    action();
}

void StudioMediator::apply_schedule(const QString& kernel, const schedule::Schedule& s) {
  loop_->set_schedule(kernel, s);
  save_session_schedules();
  if (kernel == selection_->kernel()) show_kernel(kernel);
}

void StudioMediator::reset_schedule(const QString& kernel) {
  loop_->reset_to_default(kernel);
  save_session_schedules();
  if (kernel == selection_->kernel()) show_kernel(kernel);
}

void StudioMediator::show_snapshot(const views::StudioSnapshotPtr& snap) {
  // Another model: nothing of the old one's kernels may stay on screen, even a kernel of the same
  // name (every model has a fused_conv2d_0). The same model recompiled keeps the kernel shown.
  const bool other_model = !snapshot_ || snapshot_->model_path != snap->model_path;
  snapshot_ = snap;
  if (other_model) {
    tuner_->stop();  // its trials are logged as they are measured; its kernels are not this model's
    panes_.tuning->clear();
  }
  panes_.tuning->set_records_path(QString::fromStdString(controller_->document().tuning_records));
  const QString kept_kernel =
      other_model || !has_kernel(*snap, selection_->kernel()) ? QString() : selection_->kernel();
  if (kept_kernel.isEmpty()) {
    loop_->open_kernel({});  // the loop must not re-lower the old kernel for the new snapshot
    panes_.schedule->clear(other_model);
    panes_.program->clear();
  }
  // Selection first (quietly), so every pane below sees the new snapshot with a valid selection.
  distributing_ = true;
  selection_->clear();
  selection_->set_pass(snap->last_pass());
  distributing_ = false;
  panes_.passes->show_snapshot(snap);
  panes_.graph->set_device_crossings({});  // they were the old compile's
  panes_.graph->show_snapshot(snap);
  panes_.memory->show_snapshot(snap);
  panes_.memory->highlight_node({});
  panes_.inspector->clear();
  panes_.diagnostics->model()->set_snapshot_diagnostics(snap->diagnostics);
  for (const views::Diagnostic& d : snap->diagnostics)
    if (d.severity == views::Diagnostic::Severity::kError) {
      on_errors(QString::fromStdString(d.message));
      break;
    }

  // The kernel side: the edit loop measures for this snapshot, with the session's schedules.
  const views::SessionDocument& doc = controller_->document();
  loop_->set_target(measuring_target(doc.target));
  panes_.schedule->set_target(snap->target);  // the scopes and intrinsics its forms offer
  loop_->set_pass_options(doc.pass_options);
  load_session_schedules();
  loop_->set_snapshot(snap);
  panes_.roofline->clear();
  accel_roofline_->start(snap);  // an accelerator target: its layers simulated off the UI thread
  panes_.profile->clear();
  loop_->request_ceilings();
  if (!kept_kernel.isEmpty()) selection_->set_kernel(kept_kernel);

  std::vector<std::function<void()>> pending;
  pending.swap(after_compile_);
  for (auto& action : pending) action();
}

void StudioMediator::show_kernel(const QString& kernel) {
  panes_.roofline->set_selected_kernel(kernel);
  panes_.profile->set_selected_kernel(kernel);
  panes_.tuning->set_selected_kernel(kernel);
  if (kernel.isEmpty() || !snapshot_) return;
  std::string why;
  std::optional<te::ComputeDag> dag = views::kernel_dag(*snapshot_, kernel.toStdString(), &why);
  if (!dag) {
    on_status(QString::fromStdString(why));
    return;
  }
  // The schedule `tessel run` gives it on the session's target (placement and default, one policy).
  schedule::Schedule fallback;
  try {
    fallback = views::default_kernel_schedule(kernel.toStdString(), *dag, loop_->target().toStdString()).first;
  } catch (const Error& e) {
    on_status(QString::fromStdString(e.what()));
    return;
  }
  auto hand = loop_->hand_schedules().find(kernel.toStdString());
  schedule::Schedule current = hand != loop_->hand_schedules().end() ? hand->second : fallback;
  panes_.schedule->set_kernel(kernel, std::move(*dag), std::move(current), std::move(fallback));
  loop_->open_kernel(kernel);
  if (auto lowering = loop_->lowering(kernel)) {
    panes_.schedule->show_lowering(lowering);
    panes_.program->show_lowering(lowering);
  }
  if (auto measurement = loop_->measurement(kernel)) {
    panes_.schedule->show_measurement(measurement);
    panes_.program->show_measurement(measurement);
  }
}

// The session's schedule texts → the edit loop (parsed) and the schedule editor (as written, so
// disabled steps come back). Only when the session differs from what the loop holds: the loop is
// the source of truth while the user edits.
void StudioMediator::load_session_schedules() {
  const auto& texts = controller_->document().schedules;
  std::map<std::string, schedule::Schedule> parsed;
  for (const auto& [kernel, text] : texts) {
    try {
      parsed[kernel] = schedule::parse_schedule(text);
    } catch (const Error& e) {
      on_errors(QString::fromStdString("session schedule of kernel " + kernel + ": " + e.what()));
    }
  }
  if (parsed == loop_->hand_schedules()) return;
  for (const auto& [kernel, s] : parsed)
    panes_.schedule->restore_text(QString::fromStdString(kernel), texts.at(kernel));
  loop_->set_hand_schedules(std::move(parsed));
}

void StudioMediator::save_session_schedules() {
  controller_->set_schedule_histories(panes_.schedule->histories());
  std::map<std::string, std::string> texts;
  for (const auto& [kernel, s] : loop_->hand_schedules()) {
    std::string text = panes_.schedule->text_form(QString::fromStdString(kernel));
    texts[kernel] = text.empty() ? schedule::to_text(s) : text;
  }
  controller_->set_schedules(std::move(texts));
}

void StudioMediator::refresh_inspector() {
  if (!selection_->node().isEmpty())
    panes_.inspector->show_node(snapshot_, selection_->pass(), selection_->node());
  else if (!selection_->kernel().isEmpty())
    panes_.inspector->show_kernel(snapshot_, selection_->kernel());
  else
    panes_.inspector->clear();
}

}  // namespace tessel::studio
