#pragma once
// Runs a loop program on host tensors, without any code generation: the oracle for tests,
// the way to verify a hand schedule, and a teaching tool.
//
// Every loop runs serially in program order, whatever its kind (parallel, vectorized, bound to a
// thread): a correct schedule must give the same result in that order. Works on programs before
// and after storage flattening (N-d indices use the buffer's strides). Out-of-bounds accesses,
// division by zero and unknown intrinsics throw tessel::Error naming the buffer or call.
#include <vector>

#include "core/loopir/ir.h"
#include "core/support/tensor.h"

namespace tessel::loopir {

// `args` bind to `f.params` in order; outputs are written in place (tensors share storage).
void interpret(const Func& f, const std::vector<Tensor>& args);

// The result of evaluating a closed expression (no variables or loads): for tests of the simplifier.
double evaluate_constant(const Expr& e);

}  // namespace tessel::loopir
