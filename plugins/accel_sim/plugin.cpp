// The accel_sim plugin: target kind `accel-sim`, its code generator (loop IR → the accelerator's
// instruction stream, codegen.h) and the DeviceAPI of the simulated accelerator (device_api.h).
//
//   lowered kernels ──generate_program──▶ Program per kernel ──dry run──▶ refused, or a Module
//   Module::call(NDArrays on accel-sim:0)  their DRAM addresses are the program's buffers
//   Module::call_host(host tensors)        copied into simulated DRAM, run, outputs copied back
//
// Every kernel is simulated once at compile time on scratch DRAM: deadlocks, races and
// out-of-bounds accesses do not depend on the data, so a kernel that compiles runs. The listing
// (artifact "accel_program") carries that run's cycle estimate; "accel_profile" holds the counts
// of the last call of each kernel and "accel_timeline" its instructions' (unit, start, end). The
// last call's counters and lanes also reach the profile as values (last_call_counters,
// last_call_lanes → RunTimes), which the Chrome trace and the studio's pipeline pane draw.
#include <map>
#include <mutex>

#include "core/plugin/plugin_api.h"
#include "core/runtime/device_lanes.h"
#include "plugins/accel_sim/codegen.h"
#include "plugins/accel_sim/device_api.h"

namespace {

using namespace tessel;
using accel::AccelSimDeviceAPI;

AccelSimDeviceAPI* g_api = nullptr;  // owned by the DeviceAPI registry, which outlives every module

int64_t param_bytes(const KernelParam& p) { return shape_numel(p.shape) * static_cast<int64_t>(dtype_size(p.dtype)); }

class AccelModule final : public Module {
 public:
  AccelModule(const std::vector<loopir::Func>& kernels, const accel::MachineConfig& config) : config_(config) {
    for (const auto& f : kernels) {
      add_kernel(kernel_signature(f));
      programs_.push_back(accel::generate_program(f, config));
      estimates_.push_back(dry_run(programs_.size() - 1));
    }
    last_.resize(programs_.size());
  }

  std::string target_kind() const override { return "accel-sim"; }

  // The simulated time of the last call: its cycles at the clock of the machine model.
  std::optional<LaunchTimes> last_launch_times() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!last_call_) return std::nullopt;
    const double ms = static_cast<double>(last_call_->cycles) / (static_cast<double>(config_.clock_mhz) * 1e3);
    return LaunchTimes{.submit_ms = 0, .start_ms = 0, .end_ms = ms};
  }

  std::vector<std::pair<std::string, double>> last_call_counters() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!last_call_) return {};
    const accel::SimResult& r = *last_call_;
    const double cycles = static_cast<double>(std::max<int64_t>(r.cycles, 1));
    std::vector<std::pair<std::string, double>> out{{"cycles", static_cast<double>(r.cycles)}};
    for (int u = 0; u < accel::kUnits; ++u) {
      const std::string unit = accel::unit_name(static_cast<accel::Unit>(u));
      out.emplace_back(unit + "_busy", static_cast<double>(r.busy[static_cast<size_t>(u)]));
      out.emplace_back(unit + "_utilization", static_cast<double>(r.busy[static_cast<size_t>(u)]) / cycles);
    }
    out.emplace_back("dram_read_bytes", static_cast<double>(r.dram_read_bytes));
    out.emplace_back("dram_write_bytes", static_cast<double>(r.dram_write_bytes));
    out.emplace_back("dram_burst_bytes", static_cast<double>(r.dram_burst_bytes));
    out.emplace_back("macs", static_cast<double>(r.macs));
    return out;
  }

  // The last call's timeline as lanes: one interval per instruction on its unit's lane, its kind
  // "LOAD inp", "GEMM", "ALU", "STORE" or "NOP" (a NOP only carries tokens), the tokens it waited
  // for and gave as lane masks; bounded by merging (core/runtime/device_lanes.h).
  std::shared_ptr<const DeviceLanes> last_call_lanes() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!last_call_) return nullptr;
    const accel::Program& program = programs_[last_kernel_];
    std::vector<std::string> lanes, kinds;
    for (int u = 0; u < accel::kUnits; ++u) lanes.emplace_back(accel::unit_name(static_cast<accel::Unit>(u)));
    std::map<std::string, int> kind_index;
    auto kind_of = [&](const accel::Instruction& in) {
      std::string kind = accel::opcode_name(in.op);
      if (in.op == accel::Opcode::kLoad) kind += std::string(" ") + accel::scratchpad_name(in.sram);
      auto [it, added] = kind_index.try_emplace(kind, static_cast<int>(kinds.size()));
      if (added) kinds.push_back(kind);
      return it->second;
    };
    std::vector<DeviceInterval> intervals;
    intervals.reserve(last_call_->timeline.size());
    for (size_t k = 0; k < last_call_->timeline.size() && k < program.insns.size(); ++k) {
      const accel::Instruction& in = program.insns[k];
      const accel::TimelineEntry& t = last_call_->timeline[k];
      DeviceInterval i{.lane = static_cast<int>(t.unit),
                       .kind = kind_of(in),
                       .start = t.start,
                       .end = t.end,
                       .busy = t.end - t.start,
                       .first = static_cast<int64_t>(k)};
      for (int u = 0; u < accel::kUnits; ++u) {
        if (in.pop[static_cast<size_t>(u)] > 0) i.waits_on |= 1u << u;
        if (in.push[static_cast<size_t>(u)] > 0) i.notifies |= 1u << u;
      }
      intervals.push_back(i);
    }
    return std::make_shared<const DeviceLanes>(make_device_lanes(std::move(lanes), std::move(kinds),
                                                                 std::move(intervals), last_call_->cycles,
                                                                 static_cast<double>(config_.clock_mhz)));
  }

  std::map<std::string, std::string> artifacts() const override {
    std::string text = "; machine: " + config_.str() + "\n";
    for (size_t k = 0; k < programs_.size(); ++k)
      text += "\n; kernel " + kernels()[k].name + ": " + std::to_string(programs_[k].insns.size()) +
              " instructions; simulated: " + estimates_[k].str() + "\n" + accel::listing(programs_[k]);
    std::string profile, timeline;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t k = 0; k < last_.size(); ++k) {
        if (!last_[k]) continue;
        profile += kernels()[k].name + ": " + last_[k]->str() + "\n";
        timeline += "; kernel " + kernels()[k].name + ": instruction unit start end\n";
        for (size_t i = 0; i < last_[k]->timeline.size(); ++i) {
          const accel::TimelineEntry& t = last_[k]->timeline[i];
          timeline += std::to_string(i) + " " + accel::unit_name(t.unit) + " " + std::to_string(t.start) + " " +
                      std::to_string(t.end) + "\n";
        }
      }
    }
    return {{"accel_program", text}, {"accel_profile", profile}, {"accel_timeline", timeline}};
  }

 protected:
  void invoke(size_t kernel_index, void* const* args) const override {
    std::vector<uint64_t> bases;
    for (size_t k = 0; k < kernels()[kernel_index].params.size(); ++k)
      bases.push_back(AccelSimDeviceAPI::address(args[k]));
    run(kernel_index, g_api->dram(), bases);
  }

  void invoke_host(size_t kernel_index, void* const* args) const override {
    const KernelSignature& sig = kernels()[kernel_index];
    accel::Dram& dram = g_api->dram();
    std::vector<uint64_t> bases;
    struct Release {
      accel::Dram& dram;
      std::vector<uint64_t>& bases;
      ~Release() {
        for (uint64_t b : bases) dram.free(b);
      }
    } release{dram, bases};
    for (size_t k = 0; k < sig.params.size(); ++k) {
      auto bytes = static_cast<size_t>(param_bytes(sig.params[k]));
      bases.push_back(dram.alloc(bytes));
      dram.write(bases.back(), args[k], bytes);
    }
    run(kernel_index, dram, bases);
    std::vector<bool> written(sig.params.size(), false);
    for (const accel::Instruction& in : programs_[kernel_index].insns)
      if (in.op == accel::Opcode::kStore) written.at(static_cast<size_t>(in.buffer)) = true;
    for (size_t k = 0; k < sig.params.size(); ++k)
      if (written[k]) dram.read(bases[k], args[k], static_cast<size_t>(param_bytes(sig.params[k])));
  }

 private:
  void run(size_t kernel_index, accel::Dram& dram, const std::vector<uint64_t>& bases) const {
    accel::SimResult r;
    try {
      r = accel::simulate(config_, programs_[kernel_index], dram, bases);
    } catch (const Error& e) {
      throw Error("kernel '" + kernels()[kernel_index].name + "': " + e.what());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    last_[kernel_index] = std::make_shared<accel::SimResult>(std::move(r));
    last_call_ = last_[kernel_index];
    last_kernel_ = kernel_index;
  }

  // The kernel on zeroed scratch DRAM: the checks that do not depend on the data, and the cycles.
  accel::SimResult dry_run(size_t kernel_index) const {
    accel::Dram scratch;
    std::vector<uint64_t> bases;
    for (const KernelParam& p : kernels()[kernel_index].params)
      bases.push_back(scratch.alloc(static_cast<size_t>(param_bytes(p))));
    try {
      return accel::simulate(config_, programs_[kernel_index], scratch, bases);
    } catch (const Error& e) {
      throw Error("kernel '" + kernels()[kernel_index].name +
                  "': accel-sim codegen: the instruction stream fails: " + e.what());
    }
  }

  accel::MachineConfig config_;
  std::vector<accel::Program> programs_;
  std::vector<accel::SimResult> estimates_;
  mutable std::vector<std::shared_ptr<const accel::SimResult>> last_;
  mutable std::shared_ptr<const accel::SimResult> last_call_;  // of whichever kernel ran last
  mutable size_t last_kernel_ = 0;                             // ... which is this one
  mutable std::mutex mutex_;
};

accel::MachineConfig config_of(const Target& t) {
  accel::MachineConfig m;
  m.gemm = t.get_int("gemm");
  m.inp_bytes = t.get_int("inp_bytes");
  m.wgt_bytes = t.get_int("wgt_bytes");
  m.acc_bytes = t.get_int("acc_bytes");
  m.dram_bytes_per_cycle = t.get_int("dram_bytes_per_cycle");
  m.dram_latency = t.get_int("dram_latency");
  m.dram_burst_bytes = t.get_int("dram_burst_bytes");
  m.clock_mhz = t.get_int("clock_mhz");
  return m;
}

std::unique_ptr<Module> generate(const std::vector<loopir::Func>& kernels, const Target& target) {
  return std::make_unique<AccelModule>(kernels, config_of(target));
}

TargetKind accel_kind() {
  using Type = TargetOptionSpec::Type;
  const accel::MachineConfig d;
  auto int_option = [](std::string name, std::string doc, int64_t value, int64_t min, int64_t max) {
    return TargetOptionSpec{.name = std::move(name),
                            .type = Type::kInt,
                            .doc = std::move(doc),
                            .default_value = [value] { return TargetOptionValue{value}; },
                            .min = min,
                            .max = max,
                            .choices = {}};
  };
  TargetKind k;
  k.name = "accel-sim";
  k.device = "accel-sim";
  k.device_class = DeviceClass::kAccelerator;
  k.doc =
      "A decoupled access-execute accelerator (load, compute, store units with dependence tokens; an int8 "
      "GEMM core) simulated in software, cycle-approximate";
  k.options = {
      int_option("gemm",
                 "The GEMM core's block: n x n x n int8 -> int32 per instruction (8 or 16: the declared "
                 "gemm_NxNxN_i8 intrinsics)",
                 d.gemm, 8, 16),
      int_option("inp_bytes", "Input scratchpad bytes (int8, accel.inp)", d.inp_bytes, 256, int64_t{1} << 30),
      int_option("wgt_bytes", "Weight scratchpad bytes (int8, accel.wgt)", d.wgt_bytes, 256, int64_t{1} << 30),
      int_option("acc_bytes", "Accumulator scratchpad bytes (int32, accel.acc)", d.acc_bytes, 1024, int64_t{1} << 30),
      int_option("dram_bytes_per_cycle", "DRAM bandwidth in bytes per cycle, shared by the load and store units",
                 d.dram_bytes_per_cycle, 1, 4096),
      int_option("dram_latency", "Cycles from a DRAM request to its first byte", d.dram_latency, 0, 100000),
      int_option("dram_burst_bytes",
                 "DRAM burst: each row of a LOAD or STORE tile moves every burst it touches, whole (1: exact bytes)",
                 d.dram_burst_bytes, 1, static_cast<int64_t>(accel::Dram::kAlignment)),
      int_option("clock_mhz", "Clock, to turn cycles into time", d.clock_mhz, 1, 10000),
      TargetOptionSpec{.name = "gemm_layout",
                       .type = TargetOptionSpec::Type::kString,
                       .doc = "How the compiler lays out an offloaded GEMM's weights and results in DRAM: tiled (each "
                              "n x n tile contiguous, a column of tiles after another: one burst-filling run per "
                              "LOAD) or rows (row-major matrices, a tile's rows strided)",
                       .default_value = [] { return TargetOptionValue{std::string("tiled")}; },
                       .choices = {"tiled", "rows"}},
  };
  k.memory_scopes = {"accel.inp", "accel.wgt", "accel.acc"};
  k.tensor_intrinsics = [](const Target& t) {
    const std::string n = std::to_string(t.get_int("gemm"));
    return std::vector<std::string>{"gemm_" + n + "x" + n + "x" + n + "_i8"};
  };
  k.options[0].check = [](const TargetOptionValue& v) {
    int64_t n = std::get<int64_t>(v);
    return n == 8 || n == 16 ? std::string() : "the GEMM core is 8 or 16 (the declared int8 GEMM intrinsics)";
  };
  return k;
}

}  // namespace

TESSEL_PLUGIN_ENTRY(tessel::PluginContext* ctx) {
  auto api = std::make_unique<AccelSimDeviceAPI>();
  g_api = api.get();
  ctx->add_device_api(std::move(api));
  ctx->add_target_kind(accel_kind());
  ctx->add_codegen("accel-sim", generate);
  return 0;
}
