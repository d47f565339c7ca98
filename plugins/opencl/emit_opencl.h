#pragma once
// Loop IR → OpenCL C: one `__kernel` per lowered function, and how to launch it.
//
//   for b in blockIdx.x (16)          __kernel void k(__global const float* A, ..., __global rec* r) {
//     for t in threadIdx.x (64)   ->    long b = get_group_id(0);  long t = get_local_id(0);
//       C[b*64 + t] = A[...] + 1          C[b*64 + t] = A[...] + 1; }
//                                      launch: 16 work-groups of 64 work-items
//
// A function whose body is a sequence of root loop nests under global allocations (a reduction
// stage, then the output that reads it) becomes one __kernel per nest, launched in order, the
// allocations workspaces they share. A nest runs on a grid when its thread-bound loops describe
// one the device can run: every loop bound to a tag with the same constant extent, every store
// to memory other than `local` (private) made inside the loops of every launched tag, barriers
// outside conditions, shared buffers within the local memory. Any other nest (the CPU
// schedules, two loops bound to one block index) runs as one work-item that executes it in
// order: slower, never wrong. The reason is in the `launch` artifact and above each __kernel.
//
// Scopes: `global` buffers are the parameters, and allocations become workspace buffers the
// module allocates once and passes after the parameters; `shared` is `__local` (one work-item:
// a workspace); `local` is private memory. f16 values are computed in float and stored with
// vload_half/vstore_half_rte (no cl_khr_fp16 needed); bf16 is kept as raw bits. Vectorized loops
// are emitted as loops (the OpenCL compiler vectorizes across work-items), unrolled loops carry
// `#pragma unroll`. Tensor intrinsics have no OpenCL implementation: they are refused.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/loopir/ir.h"

namespace tessel::opencl {

struct EmitOptions {
  int64_t max_work_group_size = 256;   // the most work-items a work-group may have
  int64_t local_memory_bytes = 32768;  // the __local bytes a work-group may use
};

// One __kernel of a lowered function: a root loop nest, launched on its own grid.
struct Launch {
  std::string symbol;                      // the __kernel's name (an identifier made from the kernel's)
  std::array<int64_t, 3> groups{1, 1, 1};  // work-groups per dimension (blockIdx.x/y/z)
  std::array<int64_t, 3> local{1, 1, 1};   // work-items per work-group (threadIdx.x/y/z)
  std::string note;                        // "grid ..." or "one work-item (why)"
};

// A lowered function as OpenCL runs it: its root loop nests one after the other on one in-order
// queue (the end of one launch is the grid-wide barrier between them), all taking the same
// arguments.
struct KernelLaunch {
  size_t params = 0;                     // buffers, as the lowered function lists them
  std::vector<int64_t> workspace_bytes;  // then one buffer per workspace, then the check record
  std::vector<Launch> launches;
  std::string note() const;  // every launch's note, "; " between them
};

struct OpenClProgram {
  std::string source;
  std::vector<KernelLaunch> kernels;  // in the order of the lowered functions
};

// Throws Error "kernel 'K': opencl codegen: ..." for what OpenCL C cannot express here.
OpenClProgram emit_opencl(const std::vector<loopir::Func>& kernels, const EmitOptions& options);

}  // namespace tessel::opencl
