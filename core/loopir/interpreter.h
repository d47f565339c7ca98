#pragma once
// Runs a loop program on host tensors, without any code generation: the oracle for tests,
// the way to verify a hand schedule, and a teaching tool.
//
// Every loop runs serially in program order, whatever its kind (parallel, vectorized, bound to a
// thread): a correct schedule must give the same result in that order. Works on programs before
// and after storage flattening (N-d indices use the buffer's strides). Out-of-bounds accesses,
// division by zero and unknown intrinsics throw tessel::Error naming the buffer or call.
#include <functional>
#include <string>
#include <vector>

#include "core/loopir/ir.h"
#include "core/support/tensor.h"

namespace tessel::loopir {

// `args` bind to `f.params` in order; outputs are written in place (tensors share storage). A
// failing Check throws Error with its message, or, given a record, is recorded there as compiled
// kernels record it (the program then goes on with 0 for the checked value).
void interpret(const Func& f, const std::vector<Tensor>& args, CheckRecord* record = nullptr);

// Calls the interpreter does not know itself (tensor intrinsics, declared in core/te) run through
// an evaluator registered under the call's name: it returns the statement the call stands for (a
// loop nest over the buffers the call addresses) and the interpreter runs that in its place. This
// is how a layer above the loop IR teaches the interpreter without the interpreter depending on it.
class CallSite {
 public:
  virtual ~CallSite() = default;
  virtual int64_t integer(const Expr& argument) = 0;        // an argument's value where the call runs
  virtual int64_t element_offset(const Load& element) = 0;  // flat offset of BUFFER[indices] in BUFFER
};
using CallEvaluator = std::function<Stmt(const Call& call, CallSite& site)>;
// Throws Error when `call_name` already has an evaluator. Thread-safe.
void register_call_evaluator(const std::string& call_name, CallEvaluator evaluator);

// The result of evaluating a closed expression (no variables or loads): for tests of the simplifier.
double evaluate_constant(const Expr& e);

}  // namespace tessel::loopir
