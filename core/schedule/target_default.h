#pragma once
// The default schedule for a device class: the one rule from a target's traits to the schedule a
// kernel gets when nobody wrote or tuned one. compile::kernel_default (placement), `tessel lower`,
// the studio and the tuner's candidate 0 all come through here.
//
//   TargetTraits.device_class
//     ├─ accelerator ──▶ default_accel_schedule(gemm, wgt_bytes)   tensorized onto the GEMM core
//     ├─ gpu ──────────▶ default_gpu_schedule                      thread blocks, shared tiles
//     └─ cpu ──────────▶ int8_vnni_schedule (an int8 product in the VNNI form, vnni or not)
//                        else default_cpu_schedule(lanes, caches)   register tiles, panels, threads
//
// A default that does not apply to a kernel (an accelerator's core takes only int8 products of its
// size; a DAG the CPU rules cannot tile) is not an error here: the result says why, with plain
// loops (the empty schedule) in its place, and the caller decides (the compile driver records the
// reason, or places the kernel on the host).
#include <string>

#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule.h"
#include "core/target/target_traits.h"
#include "core/te/tensor.h"

namespace tessel::schedule {

struct DefaultSchedule {
  Schedule schedule;        // the default; the empty schedule (plain loops) when it does not apply
  std::string not_applied;  // why the device class's default does not apply; empty when it does
  bool applies() const { return not_applied.empty(); }
};
DefaultSchedule default_schedule_for(const te::ComputeDag& dag, const TargetTraits& traits);

// The traits a CPU or accelerator default schedule blocks for.
CpuCaches cpu_caches_of(const TargetTraits& traits);
AccelKnobs accel_knobs_of(const TargetTraits& traits);

}  // namespace tessel::schedule
