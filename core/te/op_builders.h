#pragma once
// Tensor-expression builders for the ops of the op table (core/graph/op_table.h), one compute
// DAG per kernel. Tensor names are stable: schedules refer to them (C.i, conv.y, ...).
//
//   matmul            A[M,K] B[K,N] -> C[i, j] = sum(A[i, k] * B[k, j])
//   conv2d            X[N,C,H,W] Wt[F,C,R,S] -> pad (if pad > 0) -> conv[n, f, y, x]
//   conv2d_bias_relu  conv -> bias_add[n, f, y, x] = conv + bias[f] -> relu   (a fused group)
//   depthwise_conv2d  X[N,C,H,W] Wt[C,R,S] -> pad -> dwconv
//   conv2d_nchwc      the same convolution on channel-blocked layouts (NCHW16c and friends)
//   relu, add         element-wise over `shape`
//   max_pool, avg_pool, softmax (rows), layernorm (rows, gamma/beta), transpose (2-d)
#include <cstdint>

#include "core/te/tensor.h"

namespace tessel::te {

struct Conv2dParams {
  int64_t batch = 1, in_channels = 4, height = 8, width = 8, out_channels = 4, kernel_h = 3, kernel_w = 3, stride = 1,
          pad = 1;
  int64_t out_height() const { return (height + 2 * pad - kernel_h) / stride + 1; }
  int64_t out_width() const { return (width + 2 * pad - kernel_w) / stride + 1; }
};

ComputeDag matmul_dag(int64_t m, int64_t n, int64_t k);
ComputeDag matmul_packed_dag(int64_t m, int64_t n, int64_t k, int64_t block);
ComputeDag conv2d_dag(const Conv2dParams& p);
ComputeDag conv2d_bias_relu_dag(const Conv2dParams& p);
ComputeDag depthwise_conv2d_dag(const Conv2dParams& p);  // out_channels is ignored (= in_channels)
// NCHW[x]c layout: X[N, C/b, H, W, b], Wt[K/b, C/b, R, S, b(in), b(out)] -> conv[N, K/b, OH, OW, b]
ComputeDag conv2d_nchwc_dag(const Conv2dParams& p, int64_t block);
ComputeDag relu_dag(const Shape& shape);
ComputeDag add_dag(const Shape& shape);
ComputeDag pool2d_dag(bool is_max, int64_t batch, int64_t channels, int64_t height, int64_t width, int64_t size,
                      int64_t stride);
ComputeDag softmax_dag(int64_t rows, int64_t cols);
ComputeDag layernorm_dag(int64_t rows, int64_t cols, double eps = 1e-5);
ComputeDag transpose_dag(int64_t rows, int64_t cols);

}  // namespace tessel::te
