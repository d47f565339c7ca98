#include "core/tune/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "core/lower/pipeline.h"
#include "core/support/error.h"

namespace tessel::tune {

namespace {

using Clock = std::chrono::steady_clock;

// A candidate ready to measure: its schedule and its loop program's features.
struct Lowered {
  Candidate candidate;
  std::string schedule;
  Features features{};
};

// Builds and lowers a candidate; nullopt when its schedule does not apply or does not lower.
std::optional<Lowered> lower_candidate(const SearchSpace& space, const Candidate& c) {
  std::optional<schedule::Schedule> s = space.schedule_of(c);
  if (!s) return std::nullopt;
  try {
    lower::LowerResult r = lower::lower(space.dag(), *s);
    return Lowered{c, schedule::to_text(*s), loop_features(r.func)};
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Higher is better: the model learns −log(ms), so a 2x speed-up is the same step at every scale.
double score(const Measurement& m) { return m.error.empty() && m.ms_min > 0 ? -std::log(m.ms_min) : -1e3; }

}  // namespace

class KernelSearch::Impl {
 public:
  Impl(const SearchSpace& space, Measurer& measurer, const SearchOptions& options,
       std::function<void(const Trial&)> on_trial, std::function<void(const SearchProgress&)> on_progress)
      : space_(space),
        measurer_(measurer),
        options_(options),
        rng_(options.seed),
        start_(Clock::now()),
        on_trial_(std::move(on_trial)),
        on_progress_(std::move(on_progress)) {}

  int step(int limit) {
    if (!started_) {
      started_ = true;
      // The default schedule first: the one to beat, and a correct row for the model.
      if ((default_ = lower_candidate(space_, space_.default_candidate()))) {
        measure_batch({*default_});
        return 1;
      }
    }
    const int n = std::min(room(), limit);
    if (n <= 0 || exhausted_) return 0;
    // Not in a batch of fewer than 4: a quarter of the budget or more would go to the default.
    const bool again = options_.remeasure_default && default_ && n >= 4;
    std::vector<Lowered> batch = next_batch(again ? n - 1 : n);
    if (batch.empty()) {
      exhausted_ = true;  // the space is exhausted
      return 0;
    }
    if (again) batch.push_back(*default_);
    measure_batch(batch);
    return static_cast<int>(batch.size());
  }

  bool exhausted() const { return exhausted_; }
  const SearchResult& result() const { return result_; }

  bool done() {
    if (static_cast<int>(result_.trials.size()) >= options_.trials) return true;
    if (options_.time_budget_s > 0 && elapsed_s() >= options_.time_budget_s) return true;
    if (options_.stop && options_.stop()) return result_.stopped = true;
    return false;
  }
  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  int room() const { return std::min(options_.batch, options_.trials - static_cast<int>(result_.trials.size())); }

 private:
  // Unseen candidates that lower, at most `count`, drawn by `draw`; gives up after many misses.
  // Different knob values can give the same schedule (a knob set to what the default would choose
  // anyway): a schedule already measured, or already drawn here, is skipped like a seen candidate.
  template <class Draw>
  std::vector<Lowered> fresh(int count, Draw draw) {
    std::vector<Lowered> out;
    std::set<std::string> drawn;
    for (int attempts = 0; static_cast<int>(out.size()) < count && attempts < 40 * count + 40; ++attempts) {
      Candidate c = draw();
      if (!seen_.insert(c).second) continue;
      auto l = lower_candidate(space_, c);
      if (!l || measured_schedules_.count(l->schedule) || !drawn.insert(l->schedule).second) continue;
      out.push_back(std::move(*l));
    }
    return out;
  }

  std::vector<Lowered> next_batch(const int n) {
    if (!model_.trained() || result_.trials.size() < 4) return fresh(n, [&] { return space_.random_candidate(rng_); });
    // Parents: the best measured candidates.
    std::vector<int> order(result_.trials.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return score(result_.trials[static_cast<size_t>(a)].result) >
             score(result_.trials[static_cast<size_t>(b)].result);
    });
    order.resize(std::min<size_t>(order.size(), 8));
    auto parent = [&]() -> const Candidate& {
      const size_t pick = std::uniform_int_distribution<size_t>(0, order.size() - 1)(rng_);
      return result_.trials[static_cast<size_t>(order[pick])].candidate;
    };
    std::vector<Lowered> children = fresh(16 * n, [&] {
      return (rng_() % 3 == 0) ? space_.crossover(parent(), parent(), rng_) : space_.mutate(parent(), rng_);
    });
    // Random candidates compete in the same ranking, so the model can pull the search out of the
    // neighbourhood of its first good candidates.
    for (auto& r : fresh(8 * n, [&] { return space_.random_candidate(rng_); })) children.push_back(std::move(r));
    // The two draws may have found the same schedule: keep the first.
    std::set<std::string> texts;
    std::erase_if(children, [&](const Lowered& l) { return !texts.insert(l.schedule).second; });
    std::sort(children.begin(), children.end(), [&](const Lowered& a, const Lowered& b) {
      return model_.predict(a.features) > model_.predict(b.features);
    });
    const int exploit = std::max(0, n - options_.explore);
    std::vector<Lowered> batch;
    for (auto& c : children) {
      if (static_cast<int>(batch.size()) >= exploit) {
        seen_.erase(c.candidate);  // not measured: may be drawn again later
        continue;
      }
      batch.push_back(std::move(c));
    }
    for (const Lowered& l : batch) measured_schedules_.insert(l.schedule);  // so the draw below skips them
    for (auto& r : fresh(n - static_cast<int>(batch.size()), [&] { return space_.random_candidate(rng_); }))
      batch.push_back(std::move(r));
    return batch;
  }

  void measure_batch(const std::vector<Lowered>& batch) {
    std::vector<std::string> schedules;
    for (const Lowered& l : batch) schedules.push_back(l.schedule);
    std::vector<Measurement> m = measurer_.measure(schedules);
    m.resize(batch.size(), Measurement{0, 0, "not measured"});
    for (size_t i = 0; i < batch.size(); ++i) {
      Trial t{batch[i].candidate, batch[i].schedule, m[i]};
      const bool is_default = default_ && batch[i].schedule == default_->schedule;
      if (is_default && m[i].error.empty() && (result_.default_ms == 0 || m[i].ms_min < result_.default_ms))
        result_.default_ms = m[i].ms_min;
      features_.push_back(batch[i].features);
      scores_.push_back(score(m[i]));
      if (m[i].error.empty() &&
          (result_.best < 0 || m[i].ms_min < result_.trials[static_cast<size_t>(result_.best)].result.ms_min))
        result_.best = static_cast<int>(result_.trials.size());
      result_.trials.push_back(t);
      seen_.insert(t.candidate);
      measured_schedules_.insert(t.schedule);
      if (on_trial_) on_trial_(t);
    }
    model_.fit(features_, scores_);
    if (on_progress_) {
      SearchProgress p;
      p.trials = static_cast<int>(result_.trials.size());
      p.budget = options_.trials;
      p.default_ms = result_.default_ms;
      p.best_ms = result_.best >= 0 ? result_.trials[static_cast<size_t>(result_.best)].result.ms_min : 0;
      p.elapsed_s = elapsed_s();
      on_progress_(p);
    }
  }

  const SearchSpace& space_;
  Measurer& measurer_;
  SearchOptions options_;
  std::mt19937_64 rng_;
  Clock::time_point start_;
  CostModel model_;
  std::set<Candidate> seen_;
  std::set<std::string> measured_schedules_;  // measured, or chosen for the batch being assembled
  std::vector<Features> features_;
  std::vector<double> scores_;
  SearchResult result_;
  std::function<void(const Trial&)> on_trial_;
  std::function<void(const SearchProgress&)> on_progress_;
  bool started_ = false, exhausted_ = false;
  std::optional<Lowered> default_;  // the default schedule, lowered (nullopt: it does not lower)
};

KernelSearch::KernelSearch(const SearchSpace& space, Measurer& measurer, const SearchOptions& options,
                           std::function<void(const Trial&)> on_trial,
                           std::function<void(const SearchProgress&)> on_progress)
    : impl_(std::make_unique<Impl>(space, measurer, options, std::move(on_trial), std::move(on_progress))) {}
KernelSearch::KernelSearch(KernelSearch&&) noexcept = default;
KernelSearch::~KernelSearch() = default;

int KernelSearch::step(int limit) { return impl_->step(limit); }
bool KernelSearch::done() { return impl_->done(); }
bool KernelSearch::exhausted() const { return impl_->exhausted(); }
const SearchResult& KernelSearch::result() const { return impl_->result(); }

SearchResult search(const SearchSpace& space, Measurer& measurer, const SearchOptions& options,
                    const std::function<void(const Trial&)>& on_trial,
                    const std::function<void(const SearchProgress&)>& on_progress) {
  KernelSearch s(space, measurer, options, on_trial, on_progress);
  s.step();  // the default schedule, whatever the budget says
  while (!s.done() && s.step() > 0) {
  }
  return s.result();
}

}  // namespace tessel::tune
