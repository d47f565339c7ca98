#pragma once
// Neural-network ops: convolutions, pooling, matrix products, normalizations, the softmax family
// and activations that are not plain element-wise arithmetic. One header per family.
#include "core/graph/ops/nn_activation.h"
#include "core/graph/ops/nn_conv.h"
#include "core/graph/ops/nn_grid_sample.h"
#include "core/graph/ops/nn_loss.h"
#include "core/graph/ops/nn_matmul.h"
#include "core/graph/ops/nn_norm.h"
#include "core/graph/ops/nn_pool.h"
#include "core/graph/ops/nn_roi_align.h"
#include "core/graph/ops/nn_softmax.h"
