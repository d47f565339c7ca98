#include "core/compile/device_run.h"

#include <unordered_map>

#include "core/compile/kernel_compiler.h"
#include "core/runtime/reference_executor.h"
#include "core/support/timing.h"

namespace tessel::compile {

const NDArray& DeviceConstants::get(const Graph& g, ValueId v, Device device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = arrays_.find(v);
  if (it == arrays_.end()) it = arrays_.emplace(v, NDArray::from_host(g.value(v).value, device)).first;
  return it->second;
}

namespace {

using Clock = std::chrono::steady_clock;

// Where each value of one run is, and the copies that keep it where it is needed. A value is
// written once (the graph is SSA), so it is valid on the side that produced it and becomes valid
// on the other side only by a copy.
class Residency {
 public:
  Residency(const CompiledModel& model, Device device, DeviceConstants& constants, const std::vector<Tensor>& inputs,
            RunTimes* times, Clock::time_point start)
      : g_(model.graph()),
        device_(device),
        api_(DeviceAPIRegistry::global().get(device.type)),
        constants_(constants),
        host_(bind_graph_inputs(g_, inputs)),  // errors name the input
        device_values_(g_.values.size()),
        on_device_(g_.values.size(), false),
        is_input_(g_.values.size(), false),
        times_(times),
        start_(start) {
    for (ValueId v : g_.inputs) is_input_[v] = true;
    const MemoryPlan& plan = *model.pipeline().memory_plan;
    std::unordered_map<int, size_t> block_of_id;
    for (const StorageBlock& b : plan.storages) {
      block_of_id[b.id] = blocks_.size();
      blocks_.push_back(NDArray::empty(DataType::kUInt8, {std::max<int64_t>(b.size_bytes, 1)}, device));
    }
    // Every planned tensor is the start of its block (memory_plan.h: its offset is the block's).
    for (const PlannedTensor& t : plan.tensors) {
      const TensorType& type = g_.value(t.value).type;
      device_values_[t.value] =
          NDArray::view(type.dtype, type.shape, device, blocks_.at(block_of_id.at(t.storage_id)).data());
    }
  }

  // Value v in device memory, copied there now if it was on the host only.
  const NDArray& on_device(ValueId v, int kernel) {
    if (g_.is_constant(v)) return constants_.get(g_, v, device_);
    NDArray& array = device_values_[v];
    const TensorType& type = g_.value(v).type;
    if (!array.data()) array = NDArray::empty(type.dtype, type.shape, device_);  // not planned
    if (!on_device_[v] && host_[v].defined()) {
      const double begin = now_ms();
      array.copy_from(host_[v]);
      note_copy(is_input_[v] ? -1 : kernel, v, true, begin);  // a graph input's copy is the run's
      on_device_[v] = true;
    }
    return array;
  }

  // Value v in host memory, copied back now if it was on the device only.
  Tensor& on_host(ValueId v, int kernel) {
    Tensor& t = host_[v];
    if (!t.defined() && on_device_[v]) {
      const double begin = now_ms();
      t = device_values_[v].to_host();
      note_copy(kernel, v, false, begin);
    }
    return t;
  }

  void written_on_device(ValueId v) {
    on_device_[v] = true;
    host_[v] = Tensor();
  }
  void written_on_host(ValueId v) { on_device_[v] = false; }

  double now_ms() const { return ms_between(start_, Clock::now()); }

 private:
  void note_copy(int kernel, ValueId v, bool to_device, double begin_ms) {
    if (!times_) return;
    api_.stream_sync(device_.id, nullptr);
    const TensorType& type = g_.value(v).type;
    const int64_t bytes = shape_numel(type.shape) * static_cast<int64_t>(dtype_size(type.dtype));
    times_->copies.push_back({kernel, g_.value(v).name, to_device, bytes, begin_ms, now_ms()});
  }

  const Graph& g_;
  Device device_;
  DeviceAPI& api_;
  DeviceConstants& constants_;
  std::vector<Tensor> host_;            // by value id: inputs, constants, what ran on the host
  std::vector<NDArray> blocks_;         // the memory plan's blocks in device memory
  std::vector<NDArray> device_values_;  // by value id: a view into a block, or its own array
  std::vector<bool> on_device_;         // the device copy is current
  std::vector<bool> is_input_;          // a graph input
  RunTimes* times_;
  Clock::time_point start_;
};

}  // namespace

std::vector<Tensor> run_on_device(const CompiledModel& model, Device device, DeviceConstants& constants,
                                  const std::vector<Tensor>& inputs, RunTimes* times) {
  const Graph& g = model.graph();
  const auto& groups = model.pipeline().fusion->groups;
  DeviceAPI& api = DeviceAPIRegistry::global().get(device.type);
  const auto run_start = Clock::now();
  Residency where(model, device, constants, inputs, times, run_start);

  for (size_t index = 0; index < model.kernels().size(); ++index) {
    const CompiledKernel& k = model.kernels()[index];
    const FusionGroup& group = groups.at(static_cast<size_t>(k.group));
    const int kernel = static_cast<int>(index);
    const double begin = where.now_ms();
    if (k.compiled && k.on_host) {  // partitioned off the accelerator: compiled for the host
      std::vector<Tensor*> args;
      for (ValueId v : k.params) {
        Tensor& t = where.on_host(v, kernel);
        if (!t.defined()) t = Tensor(g.value(v).type.dtype, g.value(v).type.shape);  // an output
        args.push_back(&t);
      }
      model.host_module()->call_host(k.name, args);
      for (ValueId v : group.outputs) where.written_on_host(v);
    } else if (k.compiled) {
      std::vector<const NDArray*> args;
      for (ValueId v : k.params) args.push_back(&where.on_device(v, kernel));
      const double launched = where.now_ms();
      model.module()->call(k.name, args);
      for (ValueId v : group.outputs) where.written_on_device(v);
      if (times) {
        if (const std::optional<LaunchTimes> device = model.module()->last_launch_times())
          times->device_spans.push_back({kernel, launched + device->start_ms, launched + device->end_ms});
        if (auto counters = model.module()->last_call_counters(); !counters.empty())
          times->device_counters.push_back({kernel, std::move(counters)});
        if (auto lanes = model.module()->last_call_lanes()) times->device_lanes.push_back({kernel, std::move(lanes)});
      }
    } else {
      run_group_reference(g, group, [&](ValueId v) -> Tensor& { return where.on_host(v, kernel); });
      for (ValueId v : group.outputs) where.written_on_host(v);
    }
    if (times) {
      api.stream_sync(device.id, nullptr);  // a kernel's time is until its results are there
      const double end = where.now_ms();
      times->kernel_ms.push_back(end - begin);
      times->kernel_spans_ms.emplace_back(begin, end);
    }
  }
  std::vector<Tensor> out;
  for (ValueId v : g.outputs) out.push_back(where.on_host(v, -1).clone());
  if (times) times->total_ms = where.now_ms();
  return out;
}

}  // namespace tessel::compile
