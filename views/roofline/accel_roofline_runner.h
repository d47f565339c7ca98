#pragma once
// Computes an accelerator's roofline (analysis::accel_roofline) for a snapshot on a worker thread:
// every kernel the accelerator takes, compiled and simulated with 1 and with 2 virtual threads.
// The UI thread only starts it and receives the result; a newer start (or cancel) makes an older
// result stale, and a stale result is dropped.
//
//   mediator: controller.compiled(snap) ──▶ runner.start(snap)   (only when snap's target is an accelerator)
//             runner.ready(roofline)    ──▶ roofline pane
//
// Usage:
//   auto* runner = new AccelRooflineRunner(parent);
//   connect(runner, &AccelRooflineRunner::ready, pane, [pane](auto r) { pane->set_accelerator_roofline(r); });
//   runner->start(snapshot);
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include "core/analysis/accel_roofline.h"
#include "views/common/snapshot.h"

namespace tessel::views {

class AccelRooflineRunner : public QObject {
  Q_OBJECT

 public:
  explicit AccelRooflineRunner(QObject* parent = nullptr);
  ~AccelRooflineRunner() override;  // waits for a running worker

  // Whether the snapshot's target is an accelerator (a kind with a `gemm` option) whose graph compiled.
  static bool applies_to(const StudioSnapshot& snapshot);
  // Starts the computation when applies_to(snapshot); returns whether it started.
  bool start(const StudioSnapshotPtr& snapshot);
  void cancel();  // the running computation's result will be dropped
  bool busy() const { return busy_; }
  bool wait_until_idle(int timeout_ms);

 Q_SIGNALS:
  void started();
  void ready(const tessel::analysis::AccelRooflinePtr& roofline);
  void failed(const QString& error);

 private:
  struct Outcome {
    analysis::AccelRooflinePtr roofline;
    std::string error;
  };
  QThreadPool pool_;  // own pool: the destructor waits for a stale worker too
  QFutureWatcher<Outcome>* watcher_ = nullptr;
  int generation_ = 0;
  bool busy_ = false;
};

}  // namespace tessel::views

Q_DECLARE_METATYPE(tessel::analysis::AccelRooflinePtr)
