#pragma once
// The short-time Fourier transform, STFT (ONNX opset 17 form):
//
//   STFT(signal [B,L,1|2], frame_step, window [N]?, frame_length?) -> [B, F, K, 2]
//   out[b,f,k] = Σn signal[b, f·frame_step + n] · window[n] · e^(-2πi·k·n/N)
//
// N is frame_length, else the window's length; F = (L - N) / frame_step + 1 frames; K = N/2 + 1
// frequencies when onesided (a real signal only), else N. frame_step and frame_length decide the
// output's shape, so they are known when the graph is built.
#include "core/graph/ops/common.h"

namespace tessel::ops {

struct STFTAttrs {
  int64_t onesided = 1;
  template <class V>
  void visit(V& v) {
    v(onesided, {.name = "onesided",
                 .doc = "1: only the first N/2 + 1 frequencies (a real signal)",
                 .def = int64_t{1},
                 .min = 0,
                 .max = 1});
  }
};

struct STFTPlan {
  int64_t step = 1, length = 1, frames = 0, bins = 0;
  bool complex = false;
};
// Checks the inputs' types and the known frame_step and frame_length (throws Error).
STFTPlan plan_stft(const STFTAttrs& a, const InferContext& ctx);

struct STFTOp {
  using Attrs = STFTAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 2, max_inputs = 4, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {1, 3};
  static constexpr const char* doc = "Short-time Fourier transform: a windowed DFT of each frame of the signal";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs& a, const OpTypes& t);
};

// MelWeightMatrix (opset 17): the [dft_length/2 + 1, num_mel_bins] matrix of triangular filters
// that maps a onesided spectrum to mel bands, from five scalars (num_mel_bins, dft_length,
// sample_rate, lower_edge_hertz, upper_edge_hertz). The band edges are num_mel_bins + 2 points
// equally spaced in mel (2595·log10(1 + f/700)) from the lower to the upper edge, each rounded
// down to a spectrum bin ((dft_length + 1)·f / sample_rate); band i rises from edge i to edge
// i+1 and falls to edge i+2, as ONNX's reference computes it.
struct MelWeightMatrixAttrs {
  int64_t output_datatype = 1;
  template <class V>
  void visit(V& v) {
    v(output_datatype, {.name = "output_datatype", .doc = "ONNX element type code of the output", .def = int64_t{1}});
  }
};

struct MelWeightMatrixOp {
  using Attrs = MelWeightMatrixAttrs;
  static constexpr PatternKind pattern = PatternKind::kOpaque;
  static constexpr int min_inputs = 5, max_inputs = 5, min_outputs = 1, max_outputs = 1;
  static constexpr int shape_inputs[] = {0, 1};
  static constexpr const char* doc = "Triangular mel filter bank for a onesided spectrum";
  static void infer(const Attrs& a, InferContext& ctx);
  static void reference(const Attrs& a, const KernelArgs& args);
  static int64_t flops(const Attrs&, const OpTypes&) { return 0; }
};

}  // namespace tessel::ops
