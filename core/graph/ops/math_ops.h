#pragma once
// Tensor algebra and signal windows: Einsum, Det, HannWindow, HammingWindow, BlackmanWindow.
#include <limits>
#include <string>

#include "core/graph/ops/common.h"

namespace tessel::ops {

// An Einsum equation resolved against its inputs' shapes. Every letter, and every axis an
// ellipsis stands for, is a label with one extent; an input axis of extent 1 under a label of a
// larger extent broadcasts.
//
//   "bij,bjk->bik" on [2,3,4], [2,4,5]:  labels b i j k (extents 2 3 4 5), output b i k, summed j
struct EinsumPlan {
  std::vector<int64_t> extents;                // per label
  std::vector<std::vector<int>> input_labels;  // per input, per axis
  std::vector<int> output_labels;              // per output axis
  std::vector<int> summed_labels;              // labels not in the output
};
// Throws Error naming the problem ("operand 1 has rank 2, the equation gives it 3 labels").
EinsumPlan plan_einsum(const std::string& equation, const std::vector<Shape>& inputs);

struct EinsumAttrs {
  std::string equation;
  template <class V>
  void visit(V& v) {
    v(equation, {.name = "equation", .doc = "Labels of each operand's axes, '->' and the output's (numpy einsum)"});
  }
};
struct EinsumOp {
  using Attrs = EinsumAttrs;
  static constexpr PatternKind pattern = PatternKind::kOutEWiseFusable;
  static constexpr int min_inputs = 1, max_inputs = std::numeric_limits<int>::max(), min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Sums of products over labelled axes (numpy einsum)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

// Det(x: [..., M, M]) -> [...]: by LU decomposition with partial pivoting, in double.
struct DetOp {
  using Attrs = NoAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr const char* doc = "Determinant of each square matrix in the last two axes";
  static void infer(const Attrs&, InferContext& ctx);
  static void reference(const Attrs&, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t);
};

struct WindowAttrs {
  int64_t output_datatype = 1;
  int64_t periodic = 1;
  template <class V>
  void visit(V& v) {
    v(output_datatype, {.name = "output_datatype", .doc = "ONNX element type code of the output", .def = int64_t{1}});
    v(periodic, {.name = "periodic",
                 .doc = "1: periodic (for spectral analysis); 0: symmetric",
                 .def = int64_t{1},
                 .min = 0,
                 .max = 1});
  }
};
// w[n] = a0 - a1 cos(2 pi n / D) + a2 cos(4 pi n / D), D = size (periodic) or size - 1.
struct WindowCoefficients {
  double a0, a1, a2;
};
template <class Kind>
struct WindowOp {
  using Attrs = WindowAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 1, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {0};
  static constexpr const char* doc = Kind::doc;
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes& t) { return flops_per_output_element(t, 6); }
};
struct HannKind {
  static constexpr const char* name = "HannWindow";
  static constexpr const char* doc = "Hann window of `size` (input 0) points";
  static constexpr WindowCoefficients coefficients{0.5, 0.5, 0.0};
};
struct HammingKind {
  static constexpr const char* name = "HammingWindow";
  static constexpr const char* doc = "Hamming window of `size` (input 0) points (alpha 25/46)";
  static constexpr WindowCoefficients coefficients{25.0 / 46.0, 21.0 / 46.0, 0.0};
};
struct BlackmanKind {
  static constexpr const char* name = "BlackmanWindow";
  static constexpr const char* doc = "Blackman window of `size` (input 0) points";
  static constexpr WindowCoefficients coefficients{0.42, 0.5, 0.08};
};
using HannWindowOp = WindowOp<HannKind>;
using HammingWindowOp = WindowOp<HammingKind>;
using BlackmanWindowOp = WindowOp<BlackmanKind>;

struct DFTAttrs {
  int64_t axis = 1;
  int64_t inverse = 0;
  int64_t onesided = 0;
  template <class V>
  void visit(V& v) {
    v(axis, {.name = "axis",
             .doc = "Axis of the signal (not the last, which holds real and imaginary parts)",
             .def = int64_t{1}});
    v(inverse,
      {.name = "inverse", .doc = "1: the inverse transform (scaled by 1/n)", .def = int64_t{0}, .min = 0, .max = 1});
    v(onesided, {.name = "onesided",
                 .doc = "1: only the first n/2 + 1 frequencies (real input)",
                 .def = int64_t{0},
                 .min = 0,
                 .max = 1});
  }
};
// DFT(input [..., n, 1 or 2], dft_length?) -> [..., m, 2]: the discrete Fourier transform along
// `axis`, the signal cut or zero-padded to dft_length; the last axis holds (real, imaginary).
struct DFTOp {
  using Attrs = DFTAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 1, max_inputs = 2, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1};
  static constexpr const char* doc = "Discrete Fourier transform along an axis (complex as a last axis of 2)";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};
// The signal axis (counted in the input, negative from the end) and the transform length.
struct DFTPlan {
  int64_t axis = 0, length = 0, out_length = 0;
};
DFTPlan plan_dft(const DFTAttrs& a, const Shape& input, const Tensor* dft_length);

}  // namespace tessel::ops
