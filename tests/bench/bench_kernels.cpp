// Kernel benchmark: Tessel's default schedules compiled by the llvm plugin, beside references
// measured in the same run — OpenBLAS sgemm for the GEMMs, the machine's calibrated FMA peak and
// DRAM bandwidth for everything — printed as ratios. Minimum of repeats (the machine is shared).
//
//   bench_kernels [--short]          run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset
//                                    (see TOOLCHAIN.md), e.g. env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

#include "core/compile/calibrate.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/default_schedule.h"
#include "core/te/op_builders.h"

extern "C" char* openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int);

using namespace tessel;

namespace {

double min_seconds(int repeats, const std::function<void()>& f) {
  f();  // warm-up
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
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

// Compiles `dag` with its default schedule and returns the minimum time of one call.
double tessel_seconds(const te::ComputeDag& dag, const Target& target, int repeats) {
  loopir::Func f = lower::lower(dag, schedule::default_cpu_schedule(dag, target.get_int("vector_bits") / 32)).func;
  auto module = build_module({f}, target);
  std::vector<Tensor> args = random_args(f);
  std::vector<Tensor*> ptrs;
  for (auto& a : args) ptrs.push_back(&a);
  return min_seconds(repeats, [&] { module->call_host(f.name, ptrs); });
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  int repeats = quick ? 2 : 5;
  PluginManager::global().load_all();
  if (!CodeGenRegistry::global().has("llvm")) {
    std::fprintf(stderr, "bench_kernels: the llvm plugin is not loaded\n");
    return 1;
  }
  std::printf("OpenBLAS core: %s%s\n", openblas_get_corename(),
              std::getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE is set: OpenBLAS runs a slower kernel; unset it)" : "");
  for (int threads : {1, 2}) {
    Target target = Target::parse("llvm -num_threads=" + std::to_string(threads));
    ThreadPool::set_global_threads(threads);
    openblas_set_num_threads(threads);
    compile::CalibrateOptions copt;
    copt.quick = true;
    compile::MachineCeilings ceilings = compile::calibrate(target, copt);
    ThreadPool::set_global_threads(threads);
    std::printf("\n== %d thread(s): peak %.1f GFLOP/s (%s), DRAM %.1f GB/s (measured now)\n", threads, ceilings.peak_gflops(),
                ceilings.compute.front().name.c_str(), ceilings.dram_gbps());
    std::printf("%-28s %12s %12s %10s %10s\n", "kernel", "tessel", "reference", "ratio", "of peak");

    struct Gemm {
      int64_t m, n, k;
    };
    std::vector<Gemm> gemms = quick ? std::vector<Gemm>{{256, 256, 256}} : std::vector<Gemm>{{1024, 1024, 1024}, {512, 512, 512}, {1, 4096, 1024}};
    for (const Gemm& g : gemms) {
      double flops = 2.0 * static_cast<double>(g.m * g.n * g.k);
      double ours = tessel_seconds(te::matmul_dag(g.m, g.n, g.k), target, repeats);
      std::vector<float> a(static_cast<size_t>(g.m * g.k), 0.5f), b(static_cast<size_t>(g.k * g.n), 0.25f), c(static_cast<size_t>(g.m * g.n));
      double blas = min_seconds(repeats, [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), 1.0f,
                    a.data(), static_cast<int>(g.k), b.data(), static_cast<int>(g.n), 0.0f, c.data(), static_cast<int>(g.n));
      });
      char name[64];
      std::snprintf(name, sizeof name, "gemm %ldx%ldx%ld", static_cast<long>(g.m), static_cast<long>(g.n), static_cast<long>(g.k));
      std::printf("%-28s %9.1f GF %9.1f GF %9.2fx %9.0f%%   (reference: OpenBLAS sgemm)\n", name, flops / ours / 1e9, flops / blas / 1e9,
                  blas / ours, 100 * flops / ours / 1e9 / ceilings.peak_gflops());
    }

    struct Conv {
      const char* name;
      te::Conv2dParams p;
    };
    std::vector<Conv> convs = {{"conv resnet18 3x3 64", {1, 64, 56, 56, 64, 3, 3, 1, 1}}};
    if (!quick) {
      convs.push_back({"conv resnet18 7x7 s2", {1, 3, 224, 224, 64, 7, 7, 2, 3}});
      convs.push_back({"conv resnet18 3x3 128", {1, 128, 28, 28, 128, 3, 3, 1, 1}});
      convs.push_back({"conv resnet18 3x3 256", {1, 256, 14, 14, 256, 3, 3, 1, 1}});
      convs.push_back({"conv resnet18 3x3 512", {1, 512, 7, 7, 512, 3, 3, 1, 1}});
    }
    for (const Conv& c : convs) {
      const auto& p = c.p;
      double flops = 2.0 * static_cast<double>(p.batch * p.out_channels * p.out_height() * p.out_width() * p.in_channels * p.kernel_h * p.kernel_w);
      double ours = tessel_seconds(te::conv2d_dag(p), target, repeats);
      std::printf("%-28s %9.1f GF %9.1f GF %9.2fx %9.0f%%   (reference: calibrated peak)\n", c.name, flops / ours / 1e9,
                  ceilings.peak_gflops(), flops / ours / 1e9 / ceilings.peak_gflops(), 100 * flops / ours / 1e9 / ceilings.peak_gflops());
    }
    te::Conv2dParams dw{1, 144, 56, 56, 144, 3, 3, 1, 1};
    double dw_bytes = 4.0 * (2 * 144 * 56 * 56 + 144 * 9);
    double dws = tessel_seconds(te::depthwise_conv2d_dag(dw), target, repeats);
    std::printf("%-28s %9.1f GB/s %7.1f GB/s %8.2fx %10s   (reference: DRAM bandwidth)\n", "depthwise 3x3 (1,144,56,56)", dw_bytes / dws / 1e9,
                ceilings.dram_gbps(), dw_bytes / dws / 1e9 / ceilings.dram_gbps(), "");
    double sm_bytes = 4.0 * 2 * 12 * 128 * 128;
    double sms = tessel_seconds(te::softmax_dag(12 * 128, 128), target, repeats);
    std::printf("%-28s %9.1f GB/s %7.1f GB/s %8.2fx %10s   (reference: DRAM bandwidth)\n", "softmax (1,12,128,128)", sm_bytes / sms / 1e9,
                ceilings.dram_gbps(), sm_bytes / sms / 1e9 / ceilings.dram_gbps(), "");
    double ln_bytes = 4.0 * 2 * 128 * 768;
    double lns = tessel_seconds(te::layernorm_dag(128, 768), target, repeats);
    std::printf("%-28s %9.1f GB/s %7.1f GB/s %8.2fx %10s   (reference: DRAM bandwidth)\n", "layernorm (128,768)", ln_bytes / lns / 1e9,
                ceilings.dram_gbps(), ln_bytes / lns / 1e9 / ceilings.dram_gbps(), "");
  }
  return 0;
}
