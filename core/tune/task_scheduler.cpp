#include "core/tune/task_scheduler.h"

#include <chrono>
#include <limits>

#include "core/support/error.h"

namespace tessel::tune {

namespace {

using Clock = std::chrono::steady_clock;

double best_ms(const SearchResult& r) { return r.best >= 0 ? r.trials[static_cast<size_t>(r.best)].result.ms_min : 0; }

// What a task gained with its last batch: its best before it, and the batch's trials.
struct LastBatch {
  double best_before_ms = 0;
  int trials = 0;
};

class Scheduler {
 public:
  Scheduler(const std::vector<TuningTask>& tasks, const SchedulerOptions& options,
            const std::function<void(int, const Trial&)>& on_trial,
            const std::function<void(const SchedulerProgress&)>& on_progress)
      : tasks_(tasks), options_(options), on_progress_(on_progress), last_(tasks.size()), finished_(tasks.size()) {
    SearchOptions o = options.search;
    o.trials = options.trials;  // a task may get the whole budget; the scheduler stops it sooner
    o.time_budget_s = 0;
    o.stop = {};
    searches_.reserve(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
      if (!tasks[i].space || !tasks[i].measurer) throw Error("tune_tasks: task '" + tasks[i].name + "' is incomplete");
      auto trial = [&on_trial, i](const Trial& t) {
        if (on_trial) on_trial(static_cast<int>(i), t);
      };
      searches_.emplace_back(*tasks[i].space, *tasks[i].measurer, o, trial);
    }
  }

  SchedulerResult run() {
    SchedulerResult result;
    // First round: every task's default schedule, which gives its weight in the model.
    for (size_t i = 0; i < tasks_.size() && !out_of_budget(); ++i) {
      if ((result.stopped = stop_asked())) break;
      run_batch(static_cast<int>(i), 1);
    }
    while (!result.stopped && !out_of_budget()) {
      if ((result.stopped = stop_asked())) break;
      const int next = most_promising();
      if (next < 0) break;  // every task's space is measured out
      run_batch(next, options_.trials - used_);
    }
    for (const KernelSearch& s : searches_) result.tasks.push_back(s.result());
    return result;
  }

 private:
  bool out_of_budget() const {
    return used_ >= options_.trials || (options_.time_budget_s > 0 && elapsed_s() >= options_.time_budget_s);
  }
  bool stop_asked() const { return options_.stop && options_.stop(); }
  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void run_batch(int task, int limit) {
    KernelSearch& s = searches_[static_cast<size_t>(task)];
    const double before = best_ms(s.result());
    const int measured = s.step(limit);
    if (measured == 0) {
      finished_[static_cast<size_t>(task)] = true;
      return;
    }
    last_[static_cast<size_t>(task)] = {before, measured};
    used_ += measured;
    report(task);
  }

  // The gain per trial of the note in the header; ties go to the task listed first.
  double gain(size_t i) const {
    const SearchResult& r = searches_[i].result();
    const double trials = static_cast<double>(r.trials.size());
    const double best = best_ms(r);
    if (trials == 0) return std::numeric_limits<double>::infinity();
    // Nothing correct yet: one more batch may find something, after that it has had its chance.
    if (best <= 0) return trials < 2 ? std::numeric_limits<double>::infinity() : 0;
    const LastBatch& last = last_[i];
    const double recent = last.trials > 0 && last.best_before_ms > 0
                              ? (last.best_before_ms - best) / static_cast<double>(last.trials)
                              : 0;
    const double alpha = options_.recent_weight;
    return tasks_[i].occurrences * (alpha * recent + (1 - alpha) * best / trials);
  }

  int most_promising() const {
    int pick = -1;
    double top = -1;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (finished_[i] || searches_[i].exhausted()) continue;
      const double g = gain(i);
      if (g > top) top = g, pick = static_cast<int>(i);
    }
    return pick;
  }

  void report(int task) const {
    if (!on_progress_) return;
    SchedulerProgress p;
    p.trials = used_;
    p.budget = options_.trials;
    p.task = task;
    p.elapsed_s = elapsed_s();
    for (size_t i = 0; i < searches_.size(); ++i) {
      const SearchResult& r = searches_[i].result();
      TaskStatus t{static_cast<int>(r.trials.size()), r.default_ms, best_ms(r)};
      if (t.default_ms > 0 && t.best_ms > 0) {
        p.default_model_ms += tasks_[i].occurrences * t.default_ms;
        p.best_model_ms += tasks_[i].occurrences * t.best_ms;
      }
      p.tasks.push_back(t);
    }
    on_progress_(p);
  }

  const std::vector<TuningTask>& tasks_;
  const SchedulerOptions& options_;
  std::function<void(const SchedulerProgress&)> on_progress_;
  std::vector<KernelSearch> searches_;
  std::vector<LastBatch> last_;
  std::vector<bool> finished_;
  int used_ = 0;
  Clock::time_point start_ = Clock::now();
};

}  // namespace

SchedulerResult tune_tasks(const std::vector<TuningTask>& tasks, const SchedulerOptions& options,
                           const std::function<void(int task, const Trial&)>& on_trial,
                           const std::function<void(const SchedulerProgress&)>& on_progress) {
  return Scheduler(tasks, options, on_trial, on_progress).run();
}

}  // namespace tessel::tune
