#pragma once
// Readable, stable text of loop programs. The output is deterministic (it depends only on the
// program's structure and names), which is what golden tests and per-step diffs rely on.
//
//   func matmul(A: f32[64, 64], B: f32[64, 64], C: f32[64, 64]) {
//     for i.outer in 0..8 parallel {
//       for j in 0..64 {
//         C[i, j] = 0f
//       ...
//   allocate A_shared: f32[8, 64] shared     (its scope lasts until the matching `free`)
#include <string>

#include "core/loopir/ir.h"

namespace tessel::loopir {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s, int indent = 0);
std::string to_string(const Func& f);
std::string buffer_type_string(const BufferNode& b);  // "f32[8, 64]" (+ " strides [..]" when not contiguous)

}  // namespace tessel::loopir
