#pragma once
// The loop IR's verifier: what every loop program must satisfy, whichever pass made it. The
// graph has verify_graph; this is its counterpart for loop programs, run after build_loop_nests
// and after every lowering pass that changed the program (core/lower/pipeline.h), so a pass that
// breaks a program is named where it happens instead of surfacing in a backend.
//
// Checked:
//   scoping   every Var is bound by an enclosing For or LetStmt (loop programs have no other
//             variables: a Func's parameters are buffers of static shape); no For/LetStmt binds a
//             variable that is already bound around it; a loop's bounds do not use its own variable
//   buffers   every Load/Store (address_of(...) and prefetch hints are Loads too) names a parameter
//             or a buffer allocated around it, with that buffer's element type; a buffer is not
//             allocated again inside its own allocation; an access has one (flat) index or one per
//             dimension
//   barriers  a barrier(S) stands inside the allocation of a buffer of scope S (the rule
//             insert_barriers, inject_double_buffer and lower_thread_allreduce follow: there is
//             nothing else for it to order); it is not under a condition, or inside a loop whose
//             bounds, that depend on a threadIdx (a divergent barrier that some threads of a block
//             never reach)
//   types     conditions (if, select, check, && || !) are bool; a Store's value has its buffer's
//             element type; a binary operator's operands have one type (and arithmetic keeps it);
//             indices, loop bounds and loop variables are integers; a let's variable has its value's
//             type; no Reduce is left (build_loop_nests turns reductions into loops)
//
// How scopes are tracked: one walk down the program (loopir::IRVisitor), each binding entered on
// the way into its node and removed on the way out, so sibling statements never see each other's
// variables or buffers:
//
//   func k(A: f32[256], C: f32[256])   buffers {A, C}    vars {}       threads {}
//   allocate S: f32[64] shared         buffers +S        (barrier(shared) allowed from here on)
//     for b in 0..4 blockIdx.x           vars +b
//       for t in 0..64 threadIdx.x         vars +t       threads +t    (a let of t joins threads)
//         S[t] = A[b * 64 + t]
//       <- t leaves `vars` and `threads` here
//       barrier(shared)                    ok: S is allocated around it, no condition on t
//       if (t < 32) C[t] = S[t]            "variable 't' is used outside its loop or let"
//
// Vector lanes: loop-IR expressions are scalars (a vectorized loop is a For kind, not a vector
// type), so a Store's value matches its buffer's element type exactly.
#include <string>
#include <string_view>
#include <vector>

#include "core/loopir/ir.h"

namespace tessel::loopir {

// Every distinct problem of `f`, in program order, each one readable line ("variable 'k' is used
// outside its loop or let (in the store to C, inside for i > for j)"); empty when `f` is well formed.
std::vector<std::string> verify(const Func& f);

// Throws Error with one line naming the function, `after_what` (the pass that produced `f`; may
// be empty), the first problem and how many more there are:
//   "loop program 'matmul' after tensorize: buffer 'T' is neither a parameter nor allocated
//    around its use (in the store to T, inside for i) (and 2 more problems)"
void verify_or_throw(const Func& f, std::string_view after_what);

}  // namespace tessel::loopir
