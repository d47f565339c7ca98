#pragma once
// Tessel's own ops for Winograd convolution F(m x m, 3 x 3) (made by the winograd_convs pass, never
// by a frontend). A 3x3 stride-1 conv on NCHW{b}c becomes three nodes:
//
//   X [N, C/b, H, W, b] ──winograd_input_transform──▶ V [A², T, C]       V[e] = Bᵀ d B per tile
//   V ──MatMul(U [A², C, K], a constant: U[e] = G g Gᵀ)──▶ M [A², T, K]   A² independent products
//   M ──winograd_output_transform(bias?)──▶ Y [N, K/b, OH, OW, b]        Y = Aᵀ M A per tile
//
// with A = m + 2 the transformed tile's side and T = N · ceil(OH/m) · ceil(OW/m) the tiles. The
// multiply-adds per output pixel and channel pair fall from 9 to A²/m² (2.25 for m = 4); the
// transforms are linear maps over a tile, cheap beside the products. Tiles past the output's edge
// read zeros and their extra outputs are never stored.
//
// The reference kernels compute the transforms in double from the matrices below; the pass's test
// compares the three nodes with the direct convolution.
#include <vector>

#include "core/graph/ops/common.h"

namespace tessel::ops {

// The matrices of F(m, 3) (Lavin and Gray's, interpolation points 0, ±1, ±2, ∞ for m = 4):
// bt is A x A, g is A x 3, at is m x A, row-major.
struct WinogradMatrices {
  int64_t m = 0, a = 0;  // output tile side, transformed tile side (m + 2)
  std::vector<double> bt, g, at;
  double BT(int64_t i, int64_t j) const { return bt[static_cast<size_t>(i * a + j)]; }
  double G(int64_t i, int64_t j) const { return g[static_cast<size_t>(i * 3 + j)]; }
  double AT(int64_t i, int64_t j) const { return at[static_cast<size_t>(i * a + j)]; }
};
// m is 2 or 4; throws Error otherwise.
const WinogradMatrices& winograd_matrices(int64_t m);

// U[e1·A + e2, c, k] = (G g Gᵀ)[e1, e2] for the 3x3 kernel g = W[k, c] of plain OIHW weights.
Tensor winograd_weights(const Tensor& oihw, int64_t m);

struct WinogradInputAttrs {
  int64_t tile = 4;  // m
  int64_t pad_top = 0, pad_left = 0;
  int64_t out_height = 1, out_width = 1;  // the convolution's output
  template <class V> void visit(V& v) {
    v(tile, {.name = "tile", .doc = "Output tile side m of F(m x m, 3 x 3): 2 or 4", .def = int64_t{4}, .min = 2, .max = 4});
    v(pad_top, {.name = "pad_top", .doc = "Zero rows above the input", .def = int64_t{0}, .min = 0});
    v(pad_left, {.name = "pad_left", .doc = "Zero columns left of the input", .def = int64_t{0}, .min = 0});
    v(out_height, {.name = "out_height", .doc = "Output rows of the convolution", .min = 1});
    v(out_width, {.name = "out_width", .doc = "Output columns of the convolution", .min = 1});
  }
};

struct WinogradInputTransformOp {
  using Attrs = WinogradInputAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "Winograd input transform: X [N, C/b, H, W, b] -> V [A*A, tiles, C], V = Bt d B per (m+2)^2 input tile";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct WinogradOutputAttrs {
  int64_t tile = 4;
  int64_t out_height = 1, out_width = 1;
  int64_t block = 16;  // b of the output's NCHW{b}c
  template <class V> void visit(V& v) {
    v(tile, {.name = "tile", .doc = "Output tile side m of F(m x m, 3 x 3): 2 or 4", .def = int64_t{4}, .min = 2, .max = 4});
    v(out_height, {.name = "out_height", .doc = "Output rows", .min = 1});
    v(out_width, {.name = "out_width", .doc = "Output columns", .min = 1});
    v(block, {.name = "block", .doc = "Channel block b of the NCHW{b}c output", .min = 1});
  }
};

struct WinogradOutputTransformOp {
  using Attrs = WinogradOutputAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc =
      "Winograd output transform: M [A*A, tiles, K] (+ B [K/b, b]) -> Y [N, K/b, OH, OW, b], Y = At M A per tile";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

// Tiles along one axis: ceil(extent / m) for extent >= 1, written so no extent overflows.
inline int64_t winograd_tiles(int64_t extent, int64_t m) { return (extent - 1) / m + 1; }

}  // namespace tessel::ops
