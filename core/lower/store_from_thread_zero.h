#pragma once
// Stores the whole block would make, made by one thread.
//
// On a GPU every thread of a block runs the code outside the loops bound to its threadIdx: a
// store there would be made by all of them (to one address). A cross-thread reduction ends with
// one (its result, read from lane 0), and so does an output computed from block-wide values (a
// mean: the sum's result over the count). Such a store gets a loop of each threadIdx the kernel
// launches but the store is outside of, and runs on thread 0 only:
//
//   for i in 0..R bind(blockIdx.x) {             for i in 0..R bind(blockIdx.x) {
//     ...threads reduce into sum_red...            ...
//     sum[0] = sum_red[0]         (local)   ->     sum[0] = sum_red[0]
//     Y[i] = sum[0] / 64                           for tx in 0..64 bind(threadIdx.x) {
//   }                                                if (tx == 0) { Y[i] = sum[0] / 64 }
//                                                  }
//
// Run in order (the interpreter, a CPU) the loop makes the store once, as before. A store is
// moved to thread 0 only when that is the same as every thread making it: its value and indices
// read no private (local) buffer that differs between threads (written inside a threadIdx loop,
// or from one that is), and no other thread touches its buffer in the kernel (every store to the
// buffer is such a store, and every load of it is in one: a result other threads read would need
// a barrier for memory other than shared). A private buffer itself (local) is every thread's
// own copy and is left alone. Anything else stays as it was (a kernel with such a store runs as
// one thread, see core/codegen/gpu_kernel_c.h).
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func store_from_thread_zero(const loopir::Func& f);

}  // namespace tessel::lower
