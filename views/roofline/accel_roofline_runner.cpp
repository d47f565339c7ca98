#include "views/roofline/accel_roofline_runner.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "core/compile/kernel_compiler.h"
#include "core/support/error.h"
#include "core/target/target_traits.h"

namespace tessel::views {

AccelRooflineRunner::AccelRooflineRunner(QObject* parent) : QObject(parent) { pool_.setMaxThreadCount(1); }

AccelRooflineRunner::~AccelRooflineRunner() {
  cancel();
  pool_.waitForDone();
}

bool AccelRooflineRunner::applies_to(const StudioSnapshot& snapshot) {
  if (!snapshot.optimized || !snapshot.fusion || snapshot.has_errors()) return false;
  try {
    return target_traits(Target::parse(snapshot.target)).is_accelerator();
  } catch (const Error&) {
    return false;  // a kind whose plugin is not loaded here
  }
}

bool AccelRooflineRunner::start(const StudioSnapshotPtr& snapshot) {
  cancel();
  if (!snapshot || !applies_to(*snapshot)) return false;
  const int generation = ++generation_;
  busy_ = true;
  Q_EMIT started();
  watcher_ = new QFutureWatcher<Outcome>(this);
  QObject::connect(watcher_, &QFutureWatcherBase::finished, this, [this, generation] {
    if (generation != generation_) return;
    const Outcome outcome = watcher_->result();
    watcher_->deleteLater();
    watcher_ = nullptr;
    busy_ = false;
    if (outcome.roofline)
      Q_EMIT ready(outcome.roofline);
    else
      Q_EMIT failed(QString::fromStdString(outcome.error));
  });
  // The snapshot is immutable and shared: the worker reads it while the UI thread may drop it.
  watcher_->setFuture(QtConcurrent::run(&pool_, [snapshot]() -> Outcome {
    try {
      const Target target = Target::parse(snapshot->target);
      return {std::make_shared<const analysis::AccelRoofline>(
                  analysis::accel_roofline(*snapshot->optimized, *snapshot->fusion, target)),
              {}};
    } catch (const std::exception& e) {
      return {nullptr, e.what()};
    }
  }));
  return true;
}

void AccelRooflineRunner::cancel() {
  ++generation_;
  busy_ = false;
  if (!watcher_) return;
  watcher_->disconnect(this);
  // Let the old worker finish on its own; its watcher deletes itself then.
  if (watcher_->isFinished())
    watcher_->deleteLater();
  else
    QObject::connect(watcher_, &QFutureWatcherBase::finished, watcher_, &QObject::deleteLater);
  watcher_ = nullptr;
}

bool AccelRooflineRunner::wait_until_idle(int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  while (busy_ && timer.elapsed() < timeout_ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  QCoreApplication::processEvents();
  return !busy_;
}

}  // namespace tessel::views
