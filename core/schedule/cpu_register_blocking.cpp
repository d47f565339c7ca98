// Register blocking of a reduction (a GEMM, a conv), the default CPU schedule's core: which axis
// the rows of the register tile run along, the tile's size (core/target/register_tile.h, adjusted
// to weights packed at compile time and to the knobs), and the loops around the micro-kernel that
// keeps the tile's accumulators in vector registers. Whether the tile's operands are packed,
// prefetched or K blocked is cpu_operand_caching.cpp's decision; a reduction too narrow for
// vectors is tiled in place instead.
#include <algorithm>
#include <optional>
#include <tuple>

#include "core/loopir/functor.h"
#include "core/schedule/cpu_schedule_parts.h"
#include "core/schedule/k_blocked_gemm.h"

namespace tessel::schedule::cpu {

namespace {

// The reduce loops of a register-blocked reduction, outermost first, as its micro-kernel's
// surroundings: the main axis (the longest) split by knobs.reduce_split and unrolled by k_unroll,
// in knobs.reduce_order among the others (CpuKnobs). `unrolled` receives the loop to unroll.
//
// The main loop is unrolled around the micro-kernel: fewer loop branches and address updates per
// FMA, and more loads in flight. By 4 for a single reduction loop (matmul's k); by 2 for a conv
// whose main axis is its innermost, the input channels within a block (by 4 was no faster there,
// at twice the code the studio's edit loop compiles: tests/bench/RESULTS.md, session 9).
std::vector<Loop> reduce_loops(Writer& w, const std::string& red_name, const CpuKnobs& knobs,
                               std::optional<Loop>* unrolled) {
  const te::Tensor red = w.stage(red_name).op;
  const auto& reduce_axes = red->reduction()->axes;
  size_t main = 0;
  for (size_t q = 1; q < reduce_axes.size(); ++q)
    if (reduce_axes[q].extent > reduce_axes[main].extent) main = q;
  std::vector<Loop> main_loops;  // what the main axis became, outermost first
  Loop rest = w.reduce_root(red_name, main);
  int64_t rest_extent = reduce_axes[main].extent;
  if (const int64_t block = knobs.reduce_split.value_or(1); block > 1 && block < rest_extent) {
    auto [outer, inner] = w.split(rest, block);
    main_loops.push_back(outer);
    rest = inner;
    rest_extent = block;
  }
  const int64_t k_factor = knobs.k_unroll.value_or(reduce_axes.size() == 1          ? 4
                                                   : main + 1 == reduce_axes.size() ? 2
                                                                                    : 1);
  if (k_factor > 1 && rest_extent >= 2 * k_factor && rest_extent % k_factor == 0) {
    auto [outer, inner] = w.split(rest, k_factor);
    main_loops.insert(main_loops.end(), {outer, inner});
    *unrolled = inner;
  } else {
    main_loops.push_back(rest);
  }
  std::vector<Loop> order;
  if (!knobs.reduce_order) {
    for (int a : w.stage(red_name).leaf)
      if (w.stage(red_name).axes[a].is_reduce) order.push_back({red_name, a});
    return order;
  }
  std::vector<Loop> window;
  for (size_t q = 0; q < reduce_axes.size(); ++q)
    if (q != main) window.push_back(w.reduce_root(red_name, q));
  switch (*knobs.reduce_order) {
    case CpuKnobs::ReduceOrder::kMainOuter:
      order = main_loops;
      order.insert(order.end(), window.begin(), window.end());
      break;
    case CpuKnobs::ReduceOrder::kWindowOuter:
      order = window;
      order.insert(order.end(), main_loops.begin(), main_loops.end());
      break;
    case CpuKnobs::ReduceOrder::kSplitAround:
      order = {main_loops.front()};
      order.insert(order.end(), window.begin(), window.end());
      order.insert(order.end(), main_loops.begin() + 1, main_loops.end());
      break;
  }
  return order;
}

// The plain schedule: tile the last two axes by the vector width, reduction loops outside the
// tile, accumulate in the output. For shapes too narrow for register blocking.
void schedule_reduction_in_place(Writer& w, const std::string& name, int64_t lanes) {
  const te::Tensor op = w.stage(name).op;
  size_t rank = op->axes.size();
  std::vector<Loop> outer, inner;
  if (rank >= 2) {
    int64_t fy = std::min<int64_t>(lanes, op->axes[rank - 2].extent),
            fx = std::min<int64_t>(lanes, op->axes[rank - 1].extent);
    if (fy > 1 && fx > 1) {
      auto [y, x] = w.tile(w.root(name, rank - 2), w.root(name, rank - 1), fy, fx);
      outer = {y.first, x.first};
      inner = {y.second, x.second};
    }
  }
  if (op->reduction()->axes[0].extent >= 8) w.split(w.reduce_root(name, 0), 4);
  if (!inner.empty()) {
    // leaf: [batch axes..., y.outer, x.outer, y.inner, x.inner, reduce...]  ->
    //       [batch axes..., y.outer, x.outer, reduce..., y.inner, x.inner]
    std::vector<Loop> order = outer;
    for (int a : w.stage(name).leaf)
      if (w.stage(name).axes[a].is_reduce) order.push_back({name, a});
    order.insert(order.end(), inner.begin(), inner.end());
    w.reorder(order);
    w.vectorize(inner[1]);
  }
  w.parallel(parallel_loop(w.stage(name)));
}

// The rows of the register tile run along the innermost data-parallel axis that the vector
// operands (the accesses that move with x) do not depend on: each loaded vector is then reused by
// every row, and each row adds one broadcast.
//   matmul C[i, j] += A[i, k] * B[k, j]        B moves with j, not i          rows along i
//   NCHW16c conv[n, f, y, x, fb]               Wt[f, .., fb] moves with fb    rows along x
//   NCHW conv[n, f, y, x] += pad[n, c, y+ry, x+rx] * W[f, ..]                  rows along f
// When every data-parallel axis feeds the vector operands (depthwise, pooling): the axis next to x.
int reuse_axis(const Stage& red) {
  const auto& axes = red.op->axes;
  const loopir::Var* x = axes.back().var.get();
  std::vector<bool> feeds(axes.size(), false);
  loopir::for_each_access(red.op->body, [&](const loopir::Buffer&, const std::vector<loopir::Expr>& idx, bool) {
    bool moves_with_x = false;
    for (const auto& e : idx)
      moves_with_x = moves_with_x || loopir::uses_var(e, [x](const loopir::Var* v) { return v == x; });
    if (!moves_with_x) return;
    for (size_t d = 0; d < axes.size(); ++d)
      for (const auto& e : idx)
        if (loopir::uses_var(e, [&](const loopir::Var* v) { return v == axes[d].var.get(); })) feeds[d] = true;
  });
  for (size_t d = axes.size() - 1; d-- > 0;)
    if (!feeds[d] && axes[d].extent >= 4) return static_cast<int>(d);
  return static_cast<int>(axes.size()) - 2;
}

}  // namespace

// Register blocking of one reduction (TVM's CPU matmul recipe), with `out` the stage that holds the
// final values: a cache_write copy of the reduction or an element-wise epilogue of the same shape.
//
//   out:   for lead..., y.outer, x.outer          (outermost data-parallel loop in parallel)
//            red: alloc acc[rows][vectors*lanes]   (small and constant: LLVM keeps it in registers)
//                 for reduce axes..., k.outer         (k outside the micro-kernel; reduce_loops)
//                   for k.inner (4, when k is the only reduce axis) unrolled, y unrolled,
//                       x.outer unrolled, x.inner vectorized:
//                     acc[y][x] += ...
//            for y.inner, x.inner vectorized:  out = epilogue(acc)
void register_blocked(Writer& w, const std::string& out_name, const std::string& red_name, const RegisterTile& t,
                      const CpuKnobs& knobs, const CpuCaches& caches) {
  const size_t rank = w.stage(out_name).op->axes.size();
  const size_t rows_axis = static_cast<size_t>(t.rows_axis);
  Loop y = w.root(out_name, rows_axis), x = w.root(out_name, rank - 1);
  Loop x_outer, x_inner;
  if (rows_axis == rank - 2) {
    std::tie(x_outer, x_inner) = w.tile(y, x, t.rows, t.vectors * t.lanes).second;
  } else {
    // Rows along an axis further out (a NCHW conv's output channels): split both, and move the
    // axes between them outside the tile.
    auto [y_outer, y_inner] = w.split(y, t.rows);
    std::tie(x_outer, x_inner) = w.split(x, t.vectors * t.lanes);
    std::vector<Loop> order{y_outer};
    for (size_t d = rows_axis + 1; d + 1 < rank; ++d) order.push_back(w.root(out_name, d));
    order.insert(order.end(), {x_outer, y_inner, x_inner});
    w.reorder(order);
  }
  w.vectorize(x_inner);
  Loop at = x_outer;
  // The loop a packed panel of the vector operand is copied at (see packed_operand).
  std::optional<Loop> pack_at;
  const std::string packed = rows_axis == rank - 2 ? packed_operand(w.stage(red_name), t, knobs, caches) : "";
  const Prepacked prepacked = rows_axis == rank - 2 ? prepacked_operand(w.stage(red_name)) : Prepacked{};
  const int64_t panel =
      rows_axis == rank - 2
          ? knobs.panel.value_or(default_panel(w.stage(red_name), t, packed.empty() ? prepacked.name : packed, caches))
          : 0;
  if (panel > 1) {
    // [lead..., y.outer, x.outer, ...] -> [lead..., x.panel, y.outer, x.in_panel, ...]
    auto [x_panel, x_in_panel] = w.split(x_outer, panel);
    std::vector<Loop> order;
    for (size_t d = 0; d + 2 < rank; ++d) order.push_back(w.root(out_name, d));
    const Stage& o = w.stage(out_name);
    Loop y_outer{out_name, o.leaf[rank - 2]};
    order.insert(order.end(), {x_panel, y_outer, x_in_panel});
    w.reorder(order);
    at = x_in_panel;
    pack_at = x_panel;
  } else if (!packed.empty() || prepacked.width > 0) {
    // [lead..., y.outer, x.outer, ...] -> [lead..., x.outer, y.outer, ...]: one column of tiles
    // after the other, each reading the panel packed for it.
    const Stage& o = w.stage(out_name);
    Loop y_outer{out_name, o.leaf[rank - 2]};
    w.reorder({x_outer, y_outer});
    at = y_outer;
    pack_at = x_outer;
  }
  const std::string streamed = streamed_operand(w.stage(red_name), t, knobs, caches);
  const std::optional<Loop> plane_at = packed.empty() && !pack_at && prepacked.width == 0
                                           ? plane_block_loop(w, out_name, red_name, t, knobs, caches, streamed)
                                           : std::nullopt;
  w.compute_at(red_name, plane_at ? *plane_at : at);
  if (!packed.empty()) {
    std::string panel = w.cache_read(packed, "global", red_name);
    w.compute_at(panel, *pack_at);
    const Stage& p = w.stage(panel);
    Loop last = w.root(panel, p.op->axes.size() - 1);
    w.vectorize(t.vectors * t.lanes > t.lanes ? w.split(last, t.lanes).second : last);
  }
  parallelize(w, out_name, knobs, /*tiles=*/true, rows_before_blocks(w.stage(red_name), t, caches, streamed));

  const te::Tensor red = w.stage(red_name).op;
  Loop ry = w.root(red_name, rows_axis), rx = w.root(red_name, red->axes.size() - 1);
  Loop vec = rx, rx_outer;
  std::optional<Loop> k_unrolled;
  std::vector<Loop> order = reduce_loops(w, red_name, knobs, &k_unrolled);
  // The hints go in the innermost reduce loop around the micro-kernel (outside the unrolled k).
  std::optional<Loop> hint_at;
  for (const Loop& l : order)
    if (!k_unrolled || l.axis != k_unrolled->axis) hint_at = l;
  if (plane_at) {
    // The plane's other axes (the image rows) go inside the outer reduce loops (rcb, ry).
    std::vector<Loop> rows;
    for (size_t d = static_cast<size_t>(plane_at->axis) + 1; d + 2 < red->axes.size(); ++d)
      rows.push_back(w.root(red_name, d));
    // A tile shorter than the image row (AVX2's 4 of layer4's 7 pixels) walks the row in tiles.
    if (red->axes[rows_axis].extent > t.rows) {
      auto [tiles, in_tile] = w.split(ry, t.rows);
      rows.push_back(tiles);
      ry = in_tile;
    }
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(red->reduction()->axes.size() - 2), rows.begin(),
                 rows.end());
  }
  order.push_back(ry);
  if (t.vectors > 1) {
    std::tie(rx_outer, vec) = w.split(rx, t.lanes);
    order.push_back(rx_outer);
  }
  order.push_back(vec);
  w.reorder(order);
  if (k_unrolled) w.unroll(*k_unrolled);
  if (t.rows > 1) w.unroll(ry);
  if (t.vectors > 1) w.unroll(rx_outer);
  w.vectorize(vec);
  if (hint_at && !streamed.empty()) prefetch_next_block(w, out_name, red_name, streamed, *hint_at);
}

// `out` holds the values, `red` the reduction (the same stage for a plain reduction output).
RegisterTile register_tile_for(const Stage& out, const Stage& red, int64_t lanes, const CpuKnobs& knobs) {
  size_t rank = out.op->axes.size();
  if (rank < 2 || red.op->axes.size() != rank) return {};
  int rows_axis = reuse_axis(red);
  RegisterTile t =
      choose_register_tile(out.op->axes[static_cast<size_t>(rows_axis)].extent, out.op->axes[rank - 1].extent, lanes);
  t.rows_axis = rows_axis;
  if (!t.usable) return t;
  const int64_t y_extent = out.op->axes[static_cast<size_t>(rows_axis)].extent,
                x_extent = out.op->axes[rank - 1].extent;
  // Weights packed at compile time for a tile of this width (the same choice, made by
  // transform_layout for the same shape); a tile of another width would read them across panels.
  if (const int64_t packed = prepacked_operand(red).width;
      packed > 0 && packed != t.width() && packed % t.lanes == 0 && packed / t.lanes <= vector_registers(t.lanes) / 4) {
    t.vectors = packed / t.lanes;
    t.rows = rows_for(y_extent, std::min<int64_t>(12, vector_registers(t.lanes) * 3 / 4 / t.vectors));
  }
  if (knobs.tile_rows) t.rows = std::clamp<int64_t>(*knobs.tile_rows, 1, y_extent);
  if (knobs.tile_vectors && *knobs.tile_vectors >= 1 && *knobs.tile_vectors * t.lanes <= x_extent)
    t.vectors = *knobs.tile_vectors;
  return t;
}

// K blocking of reduction `red` when knobs.k_block asks for it, or default_k_block when the knob is
// unset, and it applies (k_blocked_gemm.h): writes it and returns true. `red` then stays a whole
// tensor computed at the root.
bool k_blocked(Writer& w, const std::string& red, const RegisterTile& t, const CpuKnobs& knobs,
               const CpuCaches& caches) {
  const Stage& s = w.stage(red);
  const size_t rank = s.op->axes.size();
  const bool by_default = !knobs.k_block;
  const int64_t k_block = by_default ? default_k_block(s, t, caches) : *knobs.k_block;
  if (static_cast<size_t>(t.rows_axis) != rank - 2 || !k_blocking_applies(s, k_block)) return false;
  // The panel is packed once per block and tile column and read by every row tile: worth it
  // unless there are only a few (the `pack` knob decides instead when set).
  CpuKnobs pack = knobs;
  if (!pack.pack) pack.pack = s.op->axes[rank - 2].extent >= 4 * t.rows;
  const KBlocking b{.rows = t.rows,
                    .vectors = t.vectors,
                    .lanes = t.lanes,
                    .k_block = k_block,
                    .k_unroll = knobs.k_unroll.value_or(4),
                    .k_outer = knobs.k_block_outer.value_or(by_default),
                    .packed = packed_operand(s, t, pack, caches)};
  k_blocked_gemm(w, red, b);
  return true;
}

// A reduction output: accumulate in a local register tile (cache_write), copy out per tile.
void schedule_reduction_output(Writer& w, const std::string& name, int64_t lanes, const CpuKnobs& knobs,
                               const CpuCaches& caches) {
  RegisterTile t = register_tile_for(w.stage(name), w.stage(name), lanes, knobs);
  if (!t.usable) return schedule_reduction_in_place(w, name, lanes);
  if (k_blocked(w, name, t, knobs, caches)) return;
  std::string local = w.cache_write(name, "local");  // the accumulating stage, NAME_local
  register_blocked(w, name, local, t, knobs, caches);
}

}  // namespace tessel::schedule::cpu
