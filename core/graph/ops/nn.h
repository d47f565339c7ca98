#pragma once
// Neural-network ops: convolutions, pooling, matrix products, normalizations, softmax family and
// activations that are not plain element-wise arithmetic. One header per family.
#include "core/graph/ops/nn_conv.h"
