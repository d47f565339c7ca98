#pragma once
// An integer matrix product in the form the x86 VNNI dot step (dot_16x4_u8i8_i32,
// core/te/tensor_intrinsic.h) computes: u8 rows times s8 weights packed 16 columns × 4 depths.
//
//   A [M, K] u8|s8 ──(+128 if s8, zero-padded to K4)──► A' [M, K4] u8
//   B [K, N] s8|u8 ──(-128 if u8, zero-padded, packed)─► B' [N16/16][K4/4][16][4] s8
//                                                         ^ one 64-byte vector per (column block, 4 depths)
//   dot[i, jo, ji] = Σ_{ko, ki} A'[i, 4·ko + ki] · B'[jo, ko, ji, ki]          (the tensorized stage)
//   out[i, j] = dot[i, j/16, j%16] + (sb - zb[j])·ΣA[i,:] - (sa + za[i])·ΣB[:,j] + K·(sa·sb + za[i]·zb[j])
//
// with sa = 128 for s8 rows (else 0), sb = 128 for u8 weights (else 0) and za, zb the zero points:
// out = Σ (A - za)(B - zb) exactly, in wrapping int32 as the reference kernels compute it. The
// shifts exist because vpdpbusd multiplies unsigned by signed bytes only; the row and column sums
// are computed only when their factor is not 0.
//
// Why a packed layout rather than an LLVM pattern: vpdpbusd sums 4 adjacent bytes of each lane,
// so the 4 depths of a column must be adjacent in memory; no layout of B as given ([K, N], N
// contiguous) has that. B is usually a constant (weights), so its packing stage costs K·N once
// per call, small beside M·N·K. K4 and N16 round K and N up to 4 and 16: ragged edges are zeros,
// which add nothing, so every tile is whole and the intrinsic applies everywhere.
//
// The stages are named NAME_vnni_a, NAME_vnni_b, NAME_vnni_dot, NAME_vnni_rows, NAME_vnni_columns
// and NAME (the output); schedule::int8_vnni_schedule recognizes the form by the _vnni_dot stage.
#include <functional>
#include <string>

#include "core/te/tensor.h"

namespace tessel::te {

struct Int8ProductOperands {
  Tensor a;  // [M, K] uint8 or int8
  Tensor b;  // [K, N] int8 or uint8
  // Zero points as int32 expressions of the row (A's) and the column (B's); null: none.
  std::function<loopir::Expr(const loopir::Expr& row)> a_zero;
  std::function<loopir::Expr(const loopir::Expr& column)> b_zero;
};

// Why `p` cannot or should not take the VNNI form (ranks, types, fewer than 8 rows); empty when
// it can.
std::string why_not_int8_dot_product(const Int8ProductOperands& p);

// out[M, N] int32 = Σ_k (A[i, k] - za[i]) · (B[k, j] - zb[j]), built as above.
Tensor int8_dot_product(const Int8ProductOperands& p, const std::string& name);

// A 2-D NCHW convolution (one group) in the same form, the 4 depths taken from input channels
// and the 16 lanes from output channels:
//
//   X [N, C, H, W]  ──(+sa, padded with the zero point)──► X' [N, C4/4, Hp, Wp, 4] u8
//   W [M, C, R, S]  ──(-sb, packed)──────────────────────► W' [M16/16, C4/4, R, S, 16, 4] s8
//   dot[n, mo, y, x, mi] = Σ_{co, r, s, ci} X'[n, co, y·sy + r·dy, x·sx + s·dx, ci] · W'[mo, co, r, s, mi, ci]
//   out[n, m, y, x] = dot[n, m/16, y, x, m%16] + (sb - zw[m])·ΣX'(window) - (sa + zx)·ΣW'[m]
//                     - C·R·S·(sa + zx)·(sb - zw[m])
//
// Padding reads the input's zero point (X' = zx + sa there), which centers to 0 as the reference
// kernel pads. Channels beyond C are zeros in W' and add nothing.
struct Int8ConvOperands {
  Tensor x;                                                         // [N, C, H, W] uint8 or int8
  Tensor w;                                                         // [M, C, R, S] int8 or uint8
  std::function<loopir::Expr()> x_zero;                             // null: none
  std::function<loopir::Expr(const loopir::Expr& channel)> w_zero;  // null: none
  int64_t stride[2] = {1, 1}, dilation[2] = {1, 1}, pad_begin[2] = {0, 0};
  int64_t out_h = 0, out_w = 0;
};

std::string why_not_int8_dot_conv(const Int8ConvOperands& p);
// out[N, M, out_h, out_w] int32 = Σ (X - zx)·(W - zw[m]) over each window.
Tensor int8_dot_conv(const Int8ConvOperands& p, const std::string& name);

inline constexpr const char* kVnniDotSuffix = "_vnni_dot";

}  // namespace tessel::te
