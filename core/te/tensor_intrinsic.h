#pragma once
// Tensor intrinsics: a hardware (or hand-written) routine declared in the tensor-expression
// language itself: its computation as a small TE over fixed-size operands, and the call it
// lowers to. `tensorize(C.i.inner, gemm_16x16x16_f32)` replaces the loop nest under C.i.inner by
// that call when the nest computes exactly what the declaration computes.
//
//   declared                                         the call it lowers to
//   A = placeholder(16x16), B = placeholder(16x16)
//   C[i, j] = sum(A[i, k] * B[k, j], k in 0..16)  ->  tessel_intrin_gemm_16x16x16_f32(
//                                                        &A[a0], lda, &B[b0], ldb, &C[c0], ldc)
//   C[i, j] = 0 (the reducer's identity)          ->  tessel_intrin_gemm_16x16x16_f32_reset(&C[c0], ldc)
//
// Call arguments, in one rule for every intrinsic: for each operand, inputs in declaration order
// then the output, `address_of(T[first element])` followed by the stride (in elements) of each
// of its dimensions but the innermost, which must be contiguous. The update call accumulates
// into the output (C += ...); the reset call fills the output region with the reducer's identity.
//
// Matching (used by the tensorize step and the tensorize lowering pass):
//
//   program:  C[i0 + ii, j0 + jj] = C[i0 + ii, j0 + jj] + A[i0 + ii, k0 + kk] * B[k0 + kk, j0 + jj]
//   pattern:  C[i, j]             = C[i, j]             + A[i, k]           * B[k, j]
//             same operators and shape; each buffer binds to one operand; every index that walks
//             a tensorized loop is `base + that loop` and the walked loops bind to the intrinsic's
//             axes (ii->i, jj->j, kk->k) consistently; the other indices are loop-invariant.
#include <map>
#include <string>
#include <vector>

#include "core/loopir/ir.h"
#include "core/te/tensor.h"

namespace tessel::te {

struct TensorIntrinsic {
  std::string name;         // "gemm_16x16x16_f32" (what tensorize names)
  ComputeDag computation;   // one output; its inputs are placeholders
  std::string update_call;  // output += computation
  std::string reset_call;   // output = the reducer's identity
  const OperationNode& output() const { return *computation.outputs[0]; }
  std::vector<Tensor> operands() const;  // inputs in order, then the output
};

// The declared intrinsics: gemm_16x16x16_f32, gemm_8x8x8_f32, and gemm_16x16x16_i8, gemm_8x8x8_i8
// (int8 operands, int32 accumulator: an accelerator's GEMM core), and dot_16x4_u8i8_i32, the x86
// VNNI dot step (vpdpbusd):
//
//   A: 4 × u8 ─broadcast─► a0 a1 a2 a3 │ a0 a1 a2 a3 │ ... (16 lanes)
//   B: 16 × 4 × s8        b00 ..  b03  │ b10 ..  b13 │ ...          C[j] += Σ_k A[k] · B[j, k]
//   C: 16 × s32           C[0]         │ C[1]        │ ...          (exact: no saturation)
//
// The llvm backend emits it as llvm.x86.avx512.vpdpbusd.512 (or two 256-bit avx-vnni steps) where
// the target has the feature and B's rows are packed (stride 4), a call to the scalar
// tessel_intrin_dot_16x4_u8i8_i32 elsewhere; c and interp run the scalar form.
const std::vector<TensorIntrinsic>& tensor_intrinsics();
const TensorIntrinsic* find_tensor_intrinsic(const std::string& name);
// Finds the intrinsic whose update or reset call is `call_name`; sets *reset accordingly.
const TensorIntrinsic* find_tensor_intrinsic_call(const std::string& call_name, bool* reset);
std::string tensor_intrinsic_names();  // "gemm_16x16x16_f32, gemm_8x8x8_f32, ..."

// One operand's access in the program: the buffer and its index expressions; `walk[d]` is the
// intrinsic axis the index of dimension d walks (-1 when it is loop-invariant).
struct OperandAccess {
  loopir::Buffer buffer;
  std::vector<loopir::Expr> indices;
  std::vector<int> walk;
};

struct IntrinsicMatch {
  std::map<std::string, OperandAccess> operands;  // by the intrinsic's tensor name
  std::vector<const loopir::Var*> axis_vars;      // program variable per intrinsic axis (spatial, then reduce)
};

// The intrinsic's axes, spatial then reduce.
std::vector<loopir::IterVar> intrinsic_axes(const TensorIntrinsic& in);

struct TensorizedLoop {
  loopir::VarRef var;
  int64_t extent = 0;  // -1: not known yet (a stage computed at a loop; checked when lowering)
  std::string name;    // how errors name the loop (the variable's name when empty)
};

// Matches one update `out[out_idx] = value` of a program against the intrinsic. `loops` are the
// program variables the intrinsic may replace, with their extents. Returns an empty string on
// success, otherwise why it does not match (naming the operand, the index, the extent).
std::string match_tensor_intrinsic(const TensorIntrinsic& in, const loopir::Buffer& out,
                                   const std::vector<loopir::Expr>& out_idx, const loopir::Expr& value,
                                   const std::vector<TensorizedLoop>& loops, IntrinsicMatch* match);

// Matches the initialization `out[out_idx] = identity` (the caller checked the value) over the
// intrinsic's spatial axes.
std::string match_tensor_intrinsic_reset(const TensorIntrinsic& in, const loopir::Buffer& out,
                                         const std::vector<loopir::Expr>& out_idx,
                                         const std::vector<TensorizedLoop>& loops, IntrinsicMatch* match);

// What a call of the intrinsic does, as a loop nest over flat (1-d) accesses of `buffers`: the
// declared computation with operand t read at `base[t] + sum(index_d * strides[t][d])`. The
// interpreter runs tensor intrinsic calls through it (tensor_intrinsics() registers the evaluator
// with core/loopir/interpreter.h), so they mean what the declaration says.
loopir::Stmt tensor_intrinsic_semantics(const TensorIntrinsic& in, bool reset,
                                        const std::vector<loopir::Buffer>& buffers, const std::vector<int64_t>& base,
                                        const std::vector<std::vector<int64_t>>& strides);

}  // namespace tessel::te
