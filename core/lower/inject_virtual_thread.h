#pragma once
// Virtual-thread injection: a `vthread` loop describes independent data-parallel work; lowering
// interleaves its iterations into one instruction stream, pushing the loop inward through loops
// and sequences that do not depend on it, then replicating the innermost statements once per
// virtual thread (so independent memory and compute operations sit side by side).
//
//   for vx in 0..2 vthread {            for k in 0..16 {
//     for k in 0..16 {          ->        C[0*8 + ...] = ...   // virtual thread 0
//       C[vx*8 + ...] = ...               C[1*8 + ...] = ...   // virtual thread 1
#include "core/loopir/ir.h"

namespace tessel::lower {

loopir::Func inject_virtual_threads(const loopir::Func& f);

}  // namespace tessel::lower
