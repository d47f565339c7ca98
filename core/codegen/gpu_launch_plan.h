#pragma once
// How each root loop nest of a lowered function launches, for gpu_kernel_c.cpp: on a grid of the
// extents its thread-bound loops give, when the rules in gpu_kernel_c.h hold (one extent per tag,
// every store inside the loops of every launched tag, barriers outside conditions, shared buffers
// within the shared memory), else as one thread that runs the nest in order, with the reason:
//
//   for b in blockIdx.x (16) { for t in threadIdx.x (64) { C[b*64 + t] = ... } }
//     -> grid: blocks {16, 1, 1}, threads {64, 1, 1}
//   for b in blockIdx.x (16) { for t in threadIdx.x (64) { ... }  C[b] = ... }
//     -> one thread: "a store outside the loops of some bound tag (every work-item would make it)"
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/codegen/gpu_kernel_c.h"
#include "core/loopir/ir.h"

namespace tessel::codegen {

// A private array larger than this would not fit a thread's stack on most devices: it runs as
// one thread with the array in a workspace instead.
constexpr int64_t kMaxPrivateBytes = 16 * 1024;

// blockIdx.x, .y, .z are 0, 1, 2; threadIdx.x, .y, .z 3, 4, 5; any other tag -1.
int tag_index(const std::string& tag);

struct LaunchPlan {
  bool grid = false;
  std::array<int64_t, 6> extent{0, 0, 0, 0, 0, 0};  // per tag; 0: not bound
  std::string why_serial;
};

// How root loop nest `body` launches on a device with `limits`.
LaunchPlan plan_launch(const loopir::Stmt& body, const GpuDialect& dialect, const GpuLimits& limits);

// The launch's note: "grid of 16x1x1 work-groups, 64x1x1 work-items each", or "one work-item runs
// the loop program in order (why)".
std::string launch_note(const LaunchPlan& p, const GpuLaunch& l, const GpuDialect& dialect);

// Per parameter of `f`: whether it stores to it (what a host call copies back).
std::vector<bool> written_params(const loopir::Func& f);

}  // namespace tessel::codegen
