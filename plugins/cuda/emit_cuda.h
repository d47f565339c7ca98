#pragma once
// Loop IR → CUDA C, compiled to PTX with NVRTC (core/codegen/gpu_kernel_c.h writes the kernels;
// this file is CUDA's dialect of it and the compile step).
//
//   for b in blockIdx.x (16)          extern "C" __global__ void k(const float* __restrict__ A, ...) {
//     for t in threadIdx.x (64)   ->    long b = blockIdx.x;  long t = threadIdx.x;
//       C[b*64 + t] = A[...] + 1          C[b*64 + t] = A[...] + 1; }
//                                      launch: 16 blocks of 64 threads
//
// `shared` is `__shared__` (static arrays, so at most the device's 48 KiB without opt-in), `local`
// is registers or local memory. f16 is computed in float and converted with PTX's cvt (no
// cuda_fp16.h, so NVRTC needs no include path); bf16 is kept as raw bits.
#include <cstdint>
#include <string>
#include <vector>

#include "core/codegen/gpu_kernel_c.h"

namespace tessel::cuda {

struct EmitOptions {
  int64_t max_threads_per_block = 1024;
  int64_t shared_memory_bytes = 48 * 1024;
};

// Throws Error "kernel 'K': cuda codegen: ..." for what CUDA C cannot express here.
codegen::GpuProgram emit_cuda(const std::vector<loopir::Func>& kernels, const EmitOptions& options);

// CUDA C → PTX for `arch` ("sm_80": compiled for compute_80, which the driver turns into code for
// that GPU and any later one). Throws Error "kernel 'K': cuda build: <NVRTC's first error>", or
// "cuda build: NVRTC cannot be opened (...)" when the toolkit's NVRTC is missing.
std::string compile_to_ptx(const codegen::GpuProgram& program, const std::vector<loopir::Func>& kernels,
                           const std::string& arch);

// NVRTC's version ("13.0"), or "" when it cannot be opened (then `why` says why).
std::string nvrtc_version(std::string* why = nullptr);

}  // namespace tessel::cuda
