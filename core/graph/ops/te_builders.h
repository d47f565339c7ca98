#pragma once
// Every tensor-expression builder, by name: the op table (core/graph/ops/*.def) names each op's
// builder, and a name missing here does not compile. A builder turns one node into compute stages
// (te/builder_support.h) and declines, with Unsupported, what it cannot express; the table says
// what that is (`tessel ops`, column "compiles").
//
// The builders are defined in te/, which sits above this folder (it reads the ops' attributes and
// builds on core/te). Only their names are declared here, against the tensor type op.h
// forward-declares, so the op table can name them without the ops depending on te/ or core/te.
#include <vector>

#include "core/graph/op.h"

namespace tessel::ops::te_builder {

using Stages = std::vector<te::Tensor>;

// Element-wise and broadcast (builders_elementwise.cpp).
Stages relu(BuildContext& c);
Stages leaky_relu(BuildContext& c);
Stages sigmoid(BuildContext& c);
Stages tanh(BuildContext& c);
Stages exp(BuildContext& c);
Stages log(BuildContext& c);
Stages sqrt(BuildContext& c);
Stages erf(BuildContext& c);
Stages neg(BuildContext& c);
Stages abs(BuildContext& c);
Stages reciprocal(BuildContext& c);
Stages softplus(BuildContext& c);
Stages hard_swish(BuildContext& c);
Stages softsign(BuildContext& c);
Stages hard_sigmoid(BuildContext& c);
Stages elu(BuildContext& c);
Stages celu(BuildContext& c);
Stages selu(BuildContext& c);
Stages gelu(BuildContext& c);
Stages floor(BuildContext& c);
Stages ceil(BuildContext& c);
Stages round(BuildContext& c);
Stages sign(BuildContext& c);
Stages identity(BuildContext& c);
Stages dropout(BuildContext& c);
Stages cast(BuildContext& c);
Stages cast_like(BuildContext& c);
Stages clip(BuildContext& c);
Stages logical_not(BuildContext& c);
Stages logical_and(BuildContext& c);
Stages logical_or(BuildContext& c);
Stages logical_xor(BuildContext& c);
Stages add(BuildContext& c);
Stages sub(BuildContext& c);
Stages mul(BuildContext& c);
Stages div(BuildContext& c);
Stages pow(BuildContext& c);
Stages prelu(BuildContext& c);
Stages equal(BuildContext& c);
Stages less(BuildContext& c);
Stages greater(BuildContext& c);
Stages less_or_equal(BuildContext& c);
Stages greater_or_equal(BuildContext& c);
Stages max(BuildContext& c);
Stages min(BuildContext& c);
Stages sum(BuildContext& c);
Stages mean(BuildContext& c);
Stages where(BuildContext& c);
Stages sin(BuildContext& c);
Stages cos(BuildContext& c);
Stages tan(BuildContext& c);
Stages asin(BuildContext& c);
Stages acos(BuildContext& c);
Stages atan(BuildContext& c);
Stages sinh(BuildContext& c);
Stages cosh(BuildContext& c);
Stages asinh(BuildContext& c);
Stages acosh(BuildContext& c);
Stages atanh(BuildContext& c);
Stages shrink(BuildContext& c);
Stages thresholded_relu(BuildContext& c);
Stages is_inf(BuildContext& c);
Stages is_nan(BuildContext& c);
Stages mod(BuildContext& c);
Stages bit_shift(BuildContext& c);

// Reductions, normalization, matmul, convolution and pooling (te_from_graph.cpp).
Stages reduce_sum(BuildContext& c);
Stages reduce_mean(BuildContext& c);
Stages reduce_max(BuildContext& c);
Stages reduce_min(BuildContext& c);
Stages reduce_sum_square(BuildContext& c);
Stages reduce_l1(BuildContext& c);
Stages reduce_l2(BuildContext& c);
Stages softmax(BuildContext& c);
Stages log_softmax(BuildContext& c);
Stages layer_norm(BuildContext& c);
Stages batch_norm(BuildContext& c);
Stages matmul(BuildContext& c);
Stages gemm(BuildContext& c);
Stages matmul_packed(BuildContext& c);
Stages conv2d(BuildContext& c);
Stages conv2d_nchwc(BuildContext& c);
Stages winograd_input_transform(BuildContext& c);   // builders_winograd.cpp
Stages winograd_output_transform(BuildContext& c);
Stages max_pool(BuildContext& c);
Stages average_pool(BuildContext& c);
Stages global_max_pool(BuildContext& c);
Stages global_average_pool(BuildContext& c);

// Products, logs and indices of reductions (builders_rounding.cpp).
Stages reduce_prod(BuildContext& c);
Stages reduce_log_sum(BuildContext& c);
Stages reduce_log_sum_exp(BuildContext& c);
Stages arg_max(BuildContext& c);
Stages arg_min(BuildContext& c);
Stages hardmax(BuildContext& c);

// Normalization and Lp pooling (builders_normalization.cpp).
Stages instance_norm(BuildContext& c);
Stages mean_variance_norm(BuildContext& c);
Stages lrn(BuildContext& c);
Stages lp_pool(BuildContext& c);
Stages global_lp_pool(BuildContext& c);

// Data movement (builders_data_movement.cpp).
Stages reshape(BuildContext& c);  // Reshape, Flatten, Squeeze, Unsqueeze
Stages transpose(BuildContext& c);
Stages expand(BuildContext& c);
Stages concat(BuildContext& c);
Stages gather(BuildContext& c);
Stages pad(BuildContext& c);
Stages layout_transform(BuildContext& c);
Stages tile(BuildContext& c);
Stages split(BuildContext& c);
Stages slice(BuildContext& c);
Stages depth_to_space(BuildContext& c);
Stages space_to_depth(BuildContext& c);
Stages gather_elements(BuildContext& c);
Stages resize(BuildContext& c);

// Shape-valued ops, scatter and transposed convolution (builders_shape_scatter.cpp).
Stages shape_op(BuildContext& c);
Stages size_op(BuildContext& c);
Stages constant_of_shape(BuildContext& c);
Stages range(BuildContext& c);
Stages scatter_elements(BuildContext& c);
Stages conv_transpose(BuildContext& c);

// Positional ops (builders_index.cpp).
Stages trilu(BuildContext& c);
Stages cum_sum(BuildContext& c);
Stages one_hot(BuildContext& c);
Stages eye_like(BuildContext& c);
Stages gather_nd(BuildContext& c);
Stages scatter_nd(BuildContext& c);
Stages top_k(BuildContext& c);
Stages compress(BuildContext& c);
Stages reverse_sequence(BuildContext& c);

// Einsum, window functions and DFT (builders_math.cpp).
Stages einsum(BuildContext& c);
Stages hann_window(BuildContext& c);
Stages hamming_window(BuildContext& c);
Stages blackman_window(BuildContext& c);
Stages dft(BuildContext& c);

// STFT (builders_signal.cpp).
Stages stft(BuildContext& c);

// Losses and MaxUnpool (builders_loss.cpp).
Stages negative_log_likelihood_loss(BuildContext& c);
Stages softmax_cross_entropy_loss(BuildContext& c);
Stages max_unpool(BuildContext& c);

// GridSample (builders_grid_sample.cpp).
Stages grid_sample(BuildContext& c);

// Quantized inference: int8/uint8 operands, int32 accumulators (builders_quant.cpp).
Stages quantize_linear(BuildContext& c);
Stages dequantize_linear(BuildContext& c);
Stages dynamic_quantize_linear(BuildContext& c);
Stages matmul_integer(BuildContext& c);
Stages qlinear_matmul(BuildContext& c);
Stages conv_integer(BuildContext& c);
Stages qlinear_conv(BuildContext& c);

// RoiAlign (builders_roi_align.cpp).
Stages roi_align(BuildContext& c);

// RNN, GRU and LSTM, unrolled over their time steps (builders_recurrent.cpp).
Stages rnn(BuildContext& c);
Stages gru(BuildContext& c);
Stages lstm(BuildContext& c);

}  // namespace tessel::ops::te_builder
