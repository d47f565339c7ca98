#pragma once
// Random values for every input of a graph, uniform in [-bound, bound] and reproducible from the
// seed: what the tests that run a graph two ways (before and after a pass, compiled and reference)
// feed both.
//
//   const std::vector<Tensor> inputs = testing::random_graph_inputs(g, 42);
#include <random>
#include <vector>

#include "core/graph/graph.h"

namespace tessel::testing {

inline std::vector<Tensor> random_graph_inputs(const Graph& g, unsigned seed, double bound = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-bound, bound);
  std::vector<Tensor> inputs;
  for (ValueId v : g.inputs) {
    Tensor t(g.value(v).type.dtype, g.value(v).type.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, dist(rng));
    inputs.push_back(t);
  }
  return inputs;
}

}  // namespace tessel::testing
