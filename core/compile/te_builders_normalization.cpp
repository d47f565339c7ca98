// Normalization and Lp pooling: InstanceNormalization, MeanVarianceNormalization, LRN, LpPool,
// GlobalLpPool.
#include "core/compile/te_builder_support.h"

namespace tessel::compile::te_builder {

const std::vector<std::pair<std::string, Builder>>& normalization_builders() {
  static const std::vector<std::pair<std::string, Builder>> table = {};
  return table;
}

}  // namespace tessel::compile::te_builder
