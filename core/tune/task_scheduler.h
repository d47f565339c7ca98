#pragma once
// Spreading a model's trial budget over its kernels (the idea of Ansor's task scheduler, small).
// Tuning every kernel for the same number of trials spends as much on an add that takes 1% of the
// model as on the convs that take 20%. Here a task is one distinct computation (a kernel key) with
// the number of kernels of the model that compute it; batch after batch, the task whose next batch
// promises the largest saving of the model's time measures next:
//
//   first round: every task measures its default schedule          → best_i, the model's time Σ n_i·best_i
//   then repeat: measure a batch of the task with the largest
//
//     gain_i = n_i · ( α · (best_i before its last batch − best_i now) / that batch's trials   ← what it just gained
//                    + (1 − α) · best_i / trials_i )                                           ← what is left to gain
//
//   with n_i its kernels in the model, best_i its fastest time so far, trials_i its trials so far.
//   The second term alone gives each task trials in proportion to its share of the model's time
//   (best_i / trials_i falls as trials go in); the first moves trials to the tasks still improving.
//
//   trials: conv 512 ×3, 1.2 ms   ████████████████████
//           conv 256 ×3, 1.0 ms   ████████████████
//           dense    ×1, 0.3 ms   ███
//           add+relu ×8, 0.02 ms  ▏ (its default schedule only)
//
// Each task's search is a KernelSearch (search.h), stepped one batch at a time; every trial reaches
// on_trial as it is measured, so Ctrl-C (stop) keeps everything measured.
#include <functional>
#include <string>
#include <vector>

#include "core/tune/search.h"

namespace tessel::tune {

struct TuningTask {
  std::string name;     // for progress lines: the first kernel's name
  int occurrences = 1;  // kernels of the model with this computation (the same kernel key)
  const SearchSpace* space = nullptr;
  Measurer* measurer = nullptr;  // measures schedules of this kernel
};

struct SchedulerOptions {
  int trials = 64;             // measurements over all tasks, the defaults included
  double time_budget_s = 0;    // over all tasks; 0: none
  SearchOptions search;        // each task's batch, explore and seed (not its trials, time or stop)
  double recent_weight = 0.2;  // α above: Ansor's default
  std::function<bool()> stop;  // asked between batches (Ctrl-C)
};

struct TaskStatus {
  int trials = 0;
  double default_ms = 0, best_ms = 0;  // 0 until known
};

struct SchedulerProgress {
  int trials = 0, budget = 0;
  int task = -1;  // the task whose batch was just measured
  std::vector<TaskStatus> tasks;
  double default_model_ms = 0, best_model_ms = 0;  // Σ occurrences × time, over the tasks with both times
  double elapsed_s = 0;
};

struct SchedulerResult {
  std::vector<SearchResult> tasks;  // in the order of the tasks given
  bool stopped = false;             // stop() ended it early
};

SchedulerResult tune_tasks(const std::vector<TuningTask>& tasks, const SchedulerOptions& options,
                           const std::function<void(int task, const Trial&)>& on_trial = {},
                           const std::function<void(const SchedulerProgress&)>& on_progress = {});

}  // namespace tessel::tune
