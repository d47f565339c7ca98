#pragma once
// What the compiler's decisions need to know about a target, derived once from its kind and
// options. This is the one place that reads a target's options by name for a decision; graph
// passes, default schedules, the tuner's search space, the compile driver, the studio and the CLI
// read the traits, so they cannot disagree about what a target is:
//
//   Target "llvm -vector_bits=256 -num_threads=2"
//      │ target_traits()                          (kind's DeviceClass + its options)
//      ▼
//   TargetTraits { device class, lanes, caches, vnni, threads, accelerator core, scopes, intrinsics }
//      ├──▶ graph passes           transform_layout's channel blocks, quantize_for_accelerator
//      ├──▶ default schedules      schedule::default_schedule_for (core/schedule/target_default.h)
//      ├──▶ placement              compile::kernel_default (which device runs a kernel, and how)
//      ├──▶ tune::SearchSpace      candidate 0 is that same default
//      └──▶ the studio's step forms (memory scopes, intrinsics)
//
// A capability is never inferred from an option's presence: the kind declares its DeviceClass,
// and a kind of a class declares the options that class reads (an accelerator: gemm, wgt_bytes,
// gemm_layout), or target_traits throws naming the kind and the option.
#include <cstdint>
#include <string>
#include <vector>

#include "core/target/target.h"

namespace tessel {

struct TargetTraits {
  DeviceClass device_class = DeviceClass::kCpu;
  std::string kind;    // the target kind's name ("llvm")
  std::string device;  // the device type its code runs on ("cpu", "opencl", "accel-sim")

  // A CPU (also what a GPU's or an accelerator's host code would see; the defaults are a common x86 core's).
  int64_t vector_lanes = 1;  // 32-bit floats per vector register (vector_bits / 32; 1: scalar)
  int64_t l1_bytes = 32 * 1024;
  int64_t l2_bytes = 1024 * 1024;
  bool vnni = false;  // int8 products go onto the x86 dot-product step
  int threads = 1;    // threads for parallel loops

  // A GPU: threads of a block that run in lockstep (the kind's sub_group_width; 1: none declared).
  int64_t sub_group_width = 1;

  // An accelerator's GEMM core (DeviceClass::kAccelerator only).
  struct Accelerator {
    int64_t gemm = 16;               // n: an n x n x n int8 GEMM per instruction
    int64_t wgt_bytes = 256 * 1024;  // the weight scratchpad
    bool tiled_layout = true;        // offloaded weights laid out in n x n tiles (else row-major)
  } accelerator;

  // Memory scopes a schedule may place a tensor in besides "global" (the kind's own; empty: none
  // declared) and the tensor intrinsics its code generator runs (empty with all_intrinsics: every one).
  std::vector<std::string> memory_scopes;
  std::vector<std::string> intrinsics;
  bool all_intrinsics = true;

  bool is_cpu() const { return device_class == DeviceClass::kCpu; }
  bool is_gpu() const { return device_class == DeviceClass::kGpu; }
  bool is_accelerator() const { return device_class == DeviceClass::kAccelerator; }
};

// The traits of `target`. Throws Error when a kind of a device class lacks an option that class
// needs (an accelerator kind without `gemm`), naming the kind.
TargetTraits target_traits(const Target& target);

// A CPU with vectors of `lanes` floats and the default caches: for tests and benchmarks that
// study one kernel's schedule without a target kind.
TargetTraits cpu_traits(int64_t lanes);

}  // namespace tessel
