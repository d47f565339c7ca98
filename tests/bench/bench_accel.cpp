// Accelerator benchmark: every convolution (and the classifier) of ResNet-18 at 224x224 as the
// int8 GEMM the accel-sim target offloads (quantize_for_accelerator: im2col rows × weights, each
// extent rounded up to the GEMM core), in both of the pass's layouts (gemm_layout: rows, the
// row-major matrices; tiled, the weights and the result as columns of n×n tiles), compiled with the
// accelerator's default schedule with 1 and with 2 virtual threads (analysis::run_on_accelerator,
// as the studio's accelerator roofline measures them), run on the simulator: cycles,
// compute-unit utilization (compute busy ÷ total cycles), load-unit utilization and the speed-up
// of the second virtual thread. The whole network's figure is the sum over its layers (each layer
// as often as ResNet-18 has it). Cycles are the simulator's, so the figures do not depend on the
// host's load.
//
//   bench_accel [--short] [--target SPEC]      --short: the first layer of each stage only;
//                                               SPEC: the machine, e.g. "accel-sim -dram_latency=32"
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/analysis/accel_roofline.h"
#include "core/plugin/plugin_manager.h"
#include "core/target/target.h"
#include "core/te/tensor.h"

using namespace tessel;

namespace {

struct Layer {
  const char* name;
  int64_t channels_in, size_in, channels_out, kernel, stride, pad;
  int count;  // how many of it ResNet-18 has
};

// ResNet-18 (torchvision), batch 1, 224x224. The fc layer is a 1x1 "conv" on a 1x1 image.
const Layer kLayers[] = {
    {"conv1 7x7/2 3->64", 3, 224, 64, 7, 2, 3, 1},           {"layer1 3x3 64->64", 64, 56, 64, 3, 1, 1, 4},
    {"layer2.0 3x3/2 64->128", 64, 56, 128, 3, 2, 1, 1},     {"layer2.0 downsample 1x1/2", 64, 56, 128, 1, 2, 0, 1},
    {"layer2 3x3 128->128", 128, 28, 128, 3, 1, 1, 3},       {"layer3.0 3x3/2 128->256", 128, 28, 256, 3, 2, 1, 1},
    {"layer3.0 downsample 1x1/2", 128, 28, 256, 1, 2, 0, 1}, {"layer3 3x3 256->256", 256, 14, 256, 3, 1, 1, 3},
    {"layer4.0 3x3/2 256->512", 256, 14, 512, 3, 2, 1, 1},   {"layer4.0 downsample 1x1/2", 256, 14, 512, 1, 2, 0, 1},
    {"layer4 3x3 512->512", 512, 7, 512, 3, 1, 1, 3},        {"fc 512->1000", 512, 1, 1000, 1, 1, 0, 1},
};

int64_t round_up(int64_t v, int64_t n) { return (v + n - 1) / n * n; }

// C[i, j] = Σ int32(A[i, k]) · int32(B[k, j]): the kernel quantize_for_accelerator offloads.
te::ComputeDag gemm_dag(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kInt8);
  te::Tensor b = te::placeholder("B", {k, n}, DataType::kInt8);
  loopir::IterVar r = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {m, n}, [&](const std::vector<loopir::Expr>& i) {
    return te::sum(
        te::cast(DataType::kInt32, te::at(a, {i[0], r.var})) * te::cast(DataType::kInt32, te::at(b, {r.var, i[1]})),
        {r});
  });
  return te::make_dag("gemm", {c});
}

// The tiled layout: C[t, i, j] = Σ int32(A[i, k]) · int32(B[t, k, j]), B and C as columns of
// `tile`-wide tiles ([n / tile, k, tile] and [n / tile, m, tile]).
te::ComputeDag tiled_gemm_dag(int64_t m, int64_t n, int64_t k, int64_t tile) {
  te::Tensor a = te::placeholder("A", {m, k}, DataType::kInt8);
  te::Tensor b = te::placeholder("B", {n / tile, k, tile}, DataType::kInt8);
  loopir::IterVar r = te::reduce_axis(k, "k");
  te::Tensor c = te::compute("C", {n / tile, m, tile}, [&](const std::vector<loopir::Expr>& i) {
    return te::sum(te::cast(DataType::kInt32, te::at(a, {i[1], r.var})) *
                       te::cast(DataType::kInt32, te::at(b, {i[0], r.var, i[2]})),
                   {r});
  });
  return te::make_dag("gemm_tiled", {c});
}

Tensor random_int8(Shape shape, uint64_t seed) {
  Tensor t(DataType::kInt8, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  bool short_run = false;
  std::string spec = "accel-sim";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--short"))
      short_run = true;
    else if (!std::strcmp(argv[i], "--target") && i + 1 < argc)
      spec = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_accel [--short] [--target SPEC]\n");
      return 2;
    }
  }
  try {
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});
    const Target target = Target::parse(spec);
    const int64_t n = target.get_int("gemm");
    std::printf("ResNet-18 layers as int8 GEMMs on %s\n", target.str().c_str());
    std::printf("%-28s %5s %5s %5s %3s %-6s %12s %7s %7s %12s %7s %7s %8s\n", "layer", "M", "N", "K", "x", "layout",
                "cycles vt1", "cmp%", "ld%", "cycles vt2", "cmp%", "ld%", "speed-up");
    double total[2][2] = {{0, 0}, {0, 0}};  // [rows, tiled][1, 2 virtual threads]
    int64_t previous_stage = -1;
    for (const Layer& l : kLayers) {
      if (short_run && l.size_in == previous_stage) continue;
      previous_stage = l.size_in;
      const int64_t out = (l.size_in + 2 * l.pad - l.kernel) / l.stride + 1;
      const int64_t m = round_up(out * out, n), cols = round_up(l.channels_out, n),
                    k = round_up(l.channels_in * l.kernel * l.kernel, n);
      for (int tiled = 0; tiled < 2; ++tiled) {
        const te::ComputeDag dag = tiled ? tiled_gemm_dag(m, cols, k, n) : gemm_dag(m, cols, k);
        Tensor a = random_int8({m, k}, 1);
        Tensor b = tiled ? random_int8({cols / n, k, n}, 2) : random_int8({k, cols}, 2);
        Tensor c(DataType::kInt32, tiled ? Shape{cols / n, m, n} : Shape{m, cols});
        const analysis::AcceleratorRun one = analysis::run_on_accelerator(dag, target, 1, {&a, &b, &c}),
                                       two = analysis::run_on_accelerator(dag, target, 2, {&a, &b, &c});
        total[tiled][0] += one.cycles * l.count, total[tiled][1] += two.cycles * l.count;
        std::printf("%-28s %5lld %5lld %5lld %3d %-6s %12.0f %6.1f%% %6.1f%% %12.0f %6.1f%% %6.1f%% %7.2fx\n",
                    tiled ? "" : l.name, static_cast<long long>(m), static_cast<long long>(cols),
                    static_cast<long long>(k), l.count, tiled ? "tiled" : "rows", one.cycles,
                    100 * one.compute_utilization, 100 * one.load_utilization, two.cycles,
                    100 * two.compute_utilization, 100 * two.load_utilization, one.cycles / std::max(two.cycles, 1.0));
        std::fflush(stdout);
      }
    }
    const double mhz = static_cast<double>(target.get_int("clock_mhz"));
    for (int tiled = 0; tiled < 2; ++tiled)
      std::printf("%s, %s layout: %.0f cycles (%.2f ms) with 1 virtual thread, %.0f (%.2f ms) with 2: %.2fx\n",
                  short_run ? "these layers" : "whole network (offloaded layers, each as often as it occurs)",
                  tiled ? "tiled" : "rows", total[tiled][0], total[tiled][0] / (mhz * 1e3), total[tiled][1],
                  total[tiled][1] / (mhz * 1e3), total[tiled][0] / std::max(total[tiled][1], 1.0));
    std::printf("tiled layout vs rows: %.2fx with 1 virtual thread, %.2fx with 2\n",
                total[0][0] / std::max(total[1][0], 1.0), total[0][1] / std::max(total[1][1], 1.0));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_accel: %s\n", e.what());
    return 1;
  }
  return 0;
}
