#pragma once
// Evolutionary search over one kernel's SearchSpace, guided by a CostModel trained on what has been
// measured so far (the TVM/Ansor loop, small):
//
//   measure the default schedule (candidate 0), then a batch of random candidates
//   repeat until the trial or time budget is spent, or stop() says so:
//     population = best measured so far + random
//     children   = mutations and crossovers of the population (many), deduplicated, lowered
//     rank them by the model's prediction; measure the top (batch − explore) and `explore` random
//     ones; refit the model on every measurement (score = −log ms; failures get the worst score)
//
// Measuring is the caller's (a Measurer): `tessel tune` runs each batch in `tessel-measure`, the
// sandboxed measuring process, which checks every result against the reference kernels first.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tune/cost_model.h"
#include "core/tune/search_space.h"

namespace tessel::tune {

struct Measurement {
  double ms_min = 0, ms_median = 0;
  std::string error;  // "" when it ran and was correct
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  // One measurement per schedule, in order (schedule::to_text each).
  virtual std::vector<Measurement> measure(const std::vector<std::string>& schedules) = 0;
};

struct SearchOptions {
  int trials = 64;           // measurements in all, the default schedule's included
  double time_budget_s = 0;  // 0: none
  int batch = 8;             // measured together (one measuring-process run)
  int explore = 2;           // of each batch, chosen at random rather than by the model
  uint64_t seed = 1;
  std::function<bool()> stop;  // asked between batches (Ctrl-C)
  // Measure the default schedule again in every batch (one of its places): on a noisy machine the
  // best of many candidates, each measured once, beats a default measured once by luck alone. The
  // default's time is then the minimum of as many measurements, taken in the same windows as the
  // candidates', so a candidate wins only by being faster. Each measurement is a trial (and a record);
  // batches of fewer than 4 leave it out.
  bool remeasure_default = false;
};

struct Trial {
  Candidate candidate;
  std::string schedule;  // schedule::to_text
  Measurement result;
};

struct SearchProgress {
  int trials = 0, budget = 0;
  double default_ms = 0, best_ms = 0;  // 0 until known
  double elapsed_s = 0;
};

struct SearchResult {
  std::vector<Trial> trials;  // in the order measured
  double default_ms = 0;      // the default schedule's time (0: it failed)
  int best = -1;              // index into trials of the fastest correct one; -1: none
  bool stopped = false;       // stop() ended it early
};

// One kernel's search, a batch at a time, for a caller that decides when it goes on: the task
// scheduler (task_scheduler.h) spreads a model's trials over its kernels this way. `on_trial` sees
// every trial as soon as its batch is measured (append it to the log there), and `on_progress` once
// per batch. `space` and `measurer` must outlive it.
class KernelSearch {
 public:
  KernelSearch(const SearchSpace& space, Measurer& measurer, const SearchOptions& options,
               std::function<void(const Trial&)> on_trial = {},
               std::function<void(const SearchProgress&)> on_progress = {});
  KernelSearch(KernelSearch&&) noexcept;
  ~KernelSearch();

  // Measures the next batch, of at most `limit` candidates (and the options' batch and trials): the
  // default schedule alone first, then the model's picks. Returns how many were measured: 0 when
  // the budget of the options is spent or no unmeasured candidate is left (exhausted() then).
  int step(int limit = std::numeric_limits<int>::max());
  // The options' trial or time budget is spent, or stop() said so (the result says which).
  bool done();
  bool exhausted() const;  // every candidate the draws can find has been measured
  const SearchResult& result() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The whole search of one kernel: KernelSearch stepped until done() or exhausted().
SearchResult search(const SearchSpace& space, Measurer& measurer, const SearchOptions& options,
                    const std::function<void(const Trial&)>& on_trial = {},
                    const std::function<void(const SearchProgress&)>& on_progress = {});

}  // namespace tessel::tune
