// Shape-valued ops (Shape, Size, ConstantOfShape, Range), ScatterElements and ConvTranspose.
#include "core/compile/te_builder_support.h"

namespace tessel::compile::te_builder {

const std::vector<std::pair<std::string, Builder>>& shape_scatter_builders() {
  static const std::vector<std::pair<std::string, Builder>> table = {};
  return table;
}

}  // namespace tessel::compile::te_builder
