#include "core/tune/search_space.h"

#include <algorithm>

#include "core/schedule/schedule_state.h"
#include "core/support/error.h"

namespace tessel::tune {

namespace {

constexpr int64_t kDefault = -1;

// The extents a reduction output exposes to the register tile: rows (the second-last axis; the
// default may pick another, which the knob then clamps), columns (the last axis) and a lone
// reduction axis (matmul's k; 0 when there are several, as in a conv).
struct ReductionShape {
  int64_t rows = 0, columns = 0, k = 0;
};

std::optional<ReductionShape> reduction_shape(const te::ComputeDag& dag) {
  for (const te::Tensor& t : dag.ops) {
    const auto* red = t->reduction();
    if (!red || t->axes.size() < 2) continue;
    ReductionShape s;
    s.rows = t->axes[t->axes.size() - 2].extent;
    s.columns = t->axes.back().extent;
    s.k = red->axes.size() == 1 ? red->axes[0].extent : 0;
    return s;
  }
  return std::nullopt;
}

bool has_elementwise_output(const te::ComputeDag& dag) {
  for (const te::Tensor& t : dag.outputs)
    if (!t->reduction() && t->axes.size() >= 2) return true;
  return false;
}

Knob knob(std::string name, std::vector<int64_t> values) {
  values.insert(values.begin(), kDefault);
  return {std::move(name), std::move(values)};
}

}  // namespace

SearchSpace::SearchSpace(te::ComputeDag dag, int64_t vector_lanes) : dag_(std::move(dag)), lanes_(vector_lanes) {
  if (auto r = reduction_shape(dag_)) {
    std::vector<int64_t> rows, vectors, k_unroll{1}, panels;
    for (int64_t v : {1, 2, 3, 4, 6, 8, 12})
      if (v <= r->rows) rows.push_back(v);
    for (int64_t v : {1, 2, 4, 8})
      if (v * lanes_ <= r->columns) vectors.push_back(v);
    for (int64_t v : {2, 4, 8})
      if (r->k >= 2 * v && r->k % v == 0) k_unroll.push_back(v);
    const int64_t tile_columns = r->columns / std::max<int64_t>(1, lanes_);
    for (int64_t v : {2, 4, 8, 16})
      if (v < tile_columns) panels.push_back(v);
    if (rows.size() > 1) knobs_.push_back(knob("tile_rows", rows));
    if (vectors.size() > 1) knobs_.push_back(knob("tile_vectors", vectors));
    if (r->k > 0) knobs_.push_back(knob("k_unroll", k_unroll));
    if (!panels.empty()) knobs_.push_back(knob("panel", panels));
    // Packing the vector operand into panels applies to a GEMM (one reduce axis).
    if (r->k > 0) knobs_.push_back(knob("pack", {0, 1}));
  }
  if (has_elementwise_output(dag_)) knobs_.push_back(knob("vector_split", {lanes_, 2 * lanes_, 4 * lanes_}));
  knobs_.push_back(knob("parallel_loops", {1, 2}));
}

double SearchSpace::size() const {
  double n = 1;
  for (const Knob& k : knobs_) n *= static_cast<double>(k.values.size());
  return n;
}

schedule::CpuKnobs SearchSpace::knobs_of(const Candidate& c) const {
  schedule::CpuKnobs k;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const int64_t v = knobs_[i].values.at(static_cast<size_t>(c.at(i)));
    if (v == kDefault) continue;
    const std::string& n = knobs_[i].name;
    if (n == "tile_rows")
      k.tile_rows = v;
    else if (n == "tile_vectors")
      k.tile_vectors = v;
    else if (n == "k_unroll")
      k.k_unroll = v;
    else if (n == "panel")
      k.panel = v;
    else if (n == "pack")
      k.pack = v != 0;
    else if (n == "parallel_loops")
      k.parallel_loops = static_cast<int>(v);
    else if (n == "vector_split")
      k.vector_split = v;
  }
  return k;
}

std::optional<schedule::Schedule> SearchSpace::schedule_of(const Candidate& c) const {
  try {
    return schedule::default_cpu_schedule(dag_, lanes_, knobs_of(c));
  } catch (const Error&) {
    return std::nullopt;  // a combination whose steps do not apply (e.g. nothing left to fuse)
  }
}

Candidate SearchSpace::random_candidate(std::mt19937_64& rng) const {
  Candidate c(knobs_.size());
  for (size_t i = 0; i < knobs_.size(); ++i)
    c[i] = static_cast<int>(std::uniform_int_distribution<size_t>(0, knobs_[i].values.size() - 1)(rng));
  return c;
}

Candidate SearchSpace::mutate(const Candidate& c, std::mt19937_64& rng) const {
  Candidate m = c;
  if (knobs_.empty()) return m;
  const size_t i = std::uniform_int_distribution<size_t>(0, knobs_.size() - 1)(rng);
  const size_t n = knobs_[i].values.size();
  if (n < 2) return m;
  // Another value of the same knob, chosen uniformly among the others.
  size_t v = std::uniform_int_distribution<size_t>(0, n - 2)(rng);
  if (static_cast<int>(v) >= m[i]) ++v;
  m[i] = static_cast<int>(v);
  return m;
}

Candidate SearchSpace::crossover(const Candidate& a, const Candidate& b, std::mt19937_64& rng) const {
  Candidate c = a;
  for (size_t i = 0; i < c.size(); ++i)
    if (rng() & 1) c[i] = b[i];
  return c;
}

std::string SearchSpace::describe(const Candidate& c) const {
  std::string text;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    const int64_t v = knobs_[i].values.at(static_cast<size_t>(c.at(i)));
    if (!text.empty()) text += ' ';
    text += knobs_[i].name + "=" + (v == kDefault ? std::string("default") : std::to_string(v));
  }
  return text;
}

}  // namespace tessel::tune
