#pragma once
// Inference simplification: rewrites that only hold once the model is frozen for inference.
//
// - BatchNormalization after a Conv or Gemm with constant weights (and no other reader of the
//   conv's result) is folded into the weights and bias:
//       s = scale / sqrt(var + eps);  W'[o,...] = W[o,...]·s[o];  b'[o] = (b[o] − mean[o])·s[o] + B[o]
//   %c = Conv(%x, %w, %b)                         %c = Conv(%x, %w', %b')
//   %y = BatchNormalization(%c, %s, %B, %m, %v)   (uses of %y read %c)
// - Dropout (whose mask nobody reads) and Identity are removed.
// - Chains of reshapes (Reshape, Flatten, Squeeze, Unsqueeze) become one Reshape to the final
//   shape; a reshape to the shape it already has is removed.
// - Transposes compose (Transpose∘Transpose = one Transpose); an identity permutation is removed.
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool simplify_inference(Graph& g, PassContext& ctx);

}  // namespace tessel
