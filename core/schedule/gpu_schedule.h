#pragma once
// Default schedules for GPU-style targets (opencl, cuda), from the shape of the computation:
//
//   an output over rows reading          one block per row; each reduction's threads reduce
//   reductions of its last axis          together (a tree in shared memory, the result in every
//   (softmax, layer norm)                thread's registers); the output's last axis split over
//                                        the block's threads
//   an output whose elements are         one block per output element; the block's threads reduce
//   reductions, or functions of          together (reduction loops fused, split by the thread
//   reductions of its shape (ReduceSum,  count, the inner part bound to threadIdx.x), thread 0
//   ReduceMean, GlobalAveragePool,       stores the element
//   ArgMax), each input element read
//   once, at least 32 per element
//   another reduction output             inputs it reads are cached in shared memory per reduction
//   (matmul, conv)                       tile (cache_read + compute_at), the output tiled into
//                                        blocks (blockIdx.x/y, leading axes fused into blockIdx.z)
//                                        of threads (threadIdx.x/y)
//   other outputs                        all axes fused, split into blocks of `threads` threads
//   other reductions                     one block per element of the first axis
//
// A block-wide reduction, one block per row of X[R, K] with T threads:
//
//   block i:   thread t:  partial = X[i, t] + X[i, t + T] + X[i, t + 2T] + ...   (k < K)
//              red[t] = partial;  barrier
//              the tree: red[t] += red[t + T/2], barrier, ... red[0] += red[1], barrier
//              thread 0:  Y[i] = red[0]
//
// (core/lower/lower_thread_allreduce.h lowers it; core/lower/store_from_thread_zero.h makes the
// final store thread 0's.)
#include <cstdint>

#include "core/schedule/schedule.h"

namespace tessel::schedule {

Schedule default_gpu_schedule(const te::ComputeDag& dag, int64_t tile = 8, int64_t threads = 64);

}  // namespace tessel::schedule
