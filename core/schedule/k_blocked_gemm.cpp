#include "core/schedule/k_blocked_gemm.h"

#include <optional>
#include <vector>

namespace tessel::schedule {

bool k_blocking_applies(const Stage& c, int64_t k_block) {
  const loopir::Reduce* red = c.op->reduction();
  if (!red || red->axes.size() != 1 || c.op->axes.size() < 2 || !c.relations.empty() || c.attach != Attach::kRoot)
    return false;
  const int64_t k = red->axes[0].extent;
  return k_block > 1 && k % k_block == 0 && k >= 2 * k_block;
}

void k_blocked_gemm(ScheduleWriter& w, const std::string& c, const KBlocking& b) {
  using Loop = LoopHandle;
  const size_t rank = w.stage(c).op->axes.size();
  // rfactor needs C untouched but for the split of the axis it factors out.
  const std::string rf = w.rfactor(w.split(w.reduce_root(c, 0), b.k_block).first);
  w.set_scope(rf, "local");

  // C: [lead..., j.outer, ko, i.outer, i.inner, j.inner] (or ko before j.outer).
  const auto [rows, columns] = w.tile(w.root(c, rank - 2), w.root(c, rank - 1), b.rows, b.vectors * b.lanes);
  const Loop block = w.reduce_root(c, 0);
  std::vector<Loop> order;
  for (size_t d = 0; d + 2 < rank; ++d) order.push_back(w.root(c, d));
  if (b.k_outer)
    order.insert(order.end(), {block, columns.first});
  else
    order.insert(order.end(), {columns.first, block});
  order.insert(order.end(), {rows.first, rows.second, columns.second});
  w.reorder(order);
  w.vectorize(columns.second);
  w.compute_at(rf, rows.first);
  if (!b.packed.empty()) {
    // The panel of one block and one tile column: kc x W, contiguous.
    const std::string panel = w.cache_read(b.packed, "global", rf);
    w.compute_at(panel, b.k_outer ? columns.first : block);
    const Loop last = w.root(panel, w.stage(panel).op->axes.size() - 1);
    w.vectorize(b.vectors > 1 ? w.split(last, b.lanes).second : last);
  }
  // The batch axes or the tile columns in parallel: each iteration owns its part of C (and its
  // panels).
  const te::Tensor& op = w.stage(c).op;
  std::optional<Loop> shared;
  for (size_t d = 0; d + 2 < rank && !shared; ++d)
    if (op->axes[d].extent > 1) shared = w.root(c, d);
  if (!shared && op->axes[rank - 1].extent > b.vectors * b.lanes) shared = columns.first;
  if (shared) w.parallel(*shared);

  // C_rf's micro-kernel, register_blocked's: [ko, lead..., i, j, ki] ->
  // [ko, lead..., ki.outer, ki.inner (unrolled), i (unrolled), j.outer (unrolled), j.inner (vectorized)].
  const Loop ry = w.root(rf, rank - 1), rx = w.root(rf, rank);
  std::vector<Loop> micro;
  std::optional<Loop> unrolled;
  const Loop k = w.reduce_root(rf, 0);
  if (b.k_unroll > 1 && b.k_block % b.k_unroll == 0 && b.k_block >= 2 * b.k_unroll) {
    const auto [outer, inner] = w.split(k, b.k_unroll);
    micro = {outer, inner};
    unrolled = inner;
  } else {
    micro = {k};
  }
  micro.push_back(ry);
  Loop vec = rx;
  std::optional<Loop> vectors;
  if (b.vectors > 1) {
    const auto [outer, inner] = w.split(rx, b.lanes);
    micro.push_back(outer);
    vectors = outer;
    vec = inner;
  }
  micro.push_back(vec);
  w.reorder(micro);
  if (unrolled) w.unroll(*unrolled);
  if (b.rows > 1) w.unroll(ry);
  if (vectors) w.unroll(*vectors);
  w.vectorize(vec);
}

}  // namespace tessel::schedule
