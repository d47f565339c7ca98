#include "core/schedule/target_default.h"

#include "core/schedule/int8_vnni_schedule.h"
#include "core/support/error.h"

namespace tessel::schedule {

CpuCaches cpu_caches_of(const TargetTraits& traits) { return {.l1_bytes = traits.l1_bytes, .l2_bytes = traits.l2_bytes}; }

AccelKnobs accel_knobs_of(const TargetTraits& traits) {
  return {.gemm = traits.accelerator.gemm, .vthreads = 2, .wgt_bytes = traits.accelerator.wgt_bytes};
}

DefaultSchedule default_schedule_for(const te::ComputeDag& dag, const TargetTraits& traits) {
  DefaultSchedule d;
  try {
    switch (traits.device_class) {
      case DeviceClass::kAccelerator:
        d.schedule = default_accel_schedule(dag, accel_knobs_of(traits));
        return d;
      case DeviceClass::kGpu:
        d.schedule = default_gpu_schedule(dag);
        return d;
      case DeviceClass::kCpu:
        // An int8 product in the VNNI form (core/te/int8_dot_product.h): on the dot step where the
        // target has it, otherwise its vector form over the same packed tiles.
        if (std::optional<Schedule> s = int8_vnni_schedule(dag, traits.vnni)) {
          d.schedule = std::move(*s);
          return d;
        }
        d.schedule = default_cpu_schedule(dag, traits.vector_lanes, {}, cpu_caches_of(traits));
        return d;
    }
  } catch (const Error& e) {
    d.schedule = {};
    d.not_applied = e.what();
    return d;
  }
  throw Error("default_schedule_for: unknown device class");
}

}  // namespace tessel::schedule
