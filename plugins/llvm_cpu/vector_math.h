#pragma once
// Single-precision exp, sigmoid, tanh and erf as straight-line LLVM IR (polynomials, integer exponent
// arithmetic, selects): the same code serves a scalar float and a <N x float> vector, so a
// vectorized loop evaluates all lanes at once instead of calling libm's expf lane by lane.
// Accuracy: exp within 2 ulp over its whole range, sigmoid and tanh within a few ulp; erf below.
// tests/plugins/test_backends.cpp (vector_math_matches_the_c_library) sweeps all four against the
// C library.
#include <llvm/IR/IRBuilder.h>

namespace tessel::llvm_cpu {

// Whether `t` is float or a vector of float: the type these functions take.
bool is_single_float(llvm::Type* t);

// What the target CPU offers these functions.
struct MathTarget {
  bool avx512f = false;  // vscalefps for exp's 2^n on <16 x float>
};

// e^x; above ln(FLT_MAX) (about 88.72) +inf, NaN stays NaN. Below ln(FLT_MIN) (about -87.34) the
// result is 0, except on <16 x float> with AVX-512, where it is the subnormal vscalefps rounds to
// (still 0 below about -103.3).
llvm::Value* emit_exp(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target = {});

// 1 / (1 + e^-x).
llvm::Value* emit_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target = {});

// tanh(x): an odd polynomial near 0 (where 1 - 2/(e^2x + 1) would cancel), that formula elsewhere.
llvm::Value* emit_tanh(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target = {});

// erf(x) within about 1.5e-7 absolute: a polynomial in x^2 up to |x| = 1, 1 - e^(-x^2) R(|x|) beyond.
llvm::Value* emit_erf(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target = {});

}  // namespace tessel::llvm_cpu
