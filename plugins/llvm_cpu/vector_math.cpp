#include "plugins/llvm_cpu/vector_math.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

namespace tessel::llvm_cpu {

// exp(x), the classic range reduction (Cody and Waite) and a short polynomial:
//
//   x = n * ln2 + r,    n = round(x / ln2),  |r| <= ln2 / 2
//   e^x = 2^n * e^r
//
//                         n = rint(x * log2(e))          (an integer, held as a float)
//                         r = x - n * C1 - n * C2         C1 + C2 = ln2; C1 has few mantissa bits,
//                                                         so n * C1 is exact and r keeps its
//                                                         low bits (one product would round them away)
//                         p = 1 + r + r^2 * P(r)          P of degree 4, fitted to (e^r - 1 - r)/r^2
//                                                         on [-ln2/2, ln2/2] (least squares on
//                                                         Chebyshev nodes, weighted for relative
//                                                         error): 4e-9 before float rounding
//   bits(result) = bits(p) + (n << 23)                    2^n by adding n to p's exponent field:
//                                                         no multiply, no libm
//
// p lies in [0.7, 1.42], so its exponent field is 126 or 127; for x in [ln(FLT_MIN), ln(FLT_MAX)]
// n is in [-126, 128], which keeps the sum inside the normal exponents. Outside that range, and
// for NaN, the arithmetic computes garbage (even poison: fptosi of a huge n) that two selects
// replace: 0 below the range, x + inf above it (+inf, or NaN for a NaN). A select passes on only
// the operand it chooses, so the garbage never escapes, and no clamp is needed up front.
//
// With AVX-512 on a <16 x float>, vscalefps computes p · 2^n in one instruction and is right on its
// own at both ends: +inf on overflow, subnormals and then 0 on underflow, NaN for NaN. Only an
// infinite x needs care (r = inf - inf is NaN), so x is clamped to [-104, 89] first, where the
// results are already 0 and +inf; the clamp is a compare and select that keeps a NaN (vmaxps /
// vminps with the operands in that order). Four integer/select operations and two selects become
// two clamps and one scalef, out of about twenty: softmax's kernel 0.071 -> 0.066 ms.

bool is_single_float(llvm::Type* t) { return t->getScalarType()->isFloatTy(); }

namespace {

// The input range whose results are normal floats: [ln(FLT_MIN), ln(FLT_MAX)].
constexpr float kExpLow = -87.336544f;
constexpr float kExpHigh = 88.7228394f;

llvm::Value* constant(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

// a * b + c, fused where the target has FMA.
llvm::Value* mul_add(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {x, y, z});
}

// Horner's rule: c[0] * x^(k-1) + ... + c[k-1].
llvm::Value* polynomial(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> c) {
  llvm::Type* t = x->getType();
  auto it = c.begin();
  llvm::Value* acc = constant(t, *it++);
  for (; it != c.end(); ++it) acc = mul_add(b, acc, x, constant(t, *it));
  return acc;
}

}  // namespace

llvm::Value* emit_exp(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target) {
  llvm::Type* t = x->getType();
  llvm::Type* int_t = t->getWithNewType(b.getInt32Ty());
  llvm::Value *low = constant(t, kExpLow), *high = constant(t, kExpHigh);
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(t);
  const bool scalef = target.avx512f && vector && vector->getNumElements() == 16;
  if (scalef) {
    x = b.CreateSelect(b.CreateFCmpOLT(x, constant(t, -104.0)), constant(t, -104.0), x);
    x = b.CreateSelect(b.CreateFCmpOGT(x, constant(t, 89.0)), constant(t, 89.0), x);
  }

  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(x, constant(t, 1.44269504088896341)));
  llvm::Value* r = mul_add(b, n, constant(t, -0.693359375), x);
  r = mul_add(b, n, constant(t, 2.12194440e-4), r);

  llvm::Value* p =
      polynomial(b, r, {1.3751407895e-3, 8.3689163414e-3, 4.1669533109e-2, 1.6666518460e-1, 4.9999988595e-1});
  p = mul_add(b, p, b.CreateFMul(r, r), b.CreateFAdd(r, constant(t, 1.0)));
  if (scalef)  // all 16 lanes (mask), the current rounding mode (4)
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                             {p, n, p, b.getInt16(0xFFFF), b.getInt32(4)});

  llvm::Value* shift = b.CreateShl(b.CreateFPToSI(n, int_t), llvm::ConstantInt::get(int_t, 23));
  llvm::Value* result = b.CreateBitCast(b.CreateAdd(b.CreateBitCast(p, int_t), shift), t);

  result = b.CreateSelect(b.CreateFCmpOLT(x, low), constant(t, 0.0), result);
  // Above the range +inf, and NaN stays NaN: x + inf is both, with one compare (unordered or
  // greater).
  return b.CreateSelect(b.CreateFCmpUGT(x, high), b.CreateFAdd(x, llvm::ConstantFP::getInfinity(t)), result);
}

llvm::Value* emit_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target) {
  llvm::Type* t = x->getType();
  llvm::Value* one = constant(t, 1.0);
  return b.CreateFDiv(one, b.CreateFAdd(one, emit_exp(b, b.CreateFNeg(x), target)));
}

// tanh(x) = sign(x) * (1 - 2 / (e^(2|x|) + 1)). Near 0 the subtraction cancels (tanh(1e-3) would
// keep only a few good bits), so below |x| = 0.625 an odd polynomial is used instead:
// x + x^3 * Q(x^2), Q of degree 4 fitted here by weighted least squares on the relative error
// (8e-8 in float). Both branches are computed and one selected per lane.
llvm::Value* emit_tanh(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target) {
  llvm::Type* t = x->getType();
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* e = emit_exp(b, b.CreateFAdd(ax, ax), target);
  llvm::Value* large =
      b.CreateFSub(constant(t, 1.0), b.CreateFDiv(constant(t, 2.0), b.CreateFAdd(e, constant(t, 1.0))));
  large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);

  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* q =
      polynomial(b, z, {-5.79810015678e-3, 2.07202809110e-2, -5.37638004577e-2, 1.33317185769e-1, -3.33332915109e-1});
  llvm::Value* small = mul_add(b, b.CreateFMul(q, z), x, x);
  return b.CreateSelect(b.CreateFCmpOLT(ax, constant(t, 0.625)), small, large);
}

// erf(x), two pieces joined at |x| = 1, both fitted here by least squares (numpy, float64):
//
//   |x| <= 1:        erf(x) = x * P(x^2)                    P of degree 6 (relative error 4e-9)
//   1 < |x| < 3.93:  erf(x) = 1 - e^(-x^2) * R(|x|)          R of degree 7 fitted to erfc(x)e^(x^2),
//                                                            weighted by e^(-x^2) (absolute error)
//   |x| >= 3.93:     erf(x) = +-1                            (erfc below half a float ulp of 1)
//
// The sign is copied back; NaN stays NaN. In float the worst absolute error is about 1.5e-7.
llvm::Value* emit_erf(llvm::IRBuilder<>& b, llvm::Value* x, const MathTarget& target) {
  llvm::Type* t = x->getType();
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* small = b.CreateFMul(
      ax, polynomial(b, z,
                     {7.971016761522553e-05, -8.043364019120758e-04, 5.191832086494652e-03, -2.685550855875149e-02,
                      1.1283622028445177e-01, -3.761262873323439e-01, 1.1283791660950455}));
  llvm::Value* r =
      polynomial(b, ax,
                 {-3.5716964224967955e-04, 5.605613403598452e-03, -3.888988577989057e-02, 1.5808966333607471e-01,
                  -4.215090169991643e-01, 7.825428654073716e-01, -1.0428043410646435, 9.849057039855013e-01});
  llvm::Value* large = b.CreateFSub(constant(t, 1.0), b.CreateFMul(emit_exp(b, b.CreateFNeg(z), target), r));
  llvm::Value* result = b.CreateSelect(b.CreateFCmpOLE(ax, constant(t, 1.0)), small, large);
  result = b.CreateSelect(b.CreateFCmpOGE(ax, constant(t, 3.93)), constant(t, 1.0), result);
  // copysign keeps the magnitude's NaN-ness only if the magnitude is NaN: select it back for NaN.
  result = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, result, x);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

}  // namespace tessel::llvm_cpu
