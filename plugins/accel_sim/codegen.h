#pragma once
// Loop IR → the accelerator's instruction stream. The kernel's loops have constant bounds, so the
// generator walks the program with every loop variable bound to a number and emits the
// instructions one iteration at a time (a fully unrolled stream, as the simulator runs it):
//
//   allocate X: i8[...] accel.inp | accel.wgt       a region of that scratchpad (stack order)
//   allocate X: i32[...] accel.acc
//   for .. for .. X[..] = A[..]     (X in inp/wgt/acc)  one LOAD per 2-D tile: the two innermost
//                                                       loops are rows and columns, contiguous
//   for .. for .. C[..] = X[..]     (X in acc)          STORE (int32, or int8 through a cast)
//   for .. for .. X[..] = X[..] op imm / X[..] op Y[..]  ALU on acc: + max min, / 2^s (shift)
//   tessel_intrin_gemm_NxNxN_i8(..)    / _reset(..)     GEMM / GEMM reset (N: the core's size)
//   dep_push(from, to) / dep_pop(from, to)              token flags: a push on the last
//                                                       instruction of `from`, a pop on the
//                                                       next instruction of `to` (NOP if none)
//   if / let                                            decided while walking (constants)
//   parallel, vectorized, unrolled loops                walked like serial ones (one stream)
//
// A program without tokens (no virtual thread: the lowering inserts tokens only for vthread loops)
// gets them here: wherever two units touch the same bytes, the later instruction waits for the
// earlier one, which keeps the program's order and lets independent work overlap.
//
// Anything else is refused with Error "kernel 'K': accel-sim codegen: <the statement>: <why>".
#include "core/loopir/ir.h"
#include "plugins/accel_sim/isa.h"

namespace tessel::accel {

// Program buffers are the kernel's parameters, in order.
Program generate_program(const loopir::Func& f, const MachineConfig& m);

// The scratchpad a loop-IR scope names ("accel.inp" → kInput); false for other scopes.
bool scratchpad_of_scope(const std::string& scope, Scratchpad* out);

}  // namespace tessel::accel
