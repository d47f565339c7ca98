#pragma once
// Default CPU schedules, derived from the shape of the computation rather than from op names:
//
//   injective intermediates (pad, bias_add)   compute_inline
//   a reduction output (matmul, conv)          tile the last two data-parallel axes, split the
//                                              first reduction axis, reorder so the vector axis is
//                                              innermost, vectorize it, parallel the outermost loop
//   an injective output reading a reduction    the reduction is computed at the output's
//   with the same shape (conv + bias + relu)   outermost loop (epilogue fused through compute_at)
//   other outputs                              split the last axis for vectors, parallel the first
//   other reductions (softmax's row max)       parallel the first axis
#include "core/schedule/schedule.h"

namespace tessel::schedule {

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t vector_lanes = 8);

// Default schedules for GPU-style targets:
//   a reduction output (matmul, conv)   inputs it reads are cached in shared memory per reduction
//                                       tile (cache_read + compute_at), the output is tiled
//                                       into blocks (blockIdx.x/y, leading axes fused into
//                                       blockIdx.z) of threads (threadIdx.x/y)
//   other outputs                       all axes fused, split into blocks of `threads` threads
//   other reductions                    one block per element of the first axis
Schedule default_gpu_schedule(const te::ComputeDag& dag, int64_t tile = 8, int64_t threads = 64);

}  // namespace tessel::schedule
