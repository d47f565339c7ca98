#pragma once
// The studio's tuner: core/tune's search over one kernel or every kernel of the model, on a worker
// thread, measuring each batch in tessel-measure exactly as `tessel tune` does (the same
// tune::ProcessMeasurer), appending every trial to the session's records log as it is measured.
//
//   UI thread                        worker thread                        tessel-measure (process)
//   start(job) ─────────────────────▶ per kernel: tune::search ──batch──▶ compile, verify, time
//        ▲ trial_measured(trial) ◀─┬─ on_trial: append_record(log) ◀───── replies
//        │ improved(best)      ◀───┤  (a faster correct schedule: its schedule + the measurement,
//        │ progress(progress)  ◀───┘   so the roofline point moves)
//        └ finished(summary)   ◀──── the budget is spent, stop() was asked, or an error
//
// stop() is honoured between batches: the batch being measured finishes and is logged, so Stop
// keeps everything measured. The results are immutable values (shared_ptr<const>) emitted on the
// UI thread. Destroying the runner stops it and waits for that batch.
//
// Usage (the mediator in app/studio):
//   runner->start({.snapshot = snap, .model = {path, target, pass_options}, .kernels = {"fused_dense_0"},
//                  .trials = 32, .records_log = "/home/u/mlp.records.jsonl"});
//   connect(runner, &TuningRunner::trial_measured, ...);  connect(runner, &TuningRunner::finished, ...);
#include <QObject>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/measure/protocol.h"
#include "views/common/kernel_results.h"
#include "views/common/snapshot.h"

namespace tessel::views {

struct TuningJob {
  StudioSnapshotPtr snapshot;        // the kernels' tensor expressions come from its fusion groups
  measure::ModelRef model;           // what the measuring process imports (path, target, pass options)
  std::vector<std::string> kernels;  // tuned in this order; kernels without a tensor expression are skipped
  int trials = 32;                   // per kernel, the default schedule's included
  double time_budget_s = 0;          // for the whole job, shared out among the kernels left; 0: none
  int batch = 4;                     // candidates per measuring-process run (Stop waits for one batch)
  double min_time_ms = 40;           // each candidate is timed for at least this long
  uint64_t seed = 1;
  std::string records_log;                // appended to (core/tune/records.h)
  std::filesystem::path measure_program;  // empty: tune::ProcessMeasurer::default_program()
};

// One measured candidate.
struct TuningTrial {
  std::string kernel;
  int index = 0;         // within its kernel; 0 is the default schedule
  std::string schedule;  // schedule::to_text
  double ms_min = 0, ms_median = 0;
  std::string error;      // "" when it ran and was correct
  double best_ms = 0;     // the kernel's best correct time after this trial; 0: none yet
  double default_ms = 0;  // the default schedule's time; 0: unknown or it failed
  bool ok() const { return error.empty(); }
};
using TuningTrialPtr = std::shared_ptr<const TuningTrial>;

// A kernel's best schedule improved.
struct TuningBest {
  std::string kernel;
  std::string schedule;           // schedule::to_text
  double ms = 0;                  // ms_min, the search's measure
  KernelMeasurement measurement;  // as the edit loop reports one (the roofline plots it)
};
using TuningBestPtr = std::shared_ptr<const TuningBest>;

struct TuningProgress {
  std::string kernel;  // being tuned
  int kernel_index = 0, kernel_count = 0;
  int trials = 0, failed = 0, budget = 0;  // the whole job's
  double elapsed_s = 0;
  double left_s = 0;  // estimated: the trials left at the pace so far, or the time budget left if less
};
using TuningProgressPtr = std::shared_ptr<const TuningProgress>;

struct TuningSummary {
  int trials = 0, failed = 0;
  bool stopped = false;  // stop() ended it before its budget
  std::string error;     // the job could not go on (no measuring process, an unwritable log)
  std::string records_log;
};
using TuningSummaryPtr = std::shared_ptr<const TuningSummary>;

class TuningRunner : public QObject {
  Q_OBJECT

 public:
  explicit TuningRunner(QObject* parent = nullptr);
  ~TuningRunner() override;

  // Starts a job; false (nothing started) while one is running.
  bool start(TuningJob job);
  // Asks the running job to end after the batch being measured; `finished` follows.
  void stop();
  bool is_running() const { return worker_.joinable() && !done_; }

 Q_SIGNALS:
  void started(const QStringList& kernels);  // those that will be tuned, in order
  void trial_measured(tessel::views::TuningTrialPtr trial);
  void improved(tessel::views::TuningBestPtr best);
  void progress(tessel::views::TuningProgressPtr progress);
  void finished(tessel::views::TuningSummaryPtr summary);

 private:
  void run(const TuningJob& job);  // the worker thread
  void join();

  std::thread worker_;
  std::shared_ptr<std::atomic<bool>> stop_;
  bool done_ = true;
};

}  // namespace tessel::views

Q_DECLARE_METATYPE(tessel::views::TuningTrialPtr)
Q_DECLARE_METATYPE(tessel::views::TuningBestPtr)
Q_DECLARE_METATYPE(tessel::views::TuningProgressPtr)
Q_DECLARE_METATYPE(tessel::views::TuningSummaryPtr)
