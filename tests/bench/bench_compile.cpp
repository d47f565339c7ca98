// bench_compile: compile latency for the studio's edit loop, measured through the llvm plugin.
//
//   one kernel:   conv 3x3, 64→64 channels, 56x56 (ResNet-18's first stage): default schedule →
//                 lower → LLVM IR → O3 → JIT, median of repeats. Goal < 150 ms.
//   whole model:  a ResNet-18-sized graph built here (weights random): graph passes → one kernel
//                 per fusion group → lower → codegen → JIT. Goal < 10 s.
//
// The reference, measured in the same run: the same conv kernel through the c plugin (the system
// C compiler at -O2, then dlopen), printed as a ratio beside the llvm figure.
//
//   bench_compile [--smoke] [--target SPEC]   --smoke: fewer repeats (a ctest that fails only when a
//                                             step fails); SPEC: an llvm target (default `llvm`)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "core/compile/compiled_model.h"
#include "core/graph/op_table.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/schedule/default_schedule.h"
#include "core/support/timing.h"
#include "core/te/op_builders.h"
#include "tests/bench/resnet_graph.h"

using namespace tessel;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct KernelTimes {
  double lower_ms = 0, codegen_ms = 0;
  double total() const { return lower_ms + codegen_ms; }
};

// Default schedule + lowering, then the target's code generator (for llvm: IR, O3, JIT).
// `lanes`: the SIMD width the default schedule plans for (the llvm target's, for both backends).
KernelTimes compile_kernel_once(const te::ComputeDag& dag, const Target& target, int64_t lanes) {
  KernelTimes t;
  auto start = Clock::now();
  loopir::Func f = lower::lower(dag, schedule::default_cpu_schedule(dag, lanes)).func;
  t.lower_ms = ms_since(start);
  start = Clock::now();
  std::unique_ptr<Module> module = build_module({f}, target);
  t.codegen_ms = ms_since(start);
  if (!module->has_kernel(f.name)) throw Error("the compiled module lacks kernel " + f.name);
  return t;
}

// What the compile time buys: the kernel's run time (minimum of repeats, after one warm-up call).
double run_ms(const te::ComputeDag& dag, const Target& target, int64_t lanes, int repeats) {
  loopir::Func f = lower::lower(dag, schedule::default_cpu_schedule(dag, lanes)).func;
  std::unique_ptr<Module> module = build_module({f}, target);
  std::vector<Tensor> args;
  std::vector<Tensor*> pointers;
  for (const auto& p : f.params) args.emplace_back(p->dtype, p->shape);
  for (Tensor& a : args) {
    if (a.dtype() == DataType::kFloat32)
      for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = static_cast<float>(i % 17) * 0.01f;
    pointers.push_back(&a);
  }
  module->call_host(f.name, pointers);
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto start = Clock::now();
    module->call_host(f.name, pointers);
    best = std::min(best, ms_since(start));
  }
  return best;
}

KernelTimes median_times(int repeats, const std::function<KernelTimes()>& run) {
  std::vector<double> lower, codegen, total;
  for (int r = 0; r < repeats; ++r) {
    KernelTimes t = run();
    lower.push_back(t.lower_ms), codegen.push_back(t.codegen_ms), total.push_back(t.total());
  }
  // Medians of the parts do not add up to the median total; print the total's own median.
  KernelTimes m{median(lower), median(codegen)};
  m.codegen_ms = median(total) - m.lower_ms;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  std::string spec = "llvm";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--smoke"))
      smoke = true;
    else if (!std::strcmp(argv[i], "--target") && i + 1 < argc)
      spec = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_compile [--smoke] [--target SPEC]\n");
      return 2;
    }
  }
  const int kernel_repeats = smoke ? 3 : 11, model_repeats = smoke ? 1 : 3;
  try {
    PluginManager::global().load_all();
    if (!CodeGenRegistry::global().has("llvm")) throw Error("the llvm plugin is not loaded");
    const Target llvm = Target::parse(spec);
    if (llvm.kind() != "llvm") throw Error("--target: an llvm target, got " + llvm.kind());
    std::printf("target: %s\n\n", llvm.str().c_str());

    // --- one conv kernel
    const te::ComputeDag conv = te::conv2d_dag({1, 64, 56, 56, 64, 3, 3, 1, 1});
    const int64_t lanes = target_vector_floats(llvm);
    compile_kernel_once(conv, llvm, lanes);  // warm-up: first use of LLVM's target registry
    KernelTimes ours = median_times(kernel_repeats, [&] { return compile_kernel_once(conv, llvm, lanes); });
    std::printf("conv 3x3 64->64 56x56, llvm: %8.1f ms median of %d (lower %.1f ms, codegen + O3 + JIT %.1f ms)\n",
                ours.total(), kernel_repeats, ours.lower_ms, ours.codegen_ms);
    if (CodeGenRegistry::global().has("c")) {
      const Target c = Target::parse("c");
      KernelTimes ref = median_times(std::min(kernel_repeats, 5), [&] { return compile_kernel_once(conv, c, lanes); });
      std::printf("reference, same kernel, c:   %8.1f ms median (system cc -O2 + dlopen)\n", ref.total());
      std::printf("ratio llvm / c:              %8.2f\n", ours.total() / ref.total());
    } else {
      std::printf("reference: the c plugin is not loaded, no reference measured\n");
    }
    std::printf("the kernel then runs in %.2f ms (minimum of %d calls)\n", run_ms(conv, llvm, lanes, smoke ? 2 : 5),
                smoke ? 2 : 5);
    std::printf("goal: one kernel < 150 ms -> %s\n\n", ours.total() < 150 ? "met" : "NOT met");

    // --- a ResNet-18-sized model
    GraphPtr graph = std::make_shared<const Graph>(bench::resnet_graph(18));
    std::printf("resnet-18: %zu nodes, %lld parameters\n", graph->nodes.size(),
                static_cast<long long>(graph->parameter_count()));
    std::vector<double> total_ms;
    std::shared_ptr<const compile::CompiledModel> model;
    for (int r = 0; r < model_repeats; ++r) {
      auto start = Clock::now();
      model = compile::CompiledModel::compile(graph, llvm);
      total_ms.push_back(ms_since(start));
    }
    double passes_ms = 0, lower_ms = 0;
    for (const StepRecordPtr& rec : model->pipeline().records) passes_ms += rec->wall_ms;
    for (const compile::CompiledKernel& k : model->kernels()) lower_ms += k.compile_ms;
    const double total = median(total_ms);
    std::printf("whole model, llvm: %8.1f ms median of %d: %zu kernels (%d compiled)\n", total, model_repeats,
                model->kernels().size(), model->compiled_count());
    std::printf("  graph passes %.1f ms, build + schedule + lower %.1f ms, codegen + O3 + JIT %.1f ms (last run)\n",
                passes_ms, lower_ms, model->codegen_ms());
    std::printf("  per kernel: %.1f ms; beside one conv kernel above: %.2fx\n",
                total / std::max<size_t>(1, model->kernels().size()),
                total / std::max<size_t>(1, model->kernels().size()) / ours.total());
    std::printf("goal: whole model < 10 s -> %s\n", total < 10000 ? "met" : "NOT met");
    if (model->compiled_count() != static_cast<int>(model->kernels().size()))
      for (const compile::CompiledKernel& k : model->kernels())
        if (!k.compiled) std::printf("  not compiled: %s (%s)\n", k.name.c_str(), k.fallback_reason.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_compile: %s\n", e.what());
    return 1;
  }
  return 0;
}
