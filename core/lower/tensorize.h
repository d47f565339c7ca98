#pragma once
// Tensorize replacement: a loop that the tensorize step marked (pragma tensorize:NAME) and the
// nest under it become calls of the declared tensor intrinsic NAME (core/te/tensor_intrinsic.h).
// The nest is matched again here, on the program with its final buffers (cache stages, double
// buffers), which give each operand's first element and row stride.
//
//   for i.inner in 0..16 pragma(tensorize:gemm_16x16x16_f32=1) {
//     for j.inner in 0..16 {                        tessel_intrin_gemm_16x16x16_f32(
//       for k.inner in 0..16 {                  ->    address_of(A[i.outer*16, k.outer*16]), 64,
//         C[..] = C[..] + A[..] * B[..]               address_of(B[k.outer*16, j.outer*16]), 64,
//                                                     address_of(C[i.outer*16, j.outer*16]), 64)
//
// A nest holding only the reduction's initialization (C[..] = 0) becomes the intrinsic's reset
// call; a nest holding both becomes reset then update. Anything else inside (a guard, a stage
// computed there) is an error naming the loop.
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func tensorize_loops(const loopir::Func& f);

}  // namespace tessel::lower
