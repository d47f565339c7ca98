#pragma once
// The one gate before the open session is replaced, and the saving it may need. Every path that
// replaces the session (Open, recent files, the Welcome page, lessons, drag and drop, the command
// palette, restoring a recovery, closing) asks confirm_replace() first: with unsaved edits it asks
// Save / Discard / Cancel, naming what would be lost (the target, the pass options, the kernels
// scheduled by hand).
//
//   SessionGate gate(window, controller);
//   if (!gate.confirm_replace(tr("Opening %1").arg(name))) return;   // Cancel: nothing happens
#include <QMessageBox>
#include <QString>
#include <functional>

#include "views/session/session_controller.h"

namespace tessel::studio {

class SessionGate {
 public:
  SessionGate(QWidget* parent, views::SessionController* controller);

  // True when there is nothing unsaved, or the user saved or discarded it; false on Cancel (or
  // when saving failed or was canceled). `replacement` says what replaces the session ("Opening
  // resnet.onnx", "Starting the lesson …").
  bool confirm_replace(const QString& replacement);
  // Saves the session: in its file, or (no file yet, or `ask_path`) where ask_save_path says. True
  // when saved; a failure goes to on_error.
  bool save(bool ask_path);

  // How the gate asks. Tests replace these to press the buttons; the defaults are a modal
  // QMessageBox (Save / Discard / Cancel) and a QFileDialog.
  std::function<QMessageBox::StandardButton(const QString& title, const QString& text)> ask_unsaved;
  std::function<QString(const QString& suggested_name)> ask_save_path;
  // A session saved under a new name (the window lists it in recent files), a failure to save.
  std::function<void(const QString& path)> on_saved_as = [](const QString&) {};
  std::function<void(const QString& message)> on_error = [](const QString&) {};

 private:
  views::SessionController* controller_;
};

}  // namespace tessel::studio
