// Crash recovery in the main window: what a killed studio left in the recovery file is read at
// start (before this studio's autosave could overwrite it), offered back in the banner, and
// restored (the session, the schedule editor's undo histories, the lesson page) or discarded.
// Until the user answers, autosave holds off the file.
#include <QComboBox>
#include <QFileInfo>
#include <QStackedWidget>
#include <QStatusBar>

#include "app/studio/main_window.h"

namespace tessel::studio {

views::SessionController::RecoveryRead MainWindow::take_over_recovery_file() {
  const QString recovery =
      options_.recovery_path.isEmpty() ? views::SessionController::default_recovery_path() : options_.recovery_path;
  views::SessionController::RecoveryRead read;
  if (options_.offer_recovery) read = views::SessionController::read_recovery(recovery);
  recovered_ = read.record;
  controller_->set_recovery_path(options_.autosave ? recovery : QString());
  controller_->hold_recovery(recovered_.has_value());
  return read;
}

void MainWindow::report_recovery_file(const views::SessionController::RecoveryRead& read) {
  if (recovered_) {
    show_recovery_offer();
  } else if (!read.error.isEmpty()) {
    // A damaged file was set aside (or left where it is): said once, and kept in the diagnostics.
    QString message = tr("The recovery file could not be read: %1.").arg(read.error);
    message += read.kept_as.isEmpty() ? tr(" It was left where it is.") : tr(" It was kept as %1.").arg(read.kept_as);
    panes_.diagnostics->model()->add({views::Diagnostic::Severity::kWarning, "recovery", message.toStdString()});
    show_banner(message, true);
    banner_sticky_ = true;  // stays until the user closes it, past the first compile's success
  }
}

void MainWindow::show_recovery_offer() {
  if (!recovered_) return;
  QString name = QFileInfo(QString::fromStdString(recovered_->session_path.empty() ? recovered_->doc.model_path
                                                                                   : recovered_->session_path))
                     .fileName();
  show_banner(tr("The last studio session ended unexpectedly. Restore %1?").arg(name), false,
              {{tr("Restore"), [this] { restore_recovered(); }}, {tr("Discard"), [this] { discard_recovered(); }}});
}

bool MainWindow::restore_recovered() {
  if (!recovered_) return false;
  if (!gate_->confirm_replace(tr("Restoring the recovered session"))) return false;
  views::RecoveryRecord r = *recovered_;
  recovered_.reset();
  banner_->hide();
  controller_->open_document(r.doc, QString::fromStdString(r.session_path), r.modified);
  controller_->set_schedule_histories(r.histories);
  controller_->hold_recovery(false);  // the file is ours again: autosave what was just restored
  // The schedule editor's undo histories, once the compile has seeded the kernels' steps.
  mediator_->after_compile([this, histories = r.histories] {
    for (const auto& [kernel, history] : histories) {
      try {
        panes_.schedule->restore_history(QString::fromStdString(kernel), history);
      } catch (const std::exception& e) {
        statusBar()->showMessage(tr("The undo history of %1 was not restored: %2")
                                     .arg(QString::fromStdString(kernel), QString::fromUtf8(e.what())),
                                 6000);
      }
    }
  });
  center_->setCurrentWidget(panes_.graph);
  {
    QSignalBlocker block(target_combo_);
    int index = target_combo_->findText(QString::fromStdString(r.doc.target));
    if (index >= 0) target_combo_->setCurrentIndex(index);
  }
  if (!r.lesson_path.empty()) {
    const QString lesson_path = QString::fromStdString(r.lesson_path);
    try {
      run_lesson(views::load_lesson(r.lesson_path), lesson_path, r.lesson_page, true);
    } catch (const std::exception& e) {
      show_banner(tr("The lesson of the restored session could not be reopened: %1").arg(e.what()), true);
    }
  }
  return true;
}

void MainWindow::discard_recovered() {
  if (!recovered_) return;
  recovered_.reset();
  banner_->hide();
  controller_->hold_recovery(false);  // autosave takes the file over (or removes it: nothing is open)
  if (!controller_->has_document()) controller_->discard_recovery();
}

}  // namespace tessel::studio
