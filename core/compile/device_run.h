#pragma once
// Running a compiled model on a device whose memory is not the host's (opencl): the static memory
// plan is laid out in device memory, and data crosses to the host only where it must.
//
//   host inputs ──copy──▶ device        weights ──copy, once per model──▶ device (kept)
//                          │
//   plan block 0..B-1: one device allocation each; every planned tensor is the start of its block
//                          │
//   compiled kernel ─▶ Module::call on device arrays (no copies)
//   reference group ─▶ its inputs device→host, the reference kernels, its outputs host→device
//   host kernel     ─▶ the same, with the host module's code (an accelerator's kernels that do
//                          │  not tensorize: partitioning, compiled_model.h)
//                          │                              (the host↔device edges of `--report`)
//   graph outputs ──copy──▶ host
//
// Every copy is counted in RunTimes::copies (what, how many bytes, how long), so `tessel run
// --report` and `profile` can show what the fallbacks cost.
#include <map>
#include <mutex>
#include <vector>

#include "core/compile/compiled_model.h"
#include "core/runtime/ndarray.h"

namespace tessel::compile {

// The weights of one model on one device, copied the first time the model runs there.
class DeviceConstants {
 public:
  // The device copy of constant `v` (made now if it is not there yet).
  const NDArray& get(const Graph& g, ValueId v, Device device);

 private:
  std::mutex mutex_;
  std::map<ValueId, NDArray> arrays_;
};

// CompiledModel::run for a target whose device is not the CPU. `device` is where the kernels run.
std::vector<Tensor> run_on_device(const CompiledModel& model, Device device, DeviceConstants& constants,
                                  const std::vector<Tensor>& inputs, RunTimes* times);

}  // namespace tessel::compile
