#pragma once
// Loop IR → portable C11. One function per kernel, `void name(void** args)`, buffers as restrict
// pointers. Parallel loops run serially here (this backend cross-checks results, not speed);
// vectorized and unrolled loops carry GCC pragmas. float16 is C's _Float16; bfloat16 buffers are refused.
#include <string>
#include <vector>

#include "core/loopir/ir.h"

namespace tessel::c_source {

std::string emit_c(const std::vector<loopir::Func>& kernels);

}  // namespace tessel::c_source
