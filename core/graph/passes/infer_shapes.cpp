#include "core/graph/passes/infer_shapes.h"

namespace tessel {

bool infer_shapes(Graph& g, PassContext&) {
  std::vector<TensorType> before;
  std::vector<bool> known_before;
  before.reserve(g.values.size());
  for (const Value& v : g.values) {
    before.push_back(v.type);
    known_before.push_back(v.value.defined());
  }
  infer_types(g);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (!(g.values[v].type == before[v]) || g.values[v].value.defined() != known_before[v]) return true;
  return false;
}

}  // namespace tessel
