#pragma once
// Storage rewrite: a top-level intermediate whose last use comes before another one is first
// written hands its storage over (same dtype and scope), so peak memory is the most that is
// live at once rather than the sum of all buffers.
//
//   allocate T1: f32[64]          allocate T1: f32[64]
//   allocate T3: f32[64]          T1 = f(X);  T2 = g(T1);  T1 = h(T2);  Y = k(T1)
//   T1 = f(X); T2 = g(T1)    ->   (T3 lives in T1's storage: T1 is dead once T2 is computed)
//   T3 = h(T2); Y = k(T3)
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func rewrite_storage(const loopir::Func& f);

}  // namespace tessel::lower
