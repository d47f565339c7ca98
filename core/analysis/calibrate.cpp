#include "core/analysis/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/loopir/functor.h"
#include "core/loopir/ir.h"
#include "core/runtime/codegen.h"
#include "core/runtime/cpu_device_api.h"
#include "core/runtime/thread_pool.h"
#include "core/support/error.h"

namespace tessel::compile {

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
    Stmt inner = lanes > 1 ? make_for(l, make_int(0), make_int(lanes), body, ForKind::kVectorized) : substitute(body, {{l.get(), make_int(0)}});
    return make_for(a, make_int(0), make_int(kAccumulators), inner, ForKind::kUnrolled);
  };
  Stmt init = over_acc(make_store(acc, {slot}, make_cast(DataType::kFloat32, Expr(a) + 1) * make_float(0.001)));
  Stmt step = make_for(it, make_int(0), make_int(iterations),
                       over_acc(make_store(acc, {slot}, make_load(acc, {slot}) * make_float(0.9999f) + make_float(0.0001f))));
  Stmt done = over_acc(make_store(out, {Expr(t) * width + slot}, make_load(acc, {slot})));
  Stmt body = make_for(t, make_int(0), make_int(threads), make_allocate(acc, make_seq({init, step, done})), ForKind::kParallel);
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
    return make_for(a, make_int(0), make_int(kAccumulators), make_for(l, make_int(0), make_int(lanes), body, ForKind::kVectorized),
                    ForKind::kUnrolled);
  };
  Expr element = (Expr(t) * per_thread + Expr(i)) * width + slot;
  Stmt init = over_acc(make_store(acc, {slot}, make_float(0)));
  Stmt sum = make_for(p, make_int(0), make_int(passes),
                      make_for(i, make_int(0), make_int(per_thread), over_acc(make_store(acc, {slot}, make_load(acc, {slot}) + make_load(in, {element})))));
  Stmt done = over_acc(make_store(out, {Expr(t) * width + slot}, make_load(acc, {slot})));
  Stmt body = make_for(t, make_int(0), make_int(threads), make_allocate(acc, make_seq({init, sum, done})), ForKind::kParallel);
  return Func{name, {in, out}, body};
}

std::string machine_name() {
  CpuDeviceAPI cpu;
  auto v = cpu.attribute(0, DeviceAttr::kName);
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : "cpu";
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
  MachineCeilings c;
  c.machine = machine_name();
  c.target = target.str();
  c.threads = target.kind_info().find_option("num_threads") ? static_cast<int>(target.get_int("num_threads")) : 1;
  ThreadPool::set_global_threads(c.threads);
  int repeats = options.quick ? 2 : 5;

  struct Variant {
    const char* name;
    int64_t lanes;
  };
  std::vector<Variant> variants{{"fma_1lane", 1}, {"fma_256", 8}};
  if (!target.kind_info().find_option("vector_bits") || target.get_int("vector_bits") >= 512) variants.push_back({"fma_512", 16});
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
                              {"l2", round(int64_t{32} << 10) , options.quick ? 200 : 2000}};
  for (const Stream& s : streams) {
    Func f = stream_kernel(std::string("calibrate_") + s.name, c.threads, s.elements, s.passes);
    auto module = build_module({f}, target);
    Tensor in(DataType::kFloat32, {s.elements});
    for (int64_t i = 0; i < s.elements; ++i) in.data<float>()[i] = 1.0f;
    Tensor out(DataType::kFloat32, {width});
    double seconds = best_of(repeats, [&] { module->call_host(f.name, {&in, &out}); });
    c.bandwidth.push_back({s.name, static_cast<double>(s.elements) * 4.0 * static_cast<double>(s.passes) / seconds / 1e9});
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
  std::string key = machine_name() + " | " + target.str();
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

}  // namespace tessel::compile
