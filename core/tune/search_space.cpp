#include "core/tune/search_space.h"

#include <algorithm>

#include "core/schedule/int8_vnni_schedule.h"
#include "core/schedule/schedule_state.h"
#include "core/support/error.h"
#include "core/schedule/target_default.h"

namespace tessel::tune {

namespace {

constexpr int64_t kDefault = -1;
// default_gpu_schedule's own arguments.
constexpr int64_t kGpuTile = 8, kGpuThreads = 64;

// The extents a reduction output exposes to the register tile: rows (the second-last axis; the
// default may pick another, which the knob then clamps), columns (the last axis), a lone
// reduction axis (matmul's k; 0 when there are several, as in a conv), the longest reduce axis
// (the main one, which reduce_split splits) and whether any other reduce axis has more than one
// iteration (so the order of the reduce loops is a choice).
struct ReductionShape {
  int64_t rows = 0, columns = 0, k = 0;
  int64_t main = 0;
  bool window = false;
  // The product stays a whole tensor when K-blocked (k_blocked_gemm.h): the kernel's output, or
  // read only by an element-wise output of its shape (a dense layer's bias add).
  bool blockable = false;
};

std::optional<ReductionShape> reduction_shape(const te::ComputeDag& dag) {
  for (const te::Tensor& t : dag.ops) {
    const auto* red = t->reduction();
    if (!red || t->axes.size() < 2) continue;
    ReductionShape s;
    s.rows = t->axes[t->axes.size() - 2].extent;
    s.columns = t->axes.back().extent;
    s.k = red->axes.size() == 1 ? red->axes[0].extent : 0;
    size_t main = 0;
    for (size_t q = 1; q < red->axes.size(); ++q)
      if (red->axes[q].extent > red->axes[main].extent) main = q;
    s.main = red->axes[main].extent;
    for (size_t q = 0; q < red->axes.size(); ++q) s.window = s.window || (q != main && red->axes[q].extent > 1);
    const auto is_output = [&](const te::Tensor& x) {
      return std::find(dag.outputs.begin(), dag.outputs.end(), x) != dag.outputs.end();
    };
    std::vector<te::Tensor> readers;
    for (const te::Tensor& op : dag.ops)
      if (std::find(op->inputs.begin(), op->inputs.end(), t) != op->inputs.end()) readers.push_back(op);
    s.blockable = is_output(t) || (readers.size() == 1 && is_output(readers[0]) && !readers[0]->reduction() &&
                                   readers[0]->shape == t->shape);
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

SearchSpace::SearchSpace(te::ComputeDag dag, const TargetTraits& target) : dag_(std::move(dag)), target_(target) {
  switch (target_.device_class) {
    case DeviceClass::kCpu:
      add_cpu_knobs();
      break;
    case DeviceClass::kGpu:
      add_gpu_knobs();
      break;
    case DeviceClass::kAccelerator:
      add_accelerator_knobs();
      break;
  }
  if (!unsupported_.empty()) return;
  // The default schedule is what the kernel runs with untuned, and candidate 0: when it does not
  // apply (the kernel then runs plain loops), there is nothing to open up.
  try {
    (void)default_schedule();
  } catch (const Error& e) {
    unsupported_ = std::string("its default schedule does not apply: ") + e.what();
    knobs_.clear();
  }
}

schedule::Schedule SearchSpace::default_schedule() const { return build(default_candidate()); }

schedule::Schedule SearchSpace::build(const Candidate& c) const {
  switch (target_.device_class) {
    case DeviceClass::kCpu:
      return schedule::default_cpu_schedule(dag_, target_.vector_lanes, cpu_knobs_of(c), caches());
    case DeviceClass::kGpu: {
      const auto [tile, threads] = gpu_tile_and_threads_of(c);
      return schedule::default_gpu_schedule(dag_, tile, threads);
    }
    case DeviceClass::kAccelerator:
      return schedule::default_accel_schedule(dag_, accel_knobs_of(c));
  }
  throw Error("tune: unknown kind of search space");
}

void SearchSpace::add_cpu_knobs() {
  if (schedule::int8_vnni_schedule(dag_, target_.vnni)) {
    unsupported_ = "the int8 dot-product schedule (int8_vnni_schedule) has no knobs to search";
    return;
  }
  const int64_t lanes = target_.vector_lanes;
  if (auto r = reduction_shape(dag_)) {
    std::vector<int64_t> rows, vectors, k_unroll{1}, splits, panels;
    for (int64_t v : {1, 2, 3, 4, 6, 8, 12})
      if (v <= r->rows) rows.push_back(v);
    // 3: AVX2's 4 x 3-vector tile (12 accumulators), which the default takes for some shapes.
    for (int64_t v : {1, 2, 3, 4, 8})
      if (v * lanes <= r->columns) vectors.push_back(v);
    for (int64_t v : {2, 4, 8})
      if (r->k >= 2 * v && r->k % v == 0) k_unroll.push_back(v);
    for (int64_t v : {4, 8, 16, 32, 64})
      if (2 * v <= r->main && r->main % v == 0) splits.push_back(v);
    const int64_t tile_columns = r->columns / std::max<int64_t>(1, lanes);
    for (int64_t v : {2, 4, 8, 16})
      if (v < tile_columns) panels.push_back(v);
    if (rows.size() > 1) knobs_.push_back(knob("tile_rows", rows));
    if (vectors.size() > 1) knobs_.push_back(knob("tile_vectors", vectors));
    if (r->k > 0) knobs_.push_back(knob("k_unroll", k_unroll));
    if (!splits.empty()) knobs_.push_back(knob("reduce_split", splits));
    using Order = schedule::CpuKnobs::ReduceOrder;
    if (r->window)
      knobs_.push_back(
          knob("reduce_order", {static_cast<int64_t>(Order::kMainOuter), static_cast<int64_t>(Order::kWindowOuter),
                                static_cast<int64_t>(Order::kSplitAround)}));
    if (!panels.empty()) knobs_.push_back(knob("panel", panels));
    // A conv's weights hinted into L2 one output-channel block ahead (streamed_operand): offered
    // where the hints exist at all (a blocked layout, whose vector operand is the weights).
    if (r->k == 0 && prefetch_applies()) knobs_.push_back(knob("prefetch", {0, 1}));
    // Packing the vector operand into panels applies to a GEMM (one reduce axis).
    if (r->k > 0) knobs_.push_back(knob("pack", {0, 1}));
    // K blocking applies to a GEMM whose product stays a whole tensor (ReductionShape); K has two
    // blocks at least.
    std::vector<int64_t> blocks;
    for (int64_t v : {32, 64, 128, 256, 512})
      if (r->blockable && r->k >= 2 * v && r->k % v == 0) blocks.push_back(v);
    if (!blocks.empty()) {
      knobs_.push_back(knob("k_block", blocks));
      knobs_.push_back(knob("k_block_outer", {0, 1}));
    }
  }
  if (has_elementwise_output(dag_)) knobs_.push_back(knob("vector_split", {lanes, 2 * lanes, 4 * lanes}));
  knobs_.push_back(knob("parallel_loops", {1, 2}));
}

bool SearchSpace::prefetch_applies() const {
  schedule::CpuKnobs on, off;
  on.prefetch = true, off.prefetch = false;
  try {
    return schedule::default_cpu_schedule(dag_, target_.vector_lanes, on, caches()) !=
           schedule::default_cpu_schedule(dag_, target_.vector_lanes, off, caches());
  } catch (const Error&) {
    return false;  // no default schedule: the constructor says so
  }
}

void SearchSpace::add_gpu_knobs() {
  // The tile applies to a reduction output of rank >= 2 (matmul, conv), the threads to an
  // element-wise output or a row reduction (softmax): what default_gpu_schedule uses each for.
  int64_t widest = 0;
  bool threads = false;
  for (const te::Tensor& t : dag_.outputs) {
    if (t->reduction() && t->axes.size() >= 2)
      widest = std::max({widest, t->axes.back().extent, t->axes[t->axes.size() - 2].extent});
    else if (!t->reduction())
      threads = true;
  }
  std::vector<int64_t> tiles;
  for (int64_t v : {4, 16, 32})
    if (v <= widest) tiles.push_back(v);
  if (!tiles.empty()) knobs_.push_back(knob("tile", tiles));
  if (threads) knobs_.push_back(knob("threads", {32, 128, 256}));
}

void SearchSpace::add_accelerator_knobs() {
  try {
    (void)schedule::default_accel_schedule(dag_, schedule::accel_knobs_of(target_));
  } catch (const Error& e) {
    unsupported_ = std::string(e.what()) + "; the kernel runs on the host";
    return;
  }
  // default_accel_schedule accepted it: one int8 product C[M, N] over K, all multiples of n.
  const te::Tensor& c = dag_.outputs[0];
  const int64_t n = target_.accelerator.gemm;
  const int64_t row_tiles = c->shape[0] / n, column_tiles = c->shape[1] / n;
  const int64_t k_tiles = c->reduction()->axes[0].extent / n;
  std::vector<int64_t> vthreads{1}, loads;
  for (int64_t v : {2, 4})
    if ((row_tiles % v == 0 && row_tiles > 1) || (column_tiles % v == 0 && column_tiles > 1)) vthreads.push_back(v);
  for (int64_t v : {1, 2, 4, 8, 16})
    if (k_tiles % v == 0) loads.push_back(v);
  if (vthreads.size() > 1) knobs_.push_back(knob("vthreads", vthreads));
  if (loads.size() > 1) knobs_.push_back(knob("k_tiles", loads));
}

double SearchSpace::size() const {
  double n = 1;
  for (const Knob& k : knobs_) n *= static_cast<double>(k.values.size());
  return n;
}

std::optional<int64_t> SearchSpace::value(const Candidate& c, std::string_view name) const {
  for (size_t i = 0; i < knobs_.size(); ++i) {
    if (knobs_[i].name != name) continue;
    const int64_t v = knobs_[i].values.at(static_cast<size_t>(c.at(i)));
    return v == kDefault ? std::nullopt : std::optional<int64_t>(v);
  }
  return std::nullopt;
}

schedule::CpuKnobs SearchSpace::cpu_knobs_of(const Candidate& c) const {
  schedule::CpuKnobs k;
  k.tile_rows = value(c, "tile_rows");
  k.tile_vectors = value(c, "tile_vectors");
  k.k_unroll = value(c, "k_unroll");
  k.reduce_split = value(c, "reduce_split");
  if (auto v = value(c, "reduce_order")) k.reduce_order = static_cast<schedule::CpuKnobs::ReduceOrder>(*v);
  k.panel = value(c, "panel");
  if (auto v = value(c, "pack")) k.pack = *v != 0;
  if (auto v = value(c, "prefetch")) k.prefetch = *v != 0;
  k.k_block = value(c, "k_block");
  if (auto v = value(c, "k_block_outer")) k.k_block_outer = *v != 0;
  if (auto v = value(c, "parallel_loops")) k.parallel_loops = static_cast<int>(*v);
  k.vector_split = value(c, "vector_split");
  return k;
}

schedule::AccelKnobs SearchSpace::accel_knobs_of(const Candidate& c) const {
  schedule::AccelKnobs k = schedule::accel_knobs_of(target_);
  k.vthreads = value(c, "vthreads").value_or(k.vthreads);
  k.k_tiles = value(c, "k_tiles").value_or(k.k_tiles);
  return k;
}

std::pair<int64_t, int64_t> SearchSpace::gpu_tile_and_threads_of(const Candidate& c) const {
  return {value(c, "tile").value_or(kGpuTile), value(c, "threads").value_or(kGpuThreads)};
}

std::optional<schedule::Schedule> SearchSpace::schedule_of(const Candidate& c) const {
  if (!unsupported_.empty()) return std::nullopt;
  try {
    return build(c);
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
    std::string shown = v == kDefault ? "default" : std::to_string(v);
    if (knobs_[i].name == "reduce_order" && v != kDefault)
      shown = v == 0 ? "main_outer" : v == 1 ? "window_outer" : "split_around";
    text += knobs_[i].name + "=" + shown;
  }
  return text;
}

}  // namespace tessel::tune
