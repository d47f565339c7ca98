// Tuning benchmark: core/tune's search (the one `tessel tune` runs) on three kernels, on one thread,
// against the default schedule, and OpenBLAS sgemm for the GEMM in the same run:
//
//   kernel                    default       tuned     speed-up   reference
//   gemm 1024x1024x1024       ... GF/s      ... GF/s  ...x       OpenBLAS ... GF/s (tuned/OpenBLAS ...)
//   conv 3x3 64@56            ...
//   depthwise 3x3 144@56      ...
//
//   bench_tune [--trials N] [--min-time-ms MS]     (default 200 trials, 30 ms per measurement)
//
// Candidates are measured here, in this process (not in tessel-measure: these DAGs are built in
// code, not imported from a model): compiled by the llvm plugin, their output compared with the
// default schedule's on the same random inputs (a candidate that differs by more than 1e-3 of the
// output's largest magnitude counts as failed), then timed as the minimum of repeated calls. OpenBLAS
// runs its best kernel for the CPU (openblas_core.h); run it with OPENBLAS_L2_SIZE unset.
//
// The figures printed are not the search's own: on a shared machine the load changes between the
// default's measurement (the search's first) and the best one's, minutes later. After each search
// the default, the best schedule and (GEMM) OpenBLAS are timed again in alternation, call by call,
// and the table shows the minimum of each and the median of the per-round ratios; a second line
// gives the same by the thread's CPU clock, which the search's measurements use too (a kernel's
// time without the time the loaded machine took it off its core).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "core/compile/kernel_compiler.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/schedule.h"
#include "core/te/op_builders.h"
#include "core/tune/search.h"
#include "tests/bench/openblas_core.h"

extern "C" void openblas_set_num_threads(int);

using namespace tessel;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The CPU time of the calling thread. At one thread the kernels (and OpenBLAS) run on the caller,
// so this is a call's time without the time it was descheduled: on a shared, loaded machine two
// copies of the same schedule agree within 2 % by it, while their wall-clock minima came out 1.3x
// apart (session 10, tests/bench/RESULTS.md).
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The minimum thread-CPU time of one call, repeating until `min_time_s` of it has been spent (at
// least 3 calls).
double min_call_seconds(const std::function<void()>& call, double min_time_s) {
  call();  // warm-up
  double best = 1e30, spent = 0;
  for (int r = 0; r < 3 || spent < min_time_s; ++r) {
    const double t0 = thread_seconds();
    call();
    const double t = thread_seconds() - t0;
    best = std::min(best, t), spent += t;
  }
  return best;
}

std::vector<Tensor> random_args(const loopir::Func& f) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Tensor> args;
  for (const auto& p : f.params) {
    Tensor t(p->dtype, p->shape);
    if (p->dtype == DataType::kFloat32)
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    args.push_back(t);
  }
  return args;
}

// Compiles and times each schedule of one DAG in this process; the outputs of the first schedule
// measured (the search's candidate 0, the default) are the reference the others must match.
class InProcessMeasurer : public tune::Measurer {
 public:
  InProcessMeasurer(const te::ComputeDag& dag, Target target, double min_time_ms)
      : dag_(dag), target_(std::move(target)), min_time_s_(min_time_ms / 1000) {}

  std::vector<tune::Measurement> measure(const std::vector<std::string>& schedules) override {
    std::vector<tune::Measurement> out;
    for (const std::string& text : schedules) {
      tune::Measurement m;
      try {
        const loopir::Func f = lower::lower(dag_, schedule::parse_schedule(text)).func;
        auto module = build_module({f}, target_);
        std::vector<Tensor> args = random_args(f);
        std::vector<Tensor*> ptrs;
        for (auto& a : args) ptrs.push_back(&a);
        const auto call = [&] { module->call_host(f.name, ptrs); };
        call();
        check_outputs(args);
        m.ms_min = m.ms_median = 1000 * min_call_seconds(call, min_time_s_);
      } catch (const Error& e) {
        m.error = e.what();
      }
      out.push_back(m);
    }
    return out;
  }

 private:
  void check_outputs(const std::vector<Tensor>& args) {
    const size_t outputs = dag_.outputs.size();
    std::vector<std::vector<float>> got;
    for (size_t i = args.size() - outputs; i < args.size(); ++i)
      got.emplace_back(args[i].data<float>(), args[i].data<float>() + args[i].numel());
    if (reference_.empty()) {
      reference_ = std::move(got);
      return;
    }
    for (size_t o = 0; o < got.size(); ++o) {
      float scale = 0, error = 0;
      for (size_t i = 0; i < got[o].size(); ++i) {
        scale = std::max(scale, std::fabs(reference_[o][i]));
        error = std::max(error, std::fabs(got[o][i] - reference_[o][i]));
      }
      if (!(error <= 1e-3f * std::max(scale, 1.0f)))
        throw Error("wrong result: max |error| " + std::to_string(error) + " against the default schedule");
    }
  }

  const te::ComputeDag& dag_;
  Target target_;
  double min_time_s_;
  std::vector<std::vector<float>> reference_;
};

// A schedule of `dag` compiled, with its arguments, ready to call.
struct Compiled {
  loopir::Func func;
  std::unique_ptr<Module> module;
  std::vector<Tensor> args;
  std::vector<Tensor*> pointers;
  Compiled(const te::ComputeDag& dag, const std::string& schedule, const Target& target)
      : func(lower::lower(dag, schedule::parse_schedule(schedule)).func),
        module(build_module({func}, target)),
        args(random_args(func)) {
    for (auto& a : args) pointers.push_back(&a);
  }
  void call() { module->call_host(func.name, pointers); }
};

// Calls timed in alternation, one of each per round: minimum of each, and median of ratios to the
// first, by the wall clock and by the thread's CPU clock.
struct Alternation {
  std::vector<double> min, cpu_min;
  std::vector<double> median_ratio, cpu_median_ratio;  // median over rounds of time[0] / time[i]
};

Alternation alternate(const std::vector<std::function<void()>>& calls, int rounds) {
  for (const auto& c : calls) c();
  std::vector<std::vector<double>> t(calls.size()), cpu(calls.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < calls.size(); ++i) {
      const auto t0 = Clock::now();
      const double c0 = thread_seconds();
      calls[i]();
      cpu[i].push_back(thread_seconds() - c0);
      t[i].push_back(seconds_since(t0));
    }
  const auto median_ratio = [&](const std::vector<std::vector<double>>& times, size_t i) {
    std::vector<double> ratio;
    for (int r = 0; r < rounds; ++r)
      ratio.push_back(times[0][static_cast<size_t>(r)] / times[i][static_cast<size_t>(r)]);
    std::sort(ratio.begin(), ratio.end());
    return ratio[ratio.size() / 2];
  };
  Alternation a;
  for (size_t i = 0; i < calls.size(); ++i) {
    a.min.push_back(*std::min_element(t[i].begin(), t[i].end()));
    a.cpu_min.push_back(*std::min_element(cpu[i].begin(), cpu[i].end()));
    a.median_ratio.push_back(median_ratio(t, i));
    a.cpu_median_ratio.push_back(median_ratio(cpu, i));
  }
  return a;
}

struct Case {
  std::string name;
  te::ComputeDag dag;
  double flops;
  bool gemm = false;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string openblas_core = bench::use_best_openblas_core(argv);
  int trials = 200;
  double min_time_ms = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--trials") == 0)
      trials = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--min-time-ms") == 0)
      min_time_ms = std::atof(argv[i + 1]);
  }
  if (trials < 1 || min_time_ms <= 0) {
    std::fprintf(stderr, "usage: bench_tune [--trials N] [--min-time-ms MS]\n");
    return 2;
  }
  PluginManager::global().load_all();
  if (!CodeGenRegistry::global().has("llvm")) {
    std::fprintf(stderr, "bench_tune: the llvm plugin is not loaded\n");
    return 1;
  }
  const Target target = Target::parse("llvm -num_threads=1");
  ThreadPool::set_global_threads(1);
  openblas_set_num_threads(1);
  std::printf("bench_tune: %d trials per kernel, one thread, %s; %s\n", trials, target.str().c_str(),
              openblas_core.c_str());

  const te::Conv2dParams conv{1, 64, 56, 56, 64, 3, 3, 1, 1};
  const te::Conv2dParams depthwise{1, 144, 56, 56, 144, 3, 3, 1, 1};
  std::vector<Case> cases;
  cases.push_back({"gemm 1024x1024x1024", te::matmul_dag(1024, 1024, 1024), 2.0 * 1024 * 1024 * 1024, true});
  cases.push_back({"conv 3x3 64@56 nchw16c", te::conv2d_nchwc_dag(conv, 16), 2.0 * 64 * 56 * 56 * 64 * 9});
  cases.push_back({"depthwise 3x3 144@56", te::depthwise_conv2d_dag(depthwise), 2.0 * 144 * 56 * 56 * 9});

  std::printf("\n%-26s %7s %8s %9s %9s %9s %9s %10s\n", "kernel", "trials", "search", "default", "tuned", "speed-up",
              "OpenBLAS", "tuned/BLAS");
  for (const Case& c : cases) {
    const auto t0 = Clock::now();
    tune::SearchSpace space(c.dag, target_traits(target));
    InProcessMeasurer measurer(c.dag, target, min_time_ms);
    tune::SearchOptions options;
    options.trials = trials;
    options.batch = 8;
    options.explore = 2;
    const tune::SearchResult r = tune::search(space, measurer, options);
    const double search_s = seconds_since(t0);
    int failed = 0;
    for (const tune::Trial& t : r.trials) failed += t.result.error.empty() ? 0 : 1;
    if (r.best < 0 || r.trials.empty()) {
      std::printf("%-26s %7zu: no candidate ran (%d failed)\n", c.name.c_str(), r.trials.size(), failed);
      continue;
    }
    const tune::Trial& best = r.trials[static_cast<size_t>(r.best)];
    Compiled default_kernel(c.dag, r.trials[0].schedule, target), tuned_kernel(c.dag, best.schedule, target);
    std::vector<std::function<void()>> calls = {[&] { default_kernel.call(); }, [&] { tuned_kernel.call(); }};
    std::vector<float> a, b, out;
    if (c.gemm) {
      a.assign(1024 * 1024, 0.5f), b = a, out = a;
      calls.push_back([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1024, 1024, 1024, 1.0f, a.data(), 1024, b.data(), 1024,
                    0.0f, out.data(), 1024);
      });
    }
    // About 3 s of calls, at least 15 rounds: under load, 5 rounds of GEMM 1024³ gave minima that
    // ranked default and tuned the other way round from their median ratio.
    const double round_s = static_cast<double>(calls.size()) * std::max(1e-6, best.result.ms_min / 1000);
    const int rounds = std::clamp(static_cast<int>(3 / round_s), 15, 300);
    const Alternation t = alternate(calls, rounds);
    const auto gf = [&](double s) { return c.flops / s / 1e9; };
    std::printf("%-26s %7zu %6.0f s %6.1f GF %6.1f GF %8.2fx", c.name.c_str(), r.trials.size(), search_s, gf(t.min[0]),
                gf(t.min[1]), t.min[0] / t.min[1]);
    if (c.gemm) std::printf(" %6.1f GF %9.2fx", gf(t.min[2]), t.min[2] / t.min[1]);
    std::printf("\n  best: %s%s (%d failed of %zu; space of %.3g)\n", space.describe(best.candidate).c_str(),
                r.best == 0 ? ", the default schedule itself" : "", failed, r.trials.size(), space.size());
    std::printf("  in the search: default %.3f ms, best %.3f ms; alternating: median ratio default/tuned %.2fx",
                r.default_ms, best.result.ms_min, t.median_ratio[1]);
    if (c.gemm) std::printf(", tuned/OpenBLAS %.2fx (of the medians)", t.median_ratio[1] / t.median_ratio[2]);
    std::printf("\n  thread clock: default %.1f GF, tuned %.1f GF, speed-up %.2fx (median ratio %.2fx)",
                gf(t.cpu_min[0]), gf(t.cpu_min[1]), t.cpu_min[0] / t.cpu_min[1], t.cpu_median_ratio[1]);
    if (c.gemm) std::printf("; OpenBLAS %.1f GF, tuned/OpenBLAS %.2fx", gf(t.cpu_min[2]), t.cpu_min[2] / t.cpu_min[1]);
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
