#pragma once
// A long job in the status bar that cannot say how far it is (the measuring process calibrating
// the machine): what it does, a busy bar, the seconds so far and a Cancel button. Hidden while
// nothing runs.
//
//   auto* job = new JobIndicator(statusBar());
//   job->on_cancel = [loop] { loop->cancel_calibration(); };
//   job->start(tr("Calibrating machine ceilings"));   ...   job->finish();
#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>
#include <functional>

class QLabel;
class QProgressBar;
class QToolButton;

namespace tessel::studio {

class JobIndicator final : public QWidget {
 public:
  explicit JobIndicator(QWidget* parent = nullptr);
  void start(const QString& what);
  void finish();
  bool running() const { return running_; }
  QString text() const;
  QToolButton* cancel_button() const { return cancel_; }
  std::function<void()> on_cancel = [] {};

 private:
  void tick();

  QLabel* label_;
  QProgressBar* bar_;
  QToolButton* cancel_;
  QTimer timer_;
  QElapsedTimer elapsed_;
  QString what_;
  bool running_ = false;
};

}  // namespace tessel::studio
