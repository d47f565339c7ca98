#pragma once
// Storage flattening: N-d buffer accesses become 1-d offsets with the buffer's strides
// (contiguous, or padded by storage_align).
//
//   C[i, j] = A[i, k] ...      ->      C[i*64 + j] = A[i*64 + k] ...
//   allocate P: f32[8, 9] local  ->   allocate P: f32[72] local
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func flatten_storage(const loopir::Func& f);

}  // namespace tessel::lower
