#pragma once
// Loop partitioning: peels the iterations of a loop in which a guard is provably true, so the
// main body of a split with a tail runs without bounds checks.
//
//   for i.outer in 0..13 {                      for i.outer in 0..12 {
//     for i.inner in 0..8 {                        for i.inner in 0..8 { C[i.outer*8 + i.inner] = ... }
//       if (i.outer*8 + i.inner < 100) {   ->    }
//         C[...] = ...                           for i.outer in 12..13 {
//                                                  for i.inner in 0..8 { if (...) { C[...] = ... } }
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func partition_loops(const loopir::Func& f);

}  // namespace tessel::lower
