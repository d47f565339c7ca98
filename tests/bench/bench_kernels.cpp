// Kernel benchmark: Tessel's default schedules compiled by the llvm plugin, beside references
// measured in the same run — OpenBLAS sgemm for the GEMMs, the machine's calibrated FMA peak and
// DRAM bandwidth for everything — printed as ratios. Minimum and median of repeats (the machine
// is shared, so the minimum is the figure to compare; the median shows the noise).
//
//   bench_kernels [--short]          the OpenBLAS reference runs its best kernel for this CPU
//                                    (openblas_core.h); run with OPENBLAS_L2_SIZE unset
//   bench_kernels --op SPEC [--schedule FILE] [--threads N] [--repeat N] [--dump PREFIX]
//                                    one kernel (e.g. --op "matmul M=1024 N=1024 K=1024", or
//                                    "matmul_packed ... block=16" for weights packed at compile time) with the
//                                    default schedule or FILE: GFLOP/s, for trying schedules by hand;
//                                    --dump writes the schedule, IR and assembly to PREFIX.<kind>
//
// The GEMM 1024³ row is also run with the hand schedule shipped in resources/schedules/. A GEMM
// whose default packs panels of B is also run unpacked (the session-7 default), in the same run. Each GEMM
// and NCHW conv shape also runs in int8 (uint8 · int8 summed in int32, as the quantized ops
// compile) with the default schedule, beside Tessel's own fp32 figure; each GEMM also in the VNNI
// form (int8_dot_product) with and without the dot step, beside OpenBLAS sgemm.
// The 2-thread block prints its own calibrated peak: on a shared machine the second core is often
// busy, and then that peak (and every 2-thread figure) is no higher than the 1-thread one.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "core/analysis/calibrate.h"
#include "core/compile/kernel_compiler.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/thread_pool.h"
#include "core/schedule/default_schedule.h"
#include "core/te/int8_dot_product.h"
#include "core/te/op_builders.h"
#include "core/te/op_spec.h"
#include "tests/bench/openblas_core.h"

extern "C" void openblas_set_num_threads(int);

using namespace tessel;

namespace {

struct Timing {
  double min = 0, median = 0;  // seconds per call
};

Timing time_calls(int repeats, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
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

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read schedule file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compiles `dag` with `sched` and times one call.
Timing tessel_time(const te::ComputeDag& dag, const schedule::Schedule& sched, const Target& target, int repeats) {
  loopir::Func f = lower::lower(dag, sched).func;
  auto module = build_module({f}, target);
  std::vector<Tensor> args = random_args(f);
  std::vector<Tensor*> ptrs;
  for (auto& a : args) ptrs.push_back(&a);
  return time_calls(repeats, [&] { module->call_host(f.name, ptrs); });
}

Timing tessel_default_time(const te::ComputeDag& dag, const Target& target, int repeats) {
  return tessel_time(dag, compile::default_schedule(dag, target), target, repeats);
}

// Tessel and OpenBLAS timed in alternation, call by call: the clock of this shared machine drifts
// between runs, so the ratio of each adjacent pair (their median) is the fairest comparison.
struct GemmComparison {
  Timing ours, blas;
  double pair_ratio = 0;  // median over pairs of blas time / tessel time
};

GemmComparison compare_with_openblas(const te::ComputeDag& dag, const schedule::Schedule& sched, const Target& target,
                                     int64_t m, int64_t n, int64_t k, int repeats) {
  loopir::Func f = lower::lower(dag, sched).func;
  auto module = build_module({f}, target);
  std::vector<Tensor> args = random_args(f);
  std::vector<Tensor*> ptrs;
  for (auto& a : args) ptrs.push_back(&a);
  std::vector<float> a(static_cast<size_t>(m * k), 0.5f), b(static_cast<size_t>(k * n), 0.25f),
      c(static_cast<size_t>(m * n));
  auto blas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a.data(), static_cast<int>(k), b.data(), static_cast<int>(n), 0.0f, c.data(),
                static_cast<int>(n));
  };
  auto ours = [&] { module->call_host(f.name, ptrs); };
  auto seconds = [](const std::function<void()>& fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  ours();
  blas();
  std::vector<double> to, tb, ratio;
  for (int r = 0; r < repeats; ++r) {
    to.push_back(seconds(ours));
    tb.push_back(seconds(blas));
    ratio.push_back(tb.back() / to.back());
  }
  auto summary = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return Timing{v.front(), v[v.size() / 2]};
  };
  GemmComparison out{summary(to), summary(tb), summary(ratio).median};
  return out;
}

void print_gemm_row(const char* name, double flops, const GemmComparison& c, double peak) {
  std::printf(
      "%-28s %9.1f GF %9.1f GF %9.2fx %9.0f%%   (reference: OpenBLAS sgemm; medians %.1f vs %.1f GF, pairwise %.2fx)\n",
      name, flops / c.ours.min / 1e9, flops / c.blas.min / 1e9, c.blas.min / c.ours.min,
      100 * flops / c.ours.min / 1e9 / peak, flops / c.ours.median / 1e9, flops / c.blas.median / 1e9, c.pair_ratio);
}

// C[M, N] = Σ_k int32(A[M, K]) · int32(B[K, N]), A uint8 and B int8: the int32-accumulating
// product the quantized builders emit (core/graph/ops/te/builders_quant.cpp).
te::ComputeDag int8_matmul_dag(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kUInt8), b = te::placeholder("B", {k, n}, DataType::kInt8);
  loopir::IterVar rk = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {m, n}, [&](const std::vector<loopir::Expr>& i) {
    return te::sum(
        te::cast(DataType::kInt32, te::at(a, {i[0], rk.var})) * te::cast(DataType::kInt32, te::at(b, {rk.var, i[1]})),
        {rk});
  });
  return te::make_dag("matmul_int8", {c});
}

// The same product in the VNNI form the quantized builders emit for two matrices
// (core/te/int8_dot_product.h: weights packed for the dot step, no zero points).
te::ComputeDag int8_vnni_matmul_dag(int64_t m, int64_t n, int64_t k) {
  te::Int8ProductOperands p{te::placeholder("A", {m, k}, DataType::kUInt8),
                            te::placeholder("B", {k, n}, DataType::kInt8), nullptr, nullptr};
  return te::make_dag("matmul_int8_vnni", {te::int8_dot_product(p, "C")});
}

// The same for an NCHW convolution (ConvInteger's and QLinearConv's kernels): X uint8 widened to
// int32 once, padding included (zero point 0), then Σ X·int32(W[K, C, R, S]) in int32.
te::ComputeDag int8_conv2d_dag(const te::Conv2dParams& p) {
  using loopir::Expr;
  te::Tensor x = te::placeholder("X", {p.batch, p.in_channels, p.height, p.width}, DataType::kUInt8);
  te::Tensor w = te::placeholder("Wt", {p.out_channels, p.in_channels, p.kernel_h, p.kernel_w}, DataType::kInt8);
  te::Tensor padded = te::compute(
      "Xpad", {p.batch, p.in_channels, p.height + 2 * p.pad, p.width + 2 * p.pad}, [&](const std::vector<Expr>& i) {
        Expr y = i[2] - p.pad, xx = i[3] - p.pad;
        Expr inside = loopir::logical_and(
            loopir::logical_and(loopir::ge(y, loopir::make_int(0)), loopir::lt(y, loopir::make_int(p.height))),
            loopir::logical_and(loopir::ge(xx, loopir::make_int(0)), loopir::lt(xx, loopir::make_int(p.width))));
        return te::if_then_else(inside, te::cast(DataType::kInt32, te::at(x, {i[0], i[1], y, xx})),
                                loopir::make_int(0, DataType::kInt32));
      });
  loopir::IterVar rc = te::reduce_axis(p.in_channels, "rc"), ry = te::reduce_axis(p.kernel_h, "ry"),
                  rx = te::reduce_axis(p.kernel_w, "rx");
  te::Tensor conv =
      te::compute("conv", {p.batch, p.out_channels, p.out_height(), p.out_width()}, [&](const std::vector<Expr>& i) {
        Expr y = i[2] * p.stride + Expr(ry.var), xx = i[3] * p.stride + Expr(rx.var);
        return te::sum(te::at(padded, {i[0], rc.var, y, xx}) *
                           te::cast(DataType::kInt32, te::at(w, {i[1], rc.var, ry.var, rx.var})),
                       {rc, ry, rx});
      });
  return te::make_dag("conv2d_int8", {conv});
}

// The convolution in the VNNI form (int8_dot_conv: input NCHWc4, packed weights).
te::ComputeDag int8_vnni_conv2d_dag(const te::Conv2dParams& p) {
  te::Int8ConvOperands c{
      .x = te::placeholder("X", {p.batch, p.in_channels, p.height, p.width}, DataType::kUInt8),
      .w = te::placeholder("Wt", {p.out_channels, p.in_channels, p.kernel_h, p.kernel_w}, DataType::kInt8),
      .x_zero = nullptr,
      .w_zero = nullptr};
  for (int d = 0; d < 2; ++d) {
    c.stride[d] = p.stride;
    c.pad_begin[d] = p.pad;
  }
  c.out_h = p.out_height();
  c.out_w = p.out_width();
  return te::make_dag("conv2d_int8_vnni", {te::int8_dot_conv(c, "conv")});
}

// Multiply-adds of the reductions (2 FLOPs each): what a GEMM or conv rate is quoted in.
double reduction_flops(const te::ComputeDag& dag) {
  double total = 0;
  for (const auto& op : dag.ops) {
    const auto* red = op->reduction();
    if (!red) continue;
    double n = 2;
    for (const auto& a : op->axes) n *= static_cast<double>(a.extent);
    for (const auto& a : red->axes) n *= static_cast<double>(a.extent);
    total += n;
  }
  return total;
}

// --op SPEC [--schedule FILE] [--threads N] [--repeat N]: one kernel, for schedule experiments.
int run_one(int argc, char** argv) {
  std::string spec, file, dump;
  int threads = 1, repeats = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--op")
      spec = argv[i + 1];
    else if (k == "--schedule")
      file = argv[i + 1];
    else if (k == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (k == "--repeat")
      repeats = std::atoi(argv[i + 1]);
    else if (k == "--dump")
      dump = argv[i + 1];
  }
  Target target = Target::parse("llvm -num_threads=" + std::to_string(threads));
  ThreadPool::set_global_threads(threads);
  te::ComputeDag dag = te::dag_from_spec(spec);
  schedule::Schedule sched =
      file.empty() ? compile::default_schedule(dag, target) : schedule::parse_schedule(read_text(file));
  double flops = reduction_flops(dag);
  {
    // Lowering + code generation + JIT of this kernel (the studio's edit loop pays it per edit).
    auto t0 = std::chrono::steady_clock::now();
    auto module = build_module({lower::lower(dag, sched).func}, target);
    std::printf("compile (lower + codegen + jit): %.1f ms\n",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!dump.empty()) {
    // The code generator's artifacts (LLVM IR, assembly), one file each: DUMP.<artifact>.
    auto module = build_module({lower::lower(dag, sched).func}, target);
    for (const auto& [kind, text] : module->artifacts()) std::ofstream(dump + "." + kind) << text;
    std::ofstream(dump + ".sched") << schedule::to_text(sched);
  }
  if (spec.rfind("matmul", 0) == 0) {
    // A[M, K] x B[K, N] (matmul_packed: B in panels, [N/b, K, b]): OpenBLAS on the same shape,
    // timed in alternation with ours.
    auto in = dag.inputs();
    openblas_set_num_threads(threads);
    GemmComparison c = compare_with_openblas(dag, sched, target, in[0]->shape[0], dag.outputs[0]->shape[1],
                                             in[0]->shape[1], repeats);
    std::printf(
        "%s (%s, %d thread(s)): %.1f GFLOP/s min, %.1f median; OpenBLAS %.1f min, %.1f median; pairwise ratio %.2fx",
        spec.c_str(), file.empty() ? "default schedule" : file.c_str(), threads, flops / c.ours.min / 1e9,
        flops / c.ours.median / 1e9, flops / c.blas.min / 1e9, flops / c.blas.median / 1e9, c.pair_ratio);
  } else {
    Timing t = tessel_time(dag, sched, target, repeats);
    std::printf("%s (%s, %d thread(s)): %.2f ms min, %.2f ms median, %.1f GFLOP/s (min)", spec.c_str(),
                file.empty() ? "default schedule" : file.c_str(), threads, t.min * 1e3, t.median * 1e3,
                flops / t.min / 1e9);
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string openblas_core = bench::use_best_openblas_core(argv);
  PluginManager::global().load_all();
  if (!CodeGenRegistry::global().has("llvm")) {
    std::fprintf(stderr, "bench_kernels: the llvm plugin is not loaded\n");
    return 1;
  }
  if (argc > 2 && std::strcmp(argv[1], "--op") == 0) {
    try {
      return run_one(argc, argv);
    } catch (const Error& e) {
      std::fprintf(stderr, "bench_kernels: %s\n", e.what());
      return 1;
    }
  }
  bool quick = argc > 1 && std::strcmp(argv[1], "--short") == 0;
  int repeats = quick ? 2 : 7;
  std::printf("%s\n", openblas_core.c_str());
  const std::string hand_path = std::string(TESSEL_SOURCE_DIR) + "/resources/schedules/matmul_1024.sched";
  const schedule::Schedule hand = schedule::parse_schedule(read_text(hand_path));
  for (int threads : {1, 2}) {
    Target target = Target::parse("llvm -num_threads=" + std::to_string(threads));
    ThreadPool::set_global_threads(threads);
    openblas_set_num_threads(threads);
    analysis::CalibrateOptions copt;
    copt.quick = true;
    analysis::MachineCeilings ceilings = analysis::calibrate(target, copt);
    ThreadPool::set_global_threads(threads);
    const double peak = ceilings.peak_gflops();
    std::printf("\n== %d thread(s): peak %.1f GFLOP/s (%s), DRAM %.1f GB/s (measured now)\n", threads, peak,
                ceilings.compute.front().name.c_str(), ceilings.dram_gbps());
    std::printf("%-28s %12s %12s %10s %10s\n", "kernel", "tessel", "reference", "ratio", "of peak");

    struct Gemm {
      int64_t m, n, k;
    };
    std::vector<Gemm> gemms =
        quick ? std::vector<Gemm>{{256, 256, 256}}
              : std::vector<Gemm>{{1024, 1024, 1024}, {512, 512, 512}, {2048, 2048, 512}, {1, 4096, 1024}};
    for (const Gemm& g : gemms) {
      double flops = 2.0 * static_cast<double>(g.m * g.n * g.k);
      te::ComputeDag dag = te::matmul_dag(g.m, g.n, g.k);
      GemmComparison c =
          compare_with_openblas(dag, compile::default_schedule(dag, target), target, g.m, g.n, g.k, repeats);
      char name[64];
      std::snprintf(name, sizeof name, "gemm %ldx%ldx%ld", static_cast<long>(g.m), static_cast<long>(g.n),
                    static_cast<long>(g.k));
      print_gemm_row(name, flops, c, peak);
      // The previous default (session 7: no packed panels of B) beside it, measured again in this
      // run, where the default now packs.
      schedule::CpuKnobs unpacked;
      unpacked.pack = false;
      const schedule::Schedule previous = schedule::default_cpu_schedule(dag, target_vector_floats(target), unpacked);
      if (!quick && previous.steps != compile::default_schedule(dag, target).steps) {
        GemmComparison p = compare_with_openblas(dag, previous, target, g.m, g.n, g.k, repeats);
        std::snprintf(name, sizeof name, "  unpacked (previous)");
        print_gemm_row(name, flops, p, peak);
      }
      const Timing int8 = tessel_default_time(int8_matmul_dag(g.m, g.n, g.k), target, repeats);
      std::snprintf(name, sizeof name, "gemm int8 %ldx%ldx%ld", static_cast<long>(g.m), static_cast<long>(g.n),
                    static_cast<long>(g.k));
      std::printf(
          "%-28s %9.1f GO %9.1f GF %9.2fx %10s   (reference: Tessel fp32 on this shape; u8*i8->i32; "
          "median %.1f GO)\n",
          name, flops / int8.min / 1e9, flops / c.ours.min / 1e9, c.ours.min / int8.min, "", flops / int8.median / 1e9);
      // The VNNI form: on the dot step (the target's vnni option, on where the host has it) and,
      // for comparison, the same packed stages under the plain default schedule.
      const bool vnni_form = g.m >= 8;  // int8_dot_product declines fewer rows (packing would dominate)
      for (bool vnni : {true, false}) {
        if (!vnni_form || (vnni && !target.get_bool("vnni"))) continue;
        Target t =
            Target::parse("llvm -num_threads=" + std::to_string(threads) + (vnni ? " -vnni=true" : " -vnni=false"));
        const Timing packed = tessel_default_time(int8_vnni_matmul_dag(g.m, g.n, g.k), t, repeats);
        std::snprintf(name, sizeof name, "gemm int8 %s %ldx%ldx%ld", vnni ? "vnni" : "packed", static_cast<long>(g.m),
                      static_cast<long>(g.n), static_cast<long>(g.k));
        std::printf(
            "%-28s %9.1f GO %9.1f GF %9.2fx %10s   (reference: OpenBLAS sgemm on this shape; Tessel fp32 %.2fx; "
            "median %.1f GO)\n",
            name, flops / packed.min / 1e9, flops / c.blas.min / 1e9, c.blas.min / packed.min, "",
            c.ours.min / packed.min, flops / packed.median / 1e9);
      }
    }
    {
      // The shipped hand schedule, on the shape it was written for, against OpenBLAS measured again.
      double flops = 2.0 * 1024 * 1024 * 1024;
      GemmComparison c =
          compare_with_openblas(te::matmul_dag(1024, 1024, 1024), hand, target, 1024, 1024, 1024, repeats);
      print_gemm_row("gemm 1024 hand schedule", flops, c, peak);
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
      double flops = 2.0 * static_cast<double>(p.batch * p.out_channels * p.out_height() * p.out_width() *
                                               p.in_channels * p.kernel_h * p.kernel_w);
      // NCHW as written, and NCHW16c as the graph pipeline's layout pass hands it to the kernels.
      for (bool blocked : {false, true}) {
        if (blocked && p.in_channels % 16 != 0) continue;
        Timing ours = tessel_default_time(blocked ? te::conv2d_nchwc_dag(p, 16) : te::conv2d_dag(p), target, repeats);
        std::string name = std::string(c.name) + (blocked ? " nchw16c" : "");
        std::printf("%-28s %9.1f GF %9.1f GF %9.2fx %9.0f%%   (reference: calibrated peak; median %.1f GF)\n",
                    name.c_str(), flops / ours.min / 1e9, peak, flops / ours.min / 1e9 / peak,
                    100 * flops / ours.min / 1e9 / peak, flops / ours.median / 1e9);
        if (blocked) continue;
        const Timing int8 = tessel_default_time(int8_conv2d_dag(p), target, repeats);
        std::printf(
            "%-28s %9.1f GO %9.1f GF %9.2fx %10s   (reference: Tessel fp32 NCHW on this shape; u8*i8->i32; "
            "median %.1f GO)\n",
            (std::string(c.name) + " int8").c_str(), flops / int8.min / 1e9, flops / ours.min / 1e9,
            ours.min / int8.min, "", flops / int8.median / 1e9);
        for (bool vnni : {true, false}) {
          if (vnni && !target.get_bool("vnni")) continue;
          Target t =
              Target::parse("llvm -num_threads=" + std::to_string(threads) + (vnni ? " -vnni=true" : " -vnni=false"));
          const Timing packed = tessel_default_time(int8_vnni_conv2d_dag(p), t, repeats);
          std::printf(
              "%-28s %9.1f GO %9.1f GF %9.2fx %10s   (reference: Tessel fp32 NCHW on this shape; median %.1f GO)\n",
              (std::string(c.name) + (vnni ? " int8 vnni" : " int8 packed")).c_str(), flops / packed.min / 1e9,
              flops / ours.min / 1e9, ours.min / packed.min, "", flops / packed.median / 1e9);
        }
      }
    }
    te::Conv2dParams dw{1, 144, 56, 56, 144, 3, 3, 1, 1};
    double dw_bytes = 4.0 * (2 * 144 * 56 * 56 + 144 * 9);
    double dws = tessel_default_time(te::depthwise_conv2d_dag(dw), target, repeats).min;
    std::printf("%-28s %9.1f GB/s %7.1f GB/s %8.2fx %10s   (reference: DRAM bandwidth)\n",
                "depthwise 3x3 (1,144,56,56)", dw_bytes / dws / 1e9, ceilings.dram_gbps(),
                dw_bytes / dws / 1e9 / ceilings.dram_gbps(), "");
    double sm_bytes = 4.0 * 2 * 12 * 128 * 128;
    double sms = tessel_default_time(te::softmax_dag(12 * 128, 128), target, repeats).min;
    std::printf("%-28s %9.1f GB/s %7.1f GB/s %8.2fx %10s   (reference: DRAM bandwidth)\n", "softmax (1,12,128,128)",
                sm_bytes / sms / 1e9, ceilings.dram_gbps(), sm_bytes / sms / 1e9 / ceilings.dram_gbps(), "");
    double ln_bytes = 4.0 * 2 * 128 * 768;
    double lns = tessel_default_time(te::layernorm_dag(128, 768), target, repeats).min;
    std::printf("%-28s %9.1f GB/s %7.1f GB/s %8.2fx %10s   (reference: DRAM bandwidth)\n", "layernorm (128,768)",
                ln_bytes / lns / 1e9, ceilings.dram_gbps(), ln_bytes / lns / 1e9 / ceilings.dram_gbps(), "");
  }
  return 0;
}
