#pragma once
// Loop IR → OpenCL C: one `__kernel` per root loop nest of a lowered function, and how to launch
// it (core/codegen/gpu_kernel_c.h writes the kernels; this file is OpenCL's dialect of it).
//
//   for b in blockIdx.x (16)          __kernel void k(__global const float* A, ..., __global rec* r) {
//     for t in threadIdx.x (64)   ->    long b = get_group_id(0);  long t = get_local_id(0);
//       C[b*64 + t] = A[...] + 1          C[b*64 + t] = A[...] + 1; }
//                                      launch: 16 work-groups of 64 work-items
//
// Scopes: `shared` is `__local`, `local` is private memory. f16 values are computed in float and
// stored with vload_half/vstore_half_rte (no cl_khr_fp16 needed); bf16 is kept as raw bits. The
// OpenCL compiler vectorizes across work-items, so vectorized loops are emitted as loops.
#include <cstdint>
#include <vector>

#include "core/codegen/gpu_kernel_c.h"

namespace tessel::opencl {

struct EmitOptions {
  int64_t max_work_group_size = 256;   // the most work-items a work-group may have
  int64_t local_memory_bytes = 32768;  // the __local bytes a work-group may use
  int64_t vector_width = 1;            // the most lanes of a vector type a vectorized loop may use
};

// Throws Error "kernel 'K': opencl codegen: ..." for what OpenCL C cannot express here.
codegen::GpuProgram emit_opencl(const std::vector<loopir::Func>& kernels, const EmitOptions& options);

}  // namespace tessel::opencl
