// The TVM paper's Figure 7: matrix multiplication with 16 x 16 tiles of A and B in shared memory,
// fetched without and with cooperation (resources/schedules/matmul_gpu_shared.sched and
// matmul_gpu_cooperative.sched), on every GPU target with a device: opencl (CI: PoCL's CPU device)
// and cuda. Each kernel is first checked against the reference executor, then timed on device
// arrays (no host copies in the time) by the backend's events and by the wall clock: the minimum
// over repeats (the machine may be shared) and the median (the noise), the two schedules timed in
// the same run, and their ratio printed.
//
//   bench_gpu [--target opencl|cuda] [--size N] [--repeat N] [--smoke]
//
// --size N: matmul N x N x N (a multiple of 16; default 256 on opencl, whose CI device is a CPU,
// and 1024 on cuda). --smoke: N = 32, 2 repeats, for ctest. A target asked for with --target that
// has no device is an error; without --target, targets with no device are listed and left out.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "core/graph/text_format.h"
#include "core/lower/pipeline.h"
#include "core/plugin/plugin_manager.h"
#include "core/runtime/codegen.h"
#include "core/runtime/device_api.h"
#include "core/runtime/ndarray.h"
#include "core/runtime/reference_executor.h"
#include "core/schedule/schedule.h"
#include "core/target/target.h"
#include "core/te/op_spec.h"

using namespace tessel;

namespace {

struct Options {
  std::vector<std::string> targets;  // empty: every GPU target with a device
  int64_t size = 0;                  // 0: the target's default
  int repeats = 5;
};

struct Figures {
  double best_device_ms = 0, median_device_ms = 0, best_wall_ms = 0;
  double max_error = 0;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read schedule file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Tensor random_matrix(int64_t n, uint32_t seed) {
  Tensor t(DataType::kFloat32, {n, n});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One schedule on one target: checked against `want`, then timed.
Figures run_schedule(const std::string& target_spec, const std::string& schedule_file, int64_t n, const Tensor& a,
                     const Tensor& b, const Tensor& want, int repeats) {
  const std::string spec = "matmul M=" + std::to_string(n) + " N=" + std::to_string(n) + " K=" + std::to_string(n);
  const te::ComputeDag dag = te::dag_from_spec(spec);
  loopir::Func f =
      lower::lower(dag, schedule::parse_schedule(read_text(TESSEL_SOURCE_DIR "/resources/schedules/" + schedule_file)))
          .func;
  const Target target = Target::parse(target_spec);
  auto module = build_module({f}, target);
  const std::string launch = module->artifacts().at("launch");
  if (launch.find("grid of") == std::string::npos)
    throw Error(schedule_file + " on " + target_spec + " does not run on a grid: " + launch);
  const Device device{device_type_from_name(TargetKindRegistry::global().get(target.kind()).device), 0};
  NDArray da = NDArray::from_host(a, device), db = NDArray::from_host(b, device);
  NDArray dc = NDArray::empty(DataType::kFloat32, {n, n}, device);

  Figures fig;
  module->call(f.name, {&da, &db, &dc});
  const Tensor got = dc.to_host();
  for (int64_t i = 0; i < want.numel(); ++i)
    fig.max_error = std::max(fig.max_error, std::abs(got.get_double(i) - want.get_double(i)));
  // fp32 sums of n products of values in [-1, 1] against the reference's double sums.
  const double tolerance = 1e-5 + 1e-6 * static_cast<double>(n);
  if (!(fig.max_error <= tolerance))
    throw Error(schedule_file + " on " + target_spec + ": largest difference from the reference " +
                std::to_string(fig.max_error) + " exceeds " + std::to_string(tolerance));

  std::vector<double> device_ms, wall_ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    module->call(f.name, {&da, &db, &dc});
    wall_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    const auto times = module->last_launch_times();
    device_ms.push_back(times ? times->run_ms() : wall_ms.back());
  }
  fig.best_device_ms = *std::min_element(device_ms.begin(), device_ms.end());
  fig.median_device_ms = median(device_ms);
  fig.best_wall_ms = *std::min_element(wall_ms.begin(), wall_ms.end());
  return fig;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) throw Error(arg + " needs a value");
      return argv[++k];
    };
    if (arg == "--target")
      o.targets.push_back(value());
    else if (arg == "--size")
      o.size = std::stoll(value());
    else if (arg == "--repeat")
      o.repeats = std::max(1, std::stoi(value()));
    else if (arg == "--smoke")
      o.size = 32, o.repeats = 2;
    else
      throw Error("unknown argument " + arg + " (bench_gpu [--target opencl|cuda] [--size N] [--repeat N] [--smoke])");
  }
  if (o.size < 0 || o.size % 16 != 0) throw Error("--size must be a multiple of 16 (the tile)");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    PluginManager::global().load_all({TESSEL_BINARY_DIR "/plugins"});

    struct Candidate {
      std::string kind;
      DeviceType device;
      int64_t default_size;
    };
    const std::vector<Candidate> candidates = {{"opencl", DeviceType::kOpenCL, 256}, {"cuda", DeviceType::kCUDA, 1024}};
    std::vector<Candidate> chosen;
    for (const Candidate& c : candidates) {
      const bool asked = std::find(options.targets.begin(), options.targets.end(), c.kind) != options.targets.end();
      if (!options.targets.empty() && !asked) continue;
      const DeviceAPI* api = DeviceAPIRegistry::global().find(c.device);
      const std::string why = !api                       ? "its plugin is not built or did not load"
                              : api->device_count() == 0 ? api->why_no_device()
                                                         : "";
      if (why.empty()) {
        chosen.push_back(c);
      } else if (asked) {
        std::fprintf(stderr, "bench_gpu: %s has no device: %s\n", c.kind.c_str(), why.c_str());
        return 1;
      } else {
        std::printf("%s: left out (no device: %s)\n", c.kind.c_str(), why.c_str());
      }
    }
    for (const std::string& t : options.targets)
      if (std::none_of(candidates.begin(), candidates.end(), [&](const Candidate& c) { return c.kind == t; }))
        throw Error("--target " + t + ": bench_gpu knows opencl and cuda");
    if (chosen.empty()) {
      std::printf("no GPU target has a device: nothing was timed\n");
      return 0;
    }

    std::printf(
        "Figure 7 (TVM paper): matmul, 16 x 16 tiles of A and B in shared memory, fetched by every thread\n"
        "alone (matmul_gpu_shared.sched) or cooperatively (matmul_gpu_cooperative.sched). Device time\n"
        "from the backend's events: best of %d (median); wall: best, with the launch and wait.\n\n",
        options.repeats);
    std::printf("%-7s %-34s %-6s %-12s %-20s %-10s %-9s %s\n", "target", "device", "N", "schedule", "device ms",
                "wall ms", "GFLOP/s", "max |diff|");
    for (const Candidate& c : chosen) {
      const int64_t n = options.size ? options.size : c.default_size;
      const Tensor a = random_matrix(n, 1), b = random_matrix(n, 2);
      const std::string dims = std::to_string(n);
      const Graph g = parse_graph("graph mm(%a: f32[" + dims + "," + dims + "], %b: f32[" + dims + "," + dims +
                                  "]) {\n  %c = MatMul(%a, %b) : f32[" + dims + "," + dims + "]\n  return %c\n}");
      const Tensor want = run_reference(g, {a, b})[0];
      const DeviceAttrValue name = DeviceAPIRegistry::global().get(c.device).attribute(0, DeviceAttr::kName);
      const std::string device = std::holds_alternative<std::string>(name) ? std::get<std::string>(name) : "?";
      const double gflop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 1e9;
      Figures shared, cooperative;
      for (const auto& [file, label, fig] : {std::tuple{"matmul_gpu_shared.sched", "shared", &shared},
                                             std::tuple{"matmul_gpu_cooperative.sched", "cooperative", &cooperative}}) {
        *fig = run_schedule(c.kind, file, n, a, b, want, options.repeats);
        char device_ms[64];
        std::snprintf(device_ms, sizeof device_ms, "%.3f (%.3f)", fig->best_device_ms, fig->median_device_ms);
        std::printf("%-7s %-34.34s %-6lld %-12s %-20s %-10.3f %-9.2f %.2g\n", c.kind.c_str(), device.c_str(),
                    static_cast<long long>(n), label, device_ms, fig->best_wall_ms, gflop / (fig->best_device_ms / 1e3),
                    fig->max_error);
      }
      std::printf("%-7s cooperative fetching: %.2fx the speed of fetching alone (best device times)\n\n",
                  c.kind.c_str(), shared.best_device_ms / cooperative.best_device_ms);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu: %s\n", e.what());
    return 1;
  }
}
