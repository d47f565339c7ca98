#include "views/tune/tuning_runner.h"

#include <QMetaObject>
#include <algorithm>
#include <chrono>
#include <map>

#include "core/compile/kernel_compiler.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "core/tune/process_measurer.h"
#include "core/tune/records.h"
#include "core/tune/search.h"
#include "views/edit/kernel_lowering.h"
#include "views/edit/measure_protocol.h"

namespace tessel::views {

namespace {

// The process measurer, keeping each batch's full replies by schedule text: the search keeps only
// times, the roofline wants FLOP/s and intensity too.
class RecordingMeasurer : public tune::Measurer {
 public:
  explicit RecordingMeasurer(tune::ProcessMeasurer& inner) : inner_(inner) {}

  std::vector<tune::Measurement> measure(const std::vector<std::string>& schedules) override {
    replies_.clear();
    inner_.on_measured = [&](size_t index, const measure::KernelMeasured& reply) {
      if (index < schedules.size()) replies_[schedules[index]] = reply;
    };
    std::vector<tune::Measurement> out = inner_.measure(schedules);
    inner_.on_measured = nullptr;
    return out;
  }

  const measure::KernelMeasured* reply(const std::string& schedule) const {
    auto it = replies_.find(schedule);
    return it == replies_.end() ? nullptr : &it->second;
  }

 private:
  tune::ProcessMeasurer& inner_;
  std::map<std::string, measure::KernelMeasured> replies_;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

TuningRunner::TuningRunner(QObject* parent) : QObject(parent) {}

TuningRunner::~TuningRunner() {
  stop();
  join();
}

void TuningRunner::join() {
  if (worker_.joinable()) worker_.join();
}

bool TuningRunner::start(TuningJob job) {
  if (is_running()) return false;
  join();  // the previous job's thread has ended (done_), but is not joined yet
  stop_ = std::make_shared<std::atomic<bool>>(false);
  done_ = false;
  worker_ = std::thread([this, job = std::move(job)] { run(job); });
  return true;
}

void TuningRunner::stop() {
  if (stop_) stop_->store(true);
}

void TuningRunner::run(const TuningJob& job) {
  // Everything reaches the UI thread as a queued call on this object; the destructor joins this
  // thread first, so `this` outlives every post.
  auto post = [this](auto emit) { QMetaObject::invokeMethod(this, std::move(emit), Qt::QueuedConnection); };
  const std::shared_ptr<std::atomic<bool>> stop = stop_;
  const Clock::time_point job_start = Clock::now();
  const std::filesystem::path program =
      job.measure_program.empty() ? tune::ProcessMeasurer::default_program() : job.measure_program;
  auto summary = std::make_shared<TuningSummary>();
  summary->records_log = job.records_log;

  try {
    // Records name the target in its full form, as `tessel tune` writes and `tessel build --records`
    // looks it up ("llvm" → "llvm -fast_math=false … -vector_bits=512").
    const Target parsed = Target::parse(job.model.target);
    const std::string target = parsed.str();
    const TargetTraits traits = target_traits(parsed);
    // Kernels that run on the reference kernels (no tensor expression), or that the target's
    // schedules do not take (an accelerator's host kernels), have nothing to search.
    std::vector<std::pair<std::string, tune::SearchSpace>> kernels;
    for (const std::string& kernel : job.kernels) {
      std::string why;
      auto dag = job.snapshot ? kernel_dag(*job.snapshot, kernel, &why) : std::nullopt;
      if (!dag) continue;
      tune::SearchSpace space(std::move(*dag), traits);
      if (space.unsupported().empty()) kernels.emplace_back(kernel, std::move(space));
    }
    QStringList names;
    for (const auto& [kernel, space] : kernels) names << QString::fromStdString(kernel);
    post([this, names] { Q_EMIT started(names); });
    const int kernel_count = static_cast<int>(kernels.size());
    const int budget = job.trials * kernel_count;
    for (int ki = 0; ki < kernel_count && !stop->load(); ++ki) {
      const std::string& kernel = kernels[static_cast<size_t>(ki)].first;
      const tune::SearchSpace& space = kernels[static_cast<size_t>(ki)].second;
      const std::string key = tune::kernel_key(space.dag());
      tune::ProcessMeasurer process(program, job.model, kernel, job.min_time_ms);
      RecordingMeasurer measurer(process);

      tune::SearchOptions options;
      options.trials = job.trials;
      options.batch = std::max(1, job.batch);
      options.explore = std::max(1, options.batch / 4);
      options.seed = job.seed;
      options.stop = [stop] { return stop->load(); };
      if (job.time_budget_s > 0) {
        const double left = job.time_budget_s - seconds_since(job_start);
        if (left <= 0) break;
        options.time_budget_s = left / (kernel_count - ki);  // shared out among the kernels left
      }

      int index = 0;
      double best = 0, default_ms = 0;
      auto on_trial = [&](const tune::Trial& t) {
        tune::append_record(job.records_log,
                            {key, kernel, target, t.schedule, t.result.ms_min, t.result.ms_median, t.result.error});
        const bool ok = t.result.error.empty();
        if (index == 0 && ok) default_ms = t.result.ms_min;
        const bool better = ok && (best == 0 || t.result.ms_min < best);
        if (better) best = t.result.ms_min;
        ++summary->trials;
        if (!ok) ++summary->failed;
        auto trial = std::make_shared<const TuningTrial>(TuningTrial{
            kernel, index++, t.schedule, t.result.ms_min, t.result.ms_median, t.result.error, best, default_ms});
        post([this, trial] { Q_EMIT trial_measured(trial); });
        if (!better) return;
        auto found = std::make_shared<TuningBest>();
        found->kernel = kernel;
        found->schedule = t.schedule;
        found->ms = t.result.ms_min;
        if (const measure::KernelMeasured* reply = measurer.reply(t.schedule)) {
          const measure::Reply r{0, *reply};
          found->measurement = measurement_from_reply(kernel, 0, &r, "");
        }
        post([this, found = TuningBestPtr(found)] { Q_EMIT improved(found); });
      };
      auto on_progress = [&](const tune::SearchProgress&) {
        auto p = std::make_shared<TuningProgress>();
        p->kernel = kernel;
        p->kernel_index = ki;
        p->kernel_count = kernel_count;
        p->trials = summary->trials;
        p->failed = summary->failed;
        p->budget = budget;
        p->elapsed_s = seconds_since(job_start);
        p->left_s = p->trials > 0 ? p->elapsed_s / p->trials * std::max(0, budget - p->trials) : 0;
        if (job.time_budget_s > 0) p->left_s = std::min(p->left_s, std::max(0.0, job.time_budget_s - p->elapsed_s));
        post([this, p = TuningProgressPtr(p)] { Q_EMIT progress(p); });
      };
      const tune::SearchResult r = tune::search(space, measurer, options, on_trial, on_progress);
      if (r.stopped) summary->stopped = true;
    }
  } catch (const std::exception& e) {
    summary->error = e.what();
  }
  if (stop->load()) summary->stopped = true;
  post([this, summary = TuningSummaryPtr(summary)] {
    done_ = true;
    Q_EMIT finished(summary);
  });
}

}  // namespace tessel::views
