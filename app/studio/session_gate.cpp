#include "app/studio/session_gate.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QStringList>

namespace tessel::studio {

SessionGate::SessionGate(QWidget* parent, views::SessionController* controller) : controller_(controller) {
  ask_unsaved = [parent](const QString& title, const QString& text) {
    return QMessageBox::question(parent, title, text, QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                                 QMessageBox::Save);
  };
  ask_save_path = [parent](const QString& suggestion) {
    return QFileDialog::getSaveFileName(parent, QObject::tr("Save Session"), suggestion,
                                        QObject::tr("Tessel sessions (*.tessel)"));
  };
}

bool SessionGate::confirm_replace(const QString& replacement) {
  if (!controller_->has_document() || !controller_->is_modified()) return true;
  const views::SessionDocument& doc = controller_->document();
  const QString name = controller_->session_path().isEmpty()
                           ? QFileInfo(QString::fromStdString(doc.model_path)).fileName()
                           : QFileInfo(controller_->session_path()).fileName();
  // What would be lost, in the user's words: the target, the options, the kernels they scheduled.
  QStringList held;
  held << QObject::tr("target %1").arg(QString::fromStdString(doc.target));
  if (!doc.pass_options.empty())
    held << QObject::tr("pass options %1").arg(QString::fromStdString(doc.pass_options.dump()));
  if (!doc.schedules.empty()) {
    QStringList kernels;
    for (const auto& [kernel, text] : doc.schedules) kernels << QString::fromStdString(kernel);
    if (kernels.size() > 3) kernels = kernels.mid(0, 3) << QObject::tr("…");
    held << QObject::tr("hand schedules of %n kernel(s): %1", "", static_cast<int>(doc.schedules.size()))
                .arg(kernels.join(", "));
  }
  const QString text = QObject::tr("%1 discards the unsaved changes to “%2” (%3).\n\nSave the session first?")
                           .arg(replacement, name, held.join("; "));
  switch (ask_unsaved(QObject::tr("Unsaved session"), text)) {
    case QMessageBox::Save:
      return save(false);
    case QMessageBox::Discard:
      return true;
    default:
      return false;  // Cancel, Escape, a closed dialog: nothing happens
  }
}

bool SessionGate::save(bool ask_path) {
  if (!controller_->has_document()) return false;
  try {
    if (ask_path || controller_->session_path().isEmpty()) {
      QString suggestion =
          QFileInfo(QString::fromStdString(controller_->document().model_path)).completeBaseName() + ".tessel";
      QString path = ask_save_path(suggestion);
      if (path.isEmpty()) return false;
      if (!path.endsWith(".tessel")) path += ".tessel";
      controller_->save_as(path);
      on_saved_as(path);
    } else {
      controller_->save();
    }
    return true;
  } catch (const std::exception& e) {
    on_error(QString::fromStdString(e.what()));
    return false;
  }
}

}  // namespace tessel::studio
