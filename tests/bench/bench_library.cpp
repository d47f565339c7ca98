// Library benchmark: a model as `tessel build` writes it (a shared library with the model's
// kernels, weights and arena; what a user deploys), called through its C entry point, beside the
// same compiled model run in this process by CompiledModel::run (what `tessel run` and `profile`
// use), measured in the same run, alternating, at 1 and 2 threads.
//
//   bench_library [--smoke]
//
//   model ─CompiledModel::compile(llvm -num_threads=T)─┬─▶ run()                    in process
//                                                      └─▶ build_model_library ─▶ dlopen ─▶ NAME_run
//
// The two paths run the same kernels, so the ratio is what lies around them: the library's
// parallel runtime (tessel_parallel_for in core/aot/model_library.cpp) against the in-process
// thread pool (core/runtime/thread_pool.h), argument packing and copies. Small models show the
// per-loop overhead most. Both outputs are compared before anything is timed.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/aot/model_library.h"
#include "core/frontend/load_model.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/support/subprocess.h"
#include "core/support/timing.h"
#include "tests/bench/resnet_graph.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

using RunFn = int (*)(const void* const*, void* const*);
using ThreadsFn = void (*)(int);

// The best per-call time of `calls` consecutive calls, over `rounds` rounds (the machine is shared:
// the minimum is the figure to compare).
double best_ms(const std::function<void()>& call, int rounds, int calls) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) call();
    best = std::min(best, ms_since(start) / calls);
  }
  return best;
}

struct Library {
  void* handle = nullptr;
  RunFn run = nullptr;
  ThreadsFn set_threads = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

void load(Library& lib, const std::string& path, const std::string& name) {
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) throw Error(std::string("dlopen: ") + dlerror());
  lib.run = reinterpret_cast<RunFn>(dlsym(lib.handle, (name + "_run").c_str()));
  lib.set_threads = reinterpret_cast<ThreadsFn>(dlsym(lib.handle, (name + "_set_num_threads").c_str()));
  if (!lib.run || !lib.set_threads) throw Error(path + ": entry points missing");
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) d = std::max(d, std::fabs(a.get_double(i) - b.get_double(i)));
  return d;
}

void bench_model(const std::string& label, GraphPtr graph, int rounds, int calls) {
  const TempDir dir("tessel-bench-library");
  for (int threads : {1, 2}) {
    const Target target = Target::parse("llvm -num_threads=" + std::to_string(threads));
    auto model = compile::CompiledModel::compile(graph, target);
    const std::string name = aot::c_identifier(label);
    const std::string so = (dir.path() / (name + std::to_string(threads) + ".so")).string();
    aot::build_model_library(*model, so, {.name = name});
    Library lib;
    load(lib, so, name);
    lib.set_threads(threads);

    // Inputs: a fixed ramp, the same bytes for both paths.
    std::vector<Tensor> inputs;
    std::vector<const void*> in_ptrs;
    for (ValueId v : model->graph().inputs) {
      const TensorType& t = model->graph().value(v).type;
      Tensor x(t.dtype, t.shape);
      for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, static_cast<double>(i % 17) / 17.0 - 0.5);
      inputs.push_back(x);
    }
    for (const Tensor& x : inputs) in_ptrs.push_back(x.raw_data());
    std::vector<Tensor> outputs;
    std::vector<void*> out_ptrs;
    for (ValueId v : model->graph().outputs) {
      const TensorType& t = model->graph().value(v).type;
      outputs.emplace_back(t.dtype, t.shape);
    }
    for (Tensor& y : outputs) out_ptrs.push_back(y.raw_data());

    // Same answer first.
    if (lib.run(in_ptrs.data(), out_ptrs.data()) != 0) throw Error(label + ": the library's run failed");
    const std::vector<Tensor> expected = model->run(inputs);
    double diff = 0;
    for (size_t k = 0; k < expected.size(); ++k) diff = std::max(diff, max_abs_difference(expected[k], outputs[k]));
    if (diff > 1e-3) throw Error(label + ": the library and the in-process run differ by " + std::to_string(diff));

    // Alternate the two paths, rounds at a time, so drift on the machine falls on both.
    double lib_ms = 1e30, proc_ms = 1e30;
    for (int pass = 0; pass < 3; ++pass) {
      lib_ms = std::min(lib_ms, best_ms([&] { lib.run(in_ptrs.data(), out_ptrs.data()); }, rounds, calls));
      proc_ms = std::min(proc_ms, best_ms([&] { model->run(inputs); }, rounds, calls));
    }
    std::printf("%-18s %7d %14.4f %14.4f %8.2fx\n", label.c_str(), threads, lib_ms, proc_ms, lib_ms / proc_ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
  PluginManager::global().load_all();
  if (!CodeGenRegistry::global().has("llvm")) {
    std::fprintf(stderr, "bench_library: the llvm plugin is not loaded\n");
    return 1;
  }
  const int rounds = smoke ? 2 : 15, calls = smoke ? 2 : 20;
  std::printf("%-18s %7s %14s %14s %9s\n", "model", "threads", "library ms", "in-process ms", "ratio");
  try {
    std::vector<fs::path> samples;
    for (const auto& e : fs::directory_iterator(fs::path(TESSEL_SOURCE_DIR) / "resources/models"))
      if (e.path().extension() == ".onnx") samples.push_back(e.path());
    std::sort(samples.begin(), samples.end());
    for (const fs::path& p : samples)
      bench_model(p.stem().string(), std::make_shared<const Graph>(load_model_file(p.string())), rounds, calls);
    if (!smoke) bench_model("resnet-18", std::make_shared<const Graph>(bench::resnet_graph(18)), 3, 3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_library: %s\n", e.what());
    return 1;
  }
  return 0;
}
