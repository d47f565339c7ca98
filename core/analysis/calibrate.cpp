#include "core/analysis/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/compile/compiled_model.h"
#include "core/loopir/functor.h"
#include "core/loopir/ir.h"
#include "core/runtime/codegen.h"
#include "core/runtime/cpu_device_api.h"
#include "core/runtime/ndarray.h"
#include "core/runtime/thread_pool.h"
#include "core/support/error.h"
#include "core/target/target_traits.h"

namespace tessel::analysis {

namespace {

using namespace tessel::loopir;
namespace fs = std::filesystem;

constexpr int64_t kAccumulators = 12;  // independent FMA chains per thread: enough to hide FMA latency

double best_of(int repeats, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// acc[a, l] = acc[a, l] * x + y for `iterations`, in `threads` parallel copies, `lanes` wide.
Func fma_kernel(const std::string& name, int64_t threads, int64_t lanes, int64_t iterations) {
  int64_t width = kAccumulators * lanes;
  auto out = make_buffer("out", DataType::kFloat32, {threads * width});
  auto acc = make_buffer("acc", DataType::kFloat32, {width}, "local");
  auto t = make_var("t"), it = make_var("it"), a = make_var("a"), l = make_var("l");
  Expr slot = Expr(a) * lanes + Expr(l);
  auto over_acc = [&](Stmt body) {
    Stmt inner = lanes > 1 ? make_for(l, make_int(0), make_int(lanes), body, ForKind::kVectorized)
                           : substitute(body, {{l.get(), make_int(0)}});
    return make_for(a, make_int(0), make_int(kAccumulators), inner, ForKind::kUnrolled);
  };
  Stmt init = over_acc(make_store(acc, {slot}, make_cast(DataType::kFloat32, Expr(a) + 1) * make_float(0.001)));
  Stmt step =
      make_for(it, make_int(0), make_int(iterations),
               over_acc(make_store(acc, {slot}, make_load(acc, {slot}) * make_float(0.9999f) + make_float(0.0001f))));
  Stmt done = over_acc(make_store(out, {Expr(t) * width + slot}, make_load(acc, {slot})));
  Stmt body =
      make_for(t, make_int(0), make_int(threads), make_allocate(acc, make_seq({init, step, done})), ForKind::kParallel);
  return Func{name, {out}, body};
}

// Sums `passes` times over a buffer of `elements` floats, split between threads.
Func stream_kernel(const std::string& name, int64_t threads, int64_t elements, int64_t passes) {
  int64_t lanes = 16, width = kAccumulators * lanes;
  int64_t per_thread = elements / threads / width;
  auto in = make_buffer("in", DataType::kFloat32, {elements});
  auto out = make_buffer("out", DataType::kFloat32, {threads * width});
  auto acc = make_buffer("acc", DataType::kFloat32, {width}, "local");
  auto t = make_var("t"), p = make_var("p"), i = make_var("i"), a = make_var("a"), l = make_var("l");
  Expr slot = Expr(a) * lanes + Expr(l);
  auto over_acc = [&](Stmt body) {
    return make_for(a, make_int(0), make_int(kAccumulators),
                    make_for(l, make_int(0), make_int(lanes), body, ForKind::kVectorized), ForKind::kUnrolled);
  };
  Expr element = (Expr(t) * per_thread + Expr(i)) * width + slot;
  Stmt init = over_acc(make_store(acc, {slot}, make_float(0)));
  Stmt sum = make_for(p, make_int(0), make_int(passes),
                      make_for(i, make_int(0), make_int(per_thread),
                               over_acc(make_store(acc, {slot}, make_load(acc, {slot}) + make_load(in, {element})))));
  Stmt done = over_acc(make_store(out, {Expr(t) * width + slot}, make_load(acc, {slot})));
  Stmt body =
      make_for(t, make_int(0), make_int(threads), make_allocate(acc, make_seq({init, sum, done})), ForKind::kParallel);
  return Func{name, {in, out}, body};
}

// The name the ceilings are kept under: the CPU's model, or the device's name for a device target.
std::string machine_name(const Target& target) {
  const Device d = compile::target_device(target);
  if (d.type == DeviceType::kCPU) {
    CpuDeviceAPI cpu;
    auto v = cpu.attribute(0, DeviceAttr::kName);
    return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : "cpu";
  }
  const DeviceAPI* api = DeviceAPIRegistry::global().find(d.type);
  const DeviceAttrValue v =
      api && d.id < api->device_count() ? api->attribute(d.id, DeviceAttr::kName) : DeviceAttrValue{};
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : device_str(d);
}

// ── Ceilings of a device that is not the CPU (opencl) ───────────────────────────────────────
//
// The same two measurements, shaped for a device that runs many work-items at once: each
// work-item is one FMA chain set or one reader, the grid is blockIdx.x × threadIdx.x, and
// neighbouring work-items read neighbouring floats (so a GPU coalesces them):
//
//   work-item w = block·group + thread
//     fma:    acc[a] = acc[a]·x + y  (a < 12, `iterations` times), out[w·12 + a] = acc[a]
//     stream: for p < passes, i < steps, a < 12: acc[a] += in[(i·12 + a)·items + w]
//             (in[w·steps·12 + i·12 + a] where work-items do not run in lockstep: a CPU device)

struct Grid {
  int64_t blocks = 1, group = 1;
  int64_t items() const { return blocks * group; }
};

// `body(w)` over every work-item w of the grid, as thread-bound loops.
Stmt over_grid(const Grid& grid, const std::function<Stmt(Expr)>& body) {
  auto b = make_var("bx"), t = make_var("tx");
  return make_for(b, make_int(0), make_int(grid.blocks),
                  make_for(t, make_int(0), make_int(grid.group), body(Expr(b) * grid.group + Expr(t)),
                           ForKind::kThreadBound, "threadIdx.x"),
                  ForKind::kThreadBound, "blockIdx.x");
}

Func device_fma_kernel(const std::string& name, const Grid& grid, int64_t iterations) {
  auto out = make_buffer("out", DataType::kFloat32, {grid.items() * kAccumulators});
  auto acc = make_buffer("acc", DataType::kFloat32, {kAccumulators}, "local");
  auto it = make_var("it"), a = make_var("a");
  auto over_acc = [&](Stmt s) { return make_for(a, make_int(0), make_int(kAccumulators), s, ForKind::kUnrolled); };
  Stmt body = over_grid(grid, [&](Expr w) {
    Stmt init = over_acc(make_store(acc, {Expr(a)}, make_cast(DataType::kFloat32, Expr(a) + 1) * make_float(0.001)));
    Stmt step = make_for(
        it, make_int(0), make_int(iterations),
        over_acc(make_store(acc, {Expr(a)}, make_load(acc, {Expr(a)}) * make_float(0.9999f) + make_float(0.0001f))));
    Stmt done = over_acc(make_store(out, {w * kAccumulators + Expr(a)}, make_load(acc, {Expr(a)})));
    return make_allocate(acc, make_seq({init, step, done}));
  });
  return Func{name, {out}, body};
}

// `lockstep`: work-items run in groups that read together (a GPU's warp), so neighbouring
// work-items read neighbouring floats; otherwise (a CPU device, where each work-item runs alone)
// each work-item reads one contiguous chunk.
Func device_stream_kernel(const std::string& name, const Grid& grid, int64_t elements, int64_t passes, bool lockstep) {
  const int64_t steps = elements / grid.items() / kAccumulators;  // per work-item, kAccumulators floats each
  auto in = make_buffer("in", DataType::kFloat32, {elements});
  auto out = make_buffer("out", DataType::kFloat32, {grid.items() * kAccumulators});
  auto acc = make_buffer("acc", DataType::kFloat32, {kAccumulators}, "local");
  auto p = make_var("p"), i = make_var("i"), a = make_var("a");
  auto over_acc = [&](Stmt s) { return make_for(a, make_int(0), make_int(kAccumulators), s, ForKind::kUnrolled); };
  Stmt body = over_grid(grid, [&](Expr w) {
    const Expr read = Expr(i) * kAccumulators + Expr(a);  // the work-item's read number
    const Expr element = lockstep ? read * grid.items() + w : w * (steps * kAccumulators) + read;
    Stmt init = over_acc(make_store(acc, {Expr(a)}, make_float(0)));
    Stmt sum =
        make_for(p, make_int(0), make_int(passes),
                 make_for(i, make_int(0), make_int(steps),
                          over_acc(make_store(acc, {Expr(a)}, make_load(acc, {Expr(a)}) + make_load(in, {element})))));
    Stmt done = over_acc(make_store(out, {w * kAccumulators + Expr(a)}, make_load(acc, {Expr(a)})));
    return make_allocate(acc, make_seq({init, sum, done}));
  });
  return Func{name, {in, out}, body};
}

int64_t device_int(const DeviceAPI& api, Device d, DeviceAttr what, int64_t otherwise) {
  const DeviceAttrValue v = api.attribute(d.id, what);
  return std::holds_alternative<int64_t>(v) && std::get<int64_t>(v) > 0 ? std::get<int64_t>(v) : otherwise;
}

// Seconds of the best of `repeats` calls of the kernel on device arrays, each waited for.
double best_device_call(const Module& module, const std::string& kernel, const std::vector<const NDArray*>& args,
                        DeviceAPI& api, Device d, int repeats) {
  module.call(kernel, args);  // the first call may build or load the kernel
  api.stream_sync(d.id, nullptr);
  return best_of(repeats, [&] {
    module.call(kernel, args);
    api.stream_sync(d.id, nullptr);
  });
}

MachineCeilings calibrate_device(const Target& target, Device d, const CalibrateOptions& options) {
  DeviceAPI& api = DeviceAPIRegistry::global().get(d.type);
  if (d.id >= api.device_count())
    throw Error("calibrate: device " + device_str(d) + " does not exist (" + std::to_string(api.device_count()) +
                " device(s))");
  MachineCeilings c;
  c.machine = machine_name(target);
  c.target = target.str();
  const int repeats = options.quick ? 2 : 5;
  const int64_t group = std::min<int64_t>(device_int(api, d, DeviceAttr::kMaxThreadsPerBlock, 64), 256);
  const Grid grid{device_int(api, d, DeviceAttr::kMultiProcessorCount, 1) * 8, group};
  c.threads = static_cast<int>(grid.items());
  const bool lockstep = target_traits(target).sub_group_width > 1;

  // Iterations grow until a call takes long enough to time (a GPU is far faster than PoCL).
  const double enough_seconds = options.quick ? 0.02 : 0.1;
  for (int64_t iterations = options.quick ? 2000 : 20000;; iterations *= 8) {
    const Func f = device_fma_kernel("calibrate_fma", grid, iterations);
    const auto module = build_module({f}, target);
    NDArray out = NDArray::empty(DataType::kFloat32, {grid.items() * kAccumulators}, d);
    const double seconds = best_device_call(*module, f.name, {&out}, api, d, repeats);
    if (seconds < enough_seconds && iterations < (int64_t{1} << 30)) continue;
    const double flops = 2.0 * static_cast<double>(iterations) * static_cast<double>(kAccumulators * grid.items());
    c.compute.push_back({"fma", flops / seconds / 1e9});
    break;
  }
  const int64_t memory = device_int(api, d, DeviceAttr::kTotalMemoryBytes, int64_t{1} << 30);
  const int64_t big = std::min<int64_t>(options.quick ? (int64_t{8} << 20) : (int64_t{64} << 20), memory / 16);
  struct Stream {
    const char* name;
    int64_t elements, passes;
  };
  for (const Stream& s : {Stream{"dram", big, 1}, Stream{"l2", grid.items() * 64, options.quick ? 20 : 200}}) {
    const int64_t per_item = grid.items() * kAccumulators;
    const int64_t elements = std::max<int64_t>(s.elements / per_item, 1) * per_item;
    const Func f = device_stream_kernel(std::string("calibrate_") + s.name, grid, elements, s.passes, lockstep);
    const auto module = build_module({f}, target);
    Tensor ones(DataType::kFloat32, {elements});
    std::fill(ones.data<float>(), ones.data<float>() + elements, 1.0f);
    NDArray in = NDArray::from_host(ones, d);
    NDArray out = NDArray::empty(DataType::kFloat32, {grid.items() * kAccumulators}, d);
    const double seconds = best_device_call(*module, f.name, {&in, &out}, api, d, repeats);
    c.bandwidth.push_back(
        {s.name, static_cast<double>(elements) * 4.0 * static_cast<double>(s.passes) / seconds / 1e9});
  }
  return c;
}

}  // namespace

double MachineCeilings::dram_gbps() const {
  for (const Ceiling& c : bandwidth)
    if (c.name == "dram") return c.value;
  return 0;
}

double MachineCeilings::attainable(double intensity, std::string* bound) const {
  double peak = peak_gflops(), memory = intensity * dram_gbps();
  if (memory < peak) {
    if (bound) *bound = "memory (dram)";
    return memory;
  }
  if (bound) *bound = "compute (" + (compute.empty() ? std::string("?") : compute.front().name) + ")";
  return peak;
}

nlohmann::json ceilings_json(const MachineCeilings& c) {
  nlohmann::json j{{"machine", c.machine}, {"target", c.target}, {"threads", c.threads}};
  for (const Ceiling& x : c.compute) j["compute_gflops"][x.name] = x.value;
  for (const Ceiling& x : c.bandwidth) j["bandwidth_gbps"][x.name] = x.value;
  return j;
}

MachineCeilings ceilings_from_json(const nlohmann::json& j) {
  MachineCeilings c;
  c.machine = j.value("machine", "");
  c.target = j.value("target", "");
  c.threads = j.value("threads", 1);
  const nlohmann::json compute = j.value("compute_gflops", nlohmann::json::object());
  const nlohmann::json bandwidth = j.value("bandwidth_gbps", nlohmann::json::object());
  for (const auto& [k, v] : compute.items()) c.compute.push_back({k, v.get<double>()});
  for (const auto& [k, v] : bandwidth.items()) c.bandwidth.push_back({k, v.get<double>()});
  auto by_value = [](const Ceiling& a, const Ceiling& b) { return a.value > b.value; };
  std::sort(c.compute.begin(), c.compute.end(), by_value);
  std::sort(c.bandwidth.begin(), c.bandwidth.end(), by_value);
  return c;
}

MachineCeilings calibrate(const Target& target, const CalibrateOptions& options) {
  const Device device = compile::target_device(target);
  if (device.type != DeviceType::kCPU) {
    MachineCeilings c = calibrate_device(target, device, options);
    auto by_value = [](const Ceiling& a, const Ceiling& b) { return a.value > b.value; };
    std::sort(c.compute.begin(), c.compute.end(), by_value);
    std::sort(c.bandwidth.begin(), c.bandwidth.end(), by_value);
    return c;
  }
  MachineCeilings c;
  c.machine = machine_name(target);
  c.target = target.str();
  const TargetTraits traits = target_traits(target);
  c.threads = traits.threads;
  ThreadPool::set_global_threads(c.threads);
  int repeats = options.quick ? 2 : 5;

  struct Variant {
    const char* name;
    int64_t lanes;
  };
  std::vector<Variant> variants{{"fma_1lane", 1}, {"fma_256", 8}};
  // 512-bit vectors where the target plans for them, and on kinds that plan for none (c, interp:
  // one lane), where the compiler may still use whatever the host has.
  if (traits.vector_lanes == 1 || traits.vector_lanes >= 16)
    variants.push_back({"fma_512", 16});
  for (const Variant& v : variants) {
    int64_t iterations = (options.quick ? 200000 : 2000000) * 16 / std::max<int64_t>(v.lanes, 4);
    Func f = fma_kernel(std::string("calibrate_") + v.name, c.threads, v.lanes, iterations);
    auto module = build_module({f}, target);
    Tensor out(DataType::kFloat32, {c.threads * kAccumulators * v.lanes});
    double seconds = best_of(repeats, [&] { module->call_host(f.name, {&out}); });
    double flops = 2.0 * static_cast<double>(iterations) * static_cast<double>(kAccumulators * v.lanes * c.threads);
    c.compute.push_back({v.name, flops / seconds / 1e9});
  }

  struct Stream {
    const char* name;
    int64_t elements, passes;
  };
  int64_t width = 16 * kAccumulators * c.threads;
  auto round = [&](int64_t n) { return std::max<int64_t>(n / width, 1) * width; };
  std::vector<Stream> streams{{"dram", round(options.quick ? (int64_t{8} << 20) : (int64_t{32} << 20)), 1},
                              {"l2", round(int64_t{32} << 10), options.quick ? 200 : 2000}};
  for (const Stream& s : streams) {
    Func f = stream_kernel(std::string("calibrate_") + s.name, c.threads, s.elements, s.passes);
    auto module = build_module({f}, target);
    Tensor in(DataType::kFloat32, {s.elements});
    for (int64_t i = 0; i < s.elements; ++i) in.data<float>()[i] = 1.0f;
    Tensor out(DataType::kFloat32, {width});
    double seconds = best_of(repeats, [&] { module->call_host(f.name, {&in, &out}); });
    c.bandwidth.push_back(
        {s.name, static_cast<double>(s.elements) * 4.0 * static_cast<double>(s.passes) / seconds / 1e9});
  }
  ThreadPool::set_global_threads(1);
  auto by_value = [](const Ceiling& a, const Ceiling& b) { return a.value > b.value; };
  std::sort(c.compute.begin(), c.compute.end(), by_value);
  std::sort(c.bandwidth.begin(), c.bandwidth.end(), by_value);
  return c;
}

std::string ceilings_cache_path() {
  if (const char* dir = std::getenv("TESSEL_CACHE_DIR")) return std::string(dir) + "/ceilings.json";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/tessel/ceilings.json";
}

namespace {
nlohmann::json read_cache() {
  std::ifstream in(ceilings_cache_path());
  if (!in) return nlohmann::json::object();
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const nlohmann::json::exception&) {
    return nlohmann::json::object();  // a damaged cache is remeasured, not an error
  }
}
}  // namespace

std::optional<MachineCeilings> load_cached_ceilings(const Target& target) {
  nlohmann::json cache = read_cache();
  std::string key = machine_name(target) + " | " + target.str();
  if (!cache.contains(key)) return std::nullopt;
  return ceilings_from_json(cache[key]);
}

void save_cached_ceilings(const MachineCeilings& c) {
  nlohmann::json cache = read_cache();
  cache[c.machine + " | " + c.target] = ceilings_json(c);
  fs::path path = ceilings_cache_path();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path);
  if (!out) throw Error(path.string() + ": cannot write the calibration cache");
  out << cache.dump(2) << "\n";
}

}  // namespace tessel::analysis
