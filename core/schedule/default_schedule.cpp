#include "core/schedule/default_schedule.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "core/loopir/functor.h"
#include "core/schedule/k_blocked_gemm.h"
#include "core/schedule/parallel_work.h"
#include "core/schedule/schedule_writer.h"
#include "core/support/error.h"
#include "core/target/register_tile.h"

namespace tessel::schedule {

namespace {

// The default schedules are written step by step with a ScheduleWriter (schedule_writer.h).
using Loop = LoopHandle;
using Writer = ScheduleWriter;

// The outermost loop worth running in parallel: the first root loop with more than one iteration.
Loop parallel_loop(const Stage& s) {
  // A loop already vectorized (an injective stage whose only long axis is its last) stays so:
  // the outermost serial loop is parallelized instead, even a trivial one.
  for (int a : s.leaf)
    if (a < static_cast<int>(s.op->axes.size()) && s.op->axes[a].extent > 1 &&
        s.axes[a].kind == loopir::ForKind::kSerial)
      return {s.name, a};
  return {s.name, s.leaf[0]};
}

// The number of iterations of loop `a` of a stage, from its root axis through the splits and fuses
// that made it.
int64_t loop_extent(const Stage& s, int a) {
  const size_t data_axes = s.op->axes.size();
  if (a < static_cast<int>(data_axes)) return s.op->axes[static_cast<size_t>(a)].extent;
  const loopir::Reduce* red = s.op->reduction();
  if (red && a < static_cast<int>(data_axes + red->axes.size()))
    return red->axes[static_cast<size_t>(a) - data_axes].extent;
  for (const Relation& r : s.relations) {
    if (r.kind == Relation::Kind::kFuse && r.fused == a) return loop_extent(s, r.outer) * loop_extent(s, r.inner);
    if (r.kind != Relation::Kind::kSplit || (r.outer != a && r.inner != a)) continue;
    const int64_t parent = loop_extent(s, r.parent), parts = (parent + r.factor - 1) / r.factor;
    return (r.outer == a) != r.by_nparts ? parts : r.factor;
  }
  return 1;
}

// The outermost data-parallel loop of a register-blocked reduction with more than one iteration,
// a tile loop included: a (1, 128, 768) matmul output has only its tile loops to share, and its
// leading batch axis of extent 1 would leave every thread but one idle.
Loop parallel_tile_loop(const Stage& s) {
  for (int a : s.leaf)
    if (!s.axes[a].is_reduce && s.axes[a].kind == loopir::ForKind::kSerial && loop_extent(s, a) > 1) return {s.name, a};
  return parallel_loop(s);
}

// A parallel loop of few iterations, fused with the loops inside it until it has enough for the
// threads to share evenly. Two threads sharing 2 iterations (a conv's two 32-channel blocks) each
// take one, and whichever starts late makes the other wait; sharing 112 they claim small chunks,
// and a late thread takes fewer. The inner loop (the rows) goes outside the fused pair, so that
// consecutive kernels give each thread the same band of rows (rows_before_blocks has the why);
// a conv whose weights would not stay in cache keeps its blocks outside (next_outside = false):
//
//   for fo in 0..2 parallel { for y in 0..56 { ... } }   ->   for y.fo.fused in 0..112 parallel { ... }
//
// The next loop joins only when it is data-parallel and serial, when no stage is computed at the
// outer loop (its code between the two loops would be split apart), and when neither loop comes
// from a split with a tail: loop_partition peels a tail off the last iteration of its outer loop,
// which a fused loop no longer has (BERT's 128 rows in tiles of 5: the micro-kernel guarded in
// every iteration, ten times slower).
constexpr int64_t kEnoughParallelIterations = 16;

bool from_split_with_tail(const Stage& s, int a) {
  for (const Relation& r : s.relations)
    if (r.kind == Relation::Kind::kSplit && (r.outer == a || r.inner == a)) {
      const int64_t parent = loop_extent(s, r.parent);
      return r.factor > 0 && parent % r.factor != 0;
    }
  return false;
}

Loop widened_for_threads(Writer& w, Loop l, bool next_outside = true) {
  while (w.parallel_allowed()) {
    const Stage& s = w.stage(l.stage);
    if (loop_extent(s, l.axis) >= kEnoughParallelIterations) return l;
    auto at = std::find(s.leaf.begin(), s.leaf.end(), l.axis);
    if (at == s.leaf.end() || at + 1 == s.leaf.end()) return l;
    const int next = *(at + 1);
    const AxisState& n = s.axes[next];
    if (n.is_reduce || n.kind != loopir::ForKind::kSerial || loop_extent(s, next) <= 1) return l;
    if (from_split_with_tail(s, l.axis) || from_split_with_tail(s, next)) return l;
    for (const Stage& other : w.state().stages)
      if (other.attach == Attach::kAt && other.attach_stage == l.stage && other.attach_axis == l.axis) return l;
    if (next_outside) {
      const Loop n_loop{l.stage, next};
      w.reorder({n_loop, l});
      l = w.fuse(n_loop, l);
    } else {
      l = w.fuse(l, {l.stage, next});
    }
  }
  return l;
}

// Runs the outermost loop(s) of a stage in parallel: one loop, or with knobs.parallel_loops == 2
// the two outermost fused into one (more iterations to share among threads) when both are
// data-parallel serial loops; a loop of few iterations is widened (widened_for_threads).
void parallelize(Writer& w, const std::string& name, const CpuKnobs& knobs, bool tiles = false,
                 bool next_outside = true) {
  const Stage& s = w.stage(name);
  if (knobs.parallel_loops.value_or(1) == 2 && s.leaf.size() >= 3) {
    const AxisState &a = s.axes[s.leaf[0]], &b = s.axes[s.leaf[1]];
    if (!a.is_reduce && !b.is_reduce && a.kind == loopir::ForKind::kSerial && b.kind == loopir::ForKind::kSerial) {
      w.parallel(w.fuse(w.leaf(name, 0), w.leaf(name, 1)));
      return;
    }
  }
  w.parallel(widened_for_threads(w, tiles ? parallel_tile_loop(s) : parallel_loop(s), next_outside));
}

// The bytes of input `name` of stage `s` (0 when it reads no such input).
int64_t input_bytes(const Stage& s, const std::string& name) {
  for (const te::Tensor& in : s.op->inputs)
    if (in->name == name) return shape_numel(in->shape) * static_cast<int64_t>(dtype_size(in->dtype));
  return 0;
}

// The operand of a register-blocked reduction worth packing, or "" (GotoBLAS's packed B panel):
//
//   C[i, j] = sum(A[i, k] * B[k, j], k)     per tile column (x.outer) the K x (tile width) slice of B
//                                           is copied into a contiguous panel, which every row tile
//                                           of that column then streams through in order
//
// Unpacked, each k of the micro-kernel reads B a row further on (N floats apart: a new page every
// k for N >= 1024, so the TLB and the prefetchers lose track), and each row tile reads the whole
// of B again. The operand is the one the vector loads come from: read contiguously along x (its
// last index is x) and not moving with the rows; the reduction has one reduce axis (a GEMM). It
// pays when that operand does not fit in half the L2 cache (the copy is then cheap beside the
// misses it saves) and is read by at least 4 row tiles; the knob `pack` decides instead when set.
std::string packed_operand(const Stage& red, const RegisterTile& t, const CpuKnobs& knobs, const CpuCaches& caches) {
  if (knobs.pack && !*knobs.pack) return "";
  const loopir::Reduce* reduction = red.op->reduction();
  if (!reduction || reduction->axes.size() != 1) return "";
  const auto& axes = red.op->axes;
  const loopir::Var* x = axes.back().var.get();
  const loopir::Var* y = axes[static_cast<size_t>(t.rows_axis)].var.get();
  auto uses = [](const loopir::Expr& e, const loopir::Var* v) {
    return loopir::uses_var(e, [v](const loopir::Var* u) { return u == v; });
  };
  std::string found;
  int candidates = 0;
  loopir::for_each_access(red.op->body, [&](const loopir::Buffer& b, const std::vector<loopir::Expr>& idx, bool) {
    if (idx.empty() || b->name == red.name) return;
    bool moves_with_x = false, moves_with_y = false;
    for (const auto& e : idx) moves_with_x = moves_with_x || uses(e, x), moves_with_y = moves_with_y || uses(e, y);
    if (!moves_with_x) return;
    ++candidates;
    bool contiguous = loopir::as<loopir::Var>(idx.back()) == x;
    for (size_t d = 0; d + 1 < idx.size(); ++d) contiguous = contiguous && !uses(idx[d], x);
    if (contiguous && !moves_with_y) found = b->name;
  });
  if (candidates != 1 || found.empty()) return "";
  if (knobs.pack) return found;
  // Each panel is read once per row tile: a GEMV-like product (a few rows) would copy B to read
  // it once.
  if (axes[static_cast<size_t>(t.rows_axis)].extent < 4 * t.rows) return "";
  return 2 * input_bytes(red, found) > caches.l2_bytes ? found : "";
}

// An operand packed at compile time (transform_layout's matmul_packed: B stored [N/b, K, b], read
// as B[x / b, k, x % b]), with its panel width b; width 0 when the reduction reads none. A tile b
// columns wide turns that read into [tile column, k, lane]: the packed panel a run-time copy would
// make (packed_operand), without the copy. Rows compute one tile column (or one cache panel of
// them, default_panel) after the other, as with a run-time packed panel. BERT's 128 x 768 x 3072 on
// a Zen 1 core: 34.3 GFLOP/s with the run-time copy, 37.5 packed at compile time; 128 x 768 x 768:
// 35.3 -> 37.5.
struct Prepacked {
  std::string name;
  int64_t width = 0;
};

Prepacked prepacked_operand(const Stage& red) {
  const loopir::Reduce* reduction = red.op->reduction();
  if (!reduction || reduction->axes.size() != 1) return {};
  const loopir::Var* x = red.op->axes.back().var.get();
  auto split_of_x = [x](const loopir::Expr& e, loopir::BinaryOp op) -> int64_t {
    const auto* b = loopir::as<loopir::Binary>(e);
    int64_t width = 0;
    if (!b || b->op != op || loopir::as<loopir::Var>(b->a) != x || !loopir::is_const_int(b->b, &width)) return 0;
    return width;
  };
  Prepacked found;
  loopir::for_each_access(red.op->body, [&](const loopir::Buffer& b, const std::vector<loopir::Expr>& idx, bool) {
    if (idx.size() < 2 || b->name == red.name) return;
    const int64_t width = split_of_x(idx.back(), loopir::BinaryOp::kMod);
    if (width > 1 && split_of_x(idx.front(), loopir::BinaryOp::kDiv) == width) found = {b->name, width};
  });
  return found;
}

// The tile columns per cache panel when the knob leaves it open (0: no panel). With a packed
// operand every row tile reads its rows of A from beyond L2 once per tile column; a tile only 16
// floats wide (AVX2's two vectors) makes that twice the stream of AVX-512's 32-wide tile per FMA.
// Panels of 64 columns bring it back under: the panel loop goes outermost, and a row tile's A rows
// (6 x K floats, 24 KB at K = 1024) are read once per panel and from L1 by its other tiles:
//
//   no panel:  for col { pack B[:, col]; for row { tile(row, col) } }          A read N/16 times
//   panel 4:   for panel { pack B[:, 4 cols]; for row { for col in panel { tile } } }   N/64 times
//
// GEMM 1024³ on a Zen 1 core: 33.7 -> 35.0 GFLOP/s (panels of 2: 33.1, of 8: 32.3, where the packed
// panel fills L2). Only while A does not stay in L2 anyway (BERT's 128 x 768 rows measured the same
// or 2 % slower with panels), while the packed panel fits in half the L2 cache, and while there are
// panels enough for the threads (it is the parallel loop). 32-wide tiles measured best without
// (tests/bench/RESULTS.md, sessions 8 and 10), so they keep none.
int64_t default_panel(const Stage& red, const RegisterTile& t, const std::string& packed, const CpuCaches& caches) {
  constexpr int64_t kPanelColumns = 64;
  const int64_t tile_columns = t.vectors * t.lanes;
  if (packed.empty() || tile_columns >= kPanelColumns / 2) return 0;
  const int64_t panel = kPanelColumns / tile_columns;
  // Whole panels of whole tiles only: a tail would make the parallel panel loop a split with a tail.
  const int64_t columns = red.op->axes.back().extent;
  if (columns % (panel * tile_columns) != 0 || columns / (panel * tile_columns) < kEnoughParallelIterations / 2)
    return 0;
  int64_t rows_operand_bytes = 0;
  for (const te::Tensor& in : red.op->inputs)
    if (in->name != packed) rows_operand_bytes += shape_numel(in->shape) * static_cast<int64_t>(dtype_size(in->dtype));
  const int64_t panel_bytes = input_bytes(red, packed) / columns * kPanelColumns;
  return rows_operand_bytes > caches.l2_bytes && 2 * panel_bytes <= caches.l2_bytes ? panel : 0;
}

// The weights of a register-blocked conv, or "": the operand read as vectors along x, moving with
// no output axis but x and the channel block, and with no window axis (in NCHW the input is the
// vector operand, read through y + ry). Convs only (more than one reduce axis).
std::string conv_weights(const Stage& red, const RegisterTile& t) {
  const loopir::Reduce* reduction = red.op->reduction();
  if (!reduction || reduction->axes.size() < 2) return "";
  const auto& axes = red.op->axes;
  const loopir::Var* x = axes.back().var.get();
  const loopir::Var* y = axes[static_cast<size_t>(t.rows_axis)].var.get();
  auto uses = [](const loopir::Expr& e, const loopir::Var* v) {
    return loopir::uses_var(e, [v](const loopir::Var* u) { return u == v; });
  };
  // The window axes: output axes that an index combines with a reduce axis (y + ry).
  std::vector<bool> window(axes.size(), false);
  loopir::for_each_access(red.op->body, [&](const loopir::Buffer&, const std::vector<loopir::Expr>& idx, bool) {
    for (const auto& e : idx) {
      bool with_reduce = false;
      for (const auto& r : reduction->axes) with_reduce = with_reduce || uses(e, r.var.get());
      for (size_t d = 0; d < axes.size(); ++d) window[d] = window[d] || (with_reduce && uses(e, axes[d].var.get()));
    }
  });
  std::string found;
  loopir::for_each_access(red.op->body, [&](const loopir::Buffer& b, const std::vector<loopir::Expr>& idx, bool) {
    bool with_x = false, with_y = false, with_window = false;
    int data_axes = 0;  // the weights move with the output channels only: their block and x
    for (size_t d = 0; d < axes.size(); ++d) {
      bool used = false;
      for (const auto& e : idx) used = used || uses(e, axes[d].var.get());
      data_axes += used && axes[d].extent > 1;
      with_x = with_x || (used && axes[d].var.get() == x);
      with_y = with_y || (used && axes[d].var.get() == y);
      with_window = with_window || (used && window[d]);
    }
    if (with_x && !with_y && !with_window && data_axes <= 2 && b->name != red.name) found = b->name;
  });
  return found;
}

// The operand of a register-blocked conv that streams from beyond the L2 cache, or "": its weights
// when they are over half the L2 cache.
// Each output-channel block's weights then come from L3 or DRAM for the block's first row and from
// L2 for the others; a prefetch of the next block's (core/lower/inject_prefetch.h) fetches them
// while those rows compute. In ResNet-18 at 1 thread, layer4's 3x3 convs (9.4 MB of weights each)
// take 2.3 ms inside the model against 1.5 ms measured alone, about the weights' DRAM time.
// Convs only (more than one reduce axis): a GEMM's large operand is packed (packed_operand).
std::string streamed_operand(const Stage& red, const RegisterTile& t, const CpuKnobs& knobs, const CpuCaches& caches) {
  if (knobs.prefetch && !*knobs.prefetch) return "";
  const std::string found = conv_weights(red, t);
  if (found.empty()) return "";
  return knobs.prefetch || 2 * input_bytes(red, found) > caches.l2_bytes ? found : "";
}

// Whether a register-blocked conv, when its few output-channel blocks are fused with the rows to
// give the threads enough iterations, runs the rows outside the blocks. Each thread then owns a
// band of rows across all channels, which is the band it wrote in the kernel before and reads
// (with one halo row) in the next, from its own cache (core/runtime/thread_pool.h: each thread
// claims its own run of chunks first):
//
//   blocks outside: [b0 y0..55][b1 y0..55]    thread 0: block 0, every row: half its input rows
//                                             were written by thread 1 (the other core's cache)
//   rows outside:   [y0 b0 b1][y1 b0 b1]...   thread 0: rows 0..27 of every block: its own output
//
// ResNet-18 at 2 threads, the sum of its kernels: 16.9 -> 14.1 ms with the thread pool's owned
// runs (tests/bench/RESULTS.md, session 11). Each band then reads every block's weights, so rows go
// outside only while all the weights stay in L2 beside the activations (a quarter of it: layer1's
// 147 KB, not layer3's 2.4 MB), and never when the weights stream (a prefetch hint for the next
// block belongs with blocks outside).
bool rows_before_blocks(const Stage& red, const RegisterTile& t, const CpuCaches& caches, const std::string& streamed) {
  if (!streamed.empty()) return false;
  const std::string weights = conv_weights(red, t);
  return weights.empty() || 4 * input_bytes(red, weights) <= caches.l2_bytes;
}

// The loop of `out` at which a conv whose weights stream (`streamed`) accumulates its whole output
// plane per channel block, with the image rows inside the outer reduce loops; none when that does
// not apply. Per block, the register tile (one image row of a 7-wide layer4 map by 32 channels)
// otherwise runs the whole reduction once per row, reading the block's 590 KB of weights 7 times,
// the first time from DRAM while the FMAs wait:
//
//   tile per row:   for block { for row { acc = 0; for rcb, ry, rx, rci: acc += in * W } }
//   plane per block: for block { plane = 0                       (7x7x32 floats: 6 KB in L1)
//                      for rcb, ry { for row { for rx, rci: plane[row] += in * W } } }
//
// In the second, each (rcb, ry) slice of weights (3x32x32 floats, 12 KB) is read from memory once
// and from L1 by the other rows, and the accumulators go through L1 once per slice. ResNet-18's
// layer4 3x3 convs, in the model (tests/bench/RESULTS.md, session 11): 1.85-1.95 ms against their
// siblings' 2.02-2.10 at 1 thread, 0.96-1.43 against 1.02-1.65 at 2 (alternating profiles).
// Applies when the block loop already has enough parallel iterations (not fused with the rows),
// the tile spans the block's channels, and the plane fits in a quarter of L1. A tile shorter than
// the row (AVX2: 4 of 7 pixels by 16 channels) walks each row in tiles inside the (rcb, ry) loops.
// On a Zen 1 core (512 KB L2), layer4's 3x3 convs alone 7.14 -> 6.48 ms, in ResNet-18 7.33-7.44 ->
// 6.56-6.76 ms.
std::optional<Loop> plane_block_loop(Writer& w, const std::string& out, const std::string& red, const RegisterTile& t,
                                     const CpuKnobs& knobs, const CpuCaches& caches, const std::string& streamed) {
  if (streamed.empty() || knobs.reduce_order || knobs.parallel_loops.value_or(1) == 2) return std::nullopt;
  const Stage& o = w.stage(out);
  const te::Tensor op = w.stage(red).op;
  const auto& reduce_axes = op->reduction()->axes;
  const size_t rank = op->axes.size(), rows_axis = static_cast<size_t>(t.rows_axis);
  if (reduce_axes.size() < 3 || rows_axis + 2 != rank) return std::nullopt;
  // The inner reduce loops must be (rx, rci): the main (longest) reduce axis is the last, or it is
  // not split (NCHW16c on AVX2: 32 channel blocks of 16, the blocks the main axis).
  bool main_is_last = true;
  for (size_t q = 0; q + 1 < reduce_axes.size(); ++q)
    main_is_last = main_is_last && reduce_axes[q].extent <= reduce_axes.back().extent;
  if (!main_is_last && (knobs.k_unroll || knobs.reduce_split)) return std::nullopt;
  if (op->axes[rank - 1].extent != t.vectors * t.lanes) return std::nullopt;
  const Loop block = parallel_tile_loop(o);
  if (loop_extent(o, block.axis) < kEnoughParallelIterations) return std::nullopt;
  if (std::find(o.leaf.begin(), o.leaf.end(), block.axis) == o.leaf.end() || block.axis >= static_cast<int>(rank))
    return std::nullopt;
  int64_t plane = dtype_size(op->dtype);
  for (size_t d = static_cast<size_t>(block.axis) + 1; d < rank; ++d) plane *= op->axes[d].extent;
  if (4 * plane > caches.l1_bytes) return std::nullopt;
  return block;
}

// Hints, in the loop `at` of the reduction, for the next output-channel block of `tensor`: the
// first data-parallel axis its index uses (a conv's output-channel block), as a loop of `out`.
// When that axis was fused with the next to give threads more iterations, the next block is an
// inner extent further on.
void prefetch_next_block(Writer& w, const std::string& out, const std::string& red, const std::string& tensor,
                         const Loop& at) {
  const te::Tensor op = w.stage(red).op;
  int block_axis = -1;
  loopir::for_each_access(op->body, [&](const loopir::Buffer& b, const std::vector<loopir::Expr>& idx, bool) {
    if (b->name != tensor || block_axis >= 0) return;
    for (size_t d = 0; d < op->axes.size() && block_axis < 0; ++d) {
      if (op->axes[d].extent < 2) continue;
      for (const auto& e : idx)
        if (loopir::uses_var(e, [&](const loopir::Var* v) { return v == op->axes[d].var.get(); }))
          block_axis = static_cast<int>(d);
    }
  });
  if (block_axis < 0) return;
  const Stage& o = w.stage(out);
  if (std::find(o.leaf.begin(), o.leaf.end(), block_axis) != o.leaf.end()) {
    w.prefetch(at, tensor, {out, block_axis}, 1);
    return;
  }
  for (const Relation& r : o.relations)
    if (r.kind == Relation::Kind::kFuse && r.outer == block_axis &&
        std::find(o.leaf.begin(), o.leaf.end(), r.fused) != o.leaf.end()) {
      w.prefetch(at, tensor, {out, r.fused}, loop_extent(o, r.inner));
      return;
    }
}

// The reduce loops of a register-blocked reduction, outermost first, as its micro-kernel's
// surroundings: the main axis (the longest) split by knobs.reduce_split and unrolled by k_unroll,
// in knobs.reduce_order among the others (CpuKnobs). `unrolled` receives the loop to unroll.
//
// The main loop is unrolled around the micro-kernel: fewer loop branches and address updates per
// FMA, and more loads in flight. By 4 for a single reduction loop (matmul's k); by 2 for a conv
// whose main axis is its innermost, the input channels within a block (ResNet-18 at 1 thread
// 1.05x -> 0.97x ONNX Runtime's time, its layer4 convs 1.44 -> 1.23 ms; by 4 measured the same,
// at twice the code the studio's edit loop compiles).
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
  const std::optional<Loop> plane_at =
      packed.empty() && !pack_at && prepacked.width == 0
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
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(red->reduction()->axes.size() - 2), rows.begin(), rows.end());
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
  if (const int64_t packed = prepacked_operand(red).width; packed > 0 && packed != t.width() && packed % t.lanes == 0 &&
                                                 packed / t.lanes <= vector_registers(t.lanes) / 4) {
    t.vectors = packed / t.lanes;
    t.rows = rows_for(y_extent, std::min<int64_t>(12, vector_registers(t.lanes) * 3 / 4 / t.vectors));
  }
  if (knobs.tile_rows) t.rows = std::clamp<int64_t>(*knobs.tile_rows, 1, y_extent);
  if (knobs.tile_vectors && *knobs.tile_vectors >= 1 && *knobs.tile_vectors * t.lanes <= x_extent)
    t.vectors = *knobs.tile_vectors;
  return t;
}

// The K block of a GEMM when the knobs leave it open (0: none). Its row tiles each stream a K-long
// run of A's rows per tile column; once A (M x K) no longer fits in L2, every tile column reads
// it again from L3. Blocks of kc keep one M x kc block of A in three quarters of L2, at the price
// of one pass over C per block (k_blocked_gemm.h), which a deep block makes small beside its
// multiply-adds: so only blocks of 256 and more, the largest divisor of K that fits, at least two.
//
//   BERT's FFN down-projection, 128 x 768 x 3072 (A 1.5 MiB), Zen 1 core with 512 KiB L2:
//   kc = 768 (A's block 384 KiB), block loop outermost: 40.8 -> 42.6 GFLOP/s (kc 384: 41.6,
//   1024: 42.4, 1536: 41.5). GEMM 1024³ would need kc <= 96: none (session 10's passes over C).
int64_t default_k_block(const Stage& s, const RegisterTile& t, const CpuCaches& caches) {
  constexpr int64_t kMinBlock = 256;
  const size_t rank = s.op->axes.size();
  const loopir::Reduce* red = s.op->reduction();
  if (!red || red->axes.size() != 1 || static_cast<size_t>(t.rows_axis) != rank - 2) return 0;
  // Measured on float products only (an int8 one sums int8 operands into int32: other sizes).
  for (const te::Tensor& in : s.op->inputs)
    if (in->dtype != DataType::kFloat32) return 0;
  if (s.op->dtype != DataType::kFloat32) return 0;
  const int64_t rows = s.op->axes[rank - 2].extent, k = red->axes[0].extent;
  const int64_t element = dtype_size(s.op->dtype);
  if (rows * k * element <= caches.l2_bytes) return 0;
  // Weights packed at compile time stream in order from memory: measured no better in K blocks
  // (BERT's 128 x 768 x 3072: 37.5 GFLOP/s blocked by 768, 38.0 whole).
  if (prepacked_operand(s).width > 0) return 0;
  for (int64_t kc = k / 2; kc >= kMinBlock; --kc)
    if (k % kc == 0 && kc % 4 == 0 && 4 * rows * kc * element <= 3 * caches.l2_bytes) return kc;
  return 0;
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

// Parallelizes the outermost loop of `name` when it is data-parallel (a scalar reduction has none).
void parallel_outermost(Writer& w, const std::string& name) {
  const Stage& s = w.stage(name);
  if (s.leaf.empty() || s.axes[s.leaf[0]].is_reduce) return;
  w.parallel(widened_for_threads(w, parallel_loop(s)));
}

// The constant m when `body` reads axis variable `v` both as v / m and as v % m (a position
// inside tiles of m), else 0.
int64_t tile_period(const loopir::Expr& body, const loopir::Var* v) {
  // Visits every Binary node (the mutator rebuilds nothing: no hook changes a child).
  struct Finder : loopir::IRMutator {
    const loopir::Var* v = nullptr;
    std::vector<int64_t> divs, mods;
    loopir::Expr mutate_Binary(const loopir::Binary& b, const loopir::Expr& self) override {
      int64_t m = 0;
      if (b.a.get() == v && loopir::is_const_int(b.b, &m) && m > 1) {
        if (b.op == loopir::BinaryOp::kDiv) divs.push_back(m);
        if (b.op == loopir::BinaryOp::kMod) mods.push_back(m);
      }
      return IRMutator::mutate_Binary(b, self);
    }
  } finder;
  finder.v = v;
  finder.mutate(body);
  for (int64_t m : finder.mods)
    if (m <= 8 && std::find(finder.divs.begin(), finder.divs.end(), m) != finder.divs.end()) return m;
  return 0;
}

// The body of `op` with the stages inlined into it substituted at the places it reads them (an
// epilogue's input, through any depth): what its loops really compute.
loopir::Expr effective_body(const ScheduleState& st, const te::Tensor& op) {
  struct Inliner : loopir::IRMutator {
    const ScheduleState* st = nullptr;
    loopir::Expr mutate_Load(const loopir::Load& load, const loopir::Expr& self) override {
      const Stage* p = st->find(load.buffer->name);
      if (!p || p->attach != Attach::kInline || p->op->reduction() || p->op->axes.size() != load.indices.size())
        return IRMutator::mutate_Load(load, self);
      loopir::VarMap at;
      for (size_t d = 0; d < load.indices.size(); ++d) at[p->op->axes[d].var.get()] = mutate(load.indices[d]);
      return mutate(loopir::substitute(p->op->body, at));
    }
  } inliner;
  inliner.st = &st;
  return inliner.mutate(op->body);
}

// A coefficient axis is unrolled whole: at most the 36 positions of a 6x6 Winograd tile.
constexpr int64_t kMaxCoefficientAxis = 36;

// Element-wise outputs that read a small neighbourhood many times (Winograd's transforms) get their
// loops ordered for reuse; the vectorized last axis stays innermost:
//   - an axis no read depends on, V[e, t, c]'s e (it only selects coefficients), moves next to
//     the vector loop and is unrolled: the 36 values of one tile re-read its inputs from L1, not
//     the whole image 36 times, and the selects fold to constants (a zero term disappears);
//   - an axis read as y / m and y % m (Y[.., y, x, ..] over tiles of m) is split by m and its inner
//     loop moved inside and unrolled: the selects on y % m become constants.
//   V[e, t, c]:        e, t, c.o, c.i            ->  t, c.o, e (unrolled), c.i
//   Y[n, f, y, x, fb]: n, f, y, x, fb.o, fb.i    ->  n, f, y.o, x.o, y.i, x.i (unrolled), fb.o, fb.i
void order_for_reuse(Writer& w, const std::string& name) {
  const te::Tensor op = w.stage(name).op;
  const size_t rank = op->axes.size();
  if (rank < 3 || op->reduction()) return;
  const loopir::Expr body = effective_body(w.state(), op);
  std::vector<bool> read(rank, false);
  loopir::for_each_access(body, [&](const loopir::Buffer& b, const std::vector<loopir::Expr>& idx, bool) {
    const Stage* producer = w.state().find(b->name);
    if (producer && producer->attach == Attach::kInline) return;  // its own reads are in `body`
    for (size_t d = 0; d < rank; ++d)
      for (const auto& e : idx)
        if (loopir::uses_var(e, [&](const loopir::Var* v) { return v == op->axes[d].var.get(); })) read[d] = true;
  });
  std::vector<Loop> outer, positions, coefficients;
  for (size_t d = 0; d + 1 < rank; ++d) {
    const Stage& s = w.stage(name);
    if (s.axes[d].kind != loopir::ForKind::kSerial) return;  // already split or bound: leave it
    const loopir::Var* v = op->axes[d].var.get();
    const int64_t m = tile_period(body, v);
    if (!read[d] && loopir::uses_var(body, [v](const loopir::Var* u) { return u == v; }) &&
        op->axes[d].extent > 1 && op->axes[d].extent <= kMaxCoefficientAxis) {
      coefficients.push_back(w.root(name, d));
    } else if (read[d] && m > 0 && op->axes[d].extent > m) {
      auto [o, i] = w.split(w.root(name, d), m);
      outer.push_back(o);
      positions.push_back(i);
    } else {
      outer.push_back(w.root(name, d));
    }
  }
  if ((positions.empty() && coefficients.empty()) || outer.empty()) return;
  // outer, tile positions, the last axis's outer loop, coefficient axes, the vector loop.
  std::vector<Loop> order = outer, last;
  order.insert(order.end(), positions.begin(), positions.end());
  for (int a : w.stage(name).leaf)
    if (std::find_if(order.begin(), order.end(), [&](const Loop& l) { return l.axis == a; }) == order.end() &&
        std::find_if(coefficients.begin(), coefficients.end(), [&](const Loop& l) { return l.axis == a; }) ==
            coefficients.end())
      last.push_back({name, a});
  order.insert(order.end(), last.begin(), last.end() - 1);
  order.insert(order.end(), coefficients.begin(), coefficients.end());
  order.push_back(last.back());
  w.reorder(order);
  for (const Loop& l : positions) w.unroll(l);
  for (const Loop& l : coefficients) w.unroll(l);
}

void schedule_injective(Writer& w, const std::string& name, int64_t lanes, const CpuKnobs& knobs = {}) {
  const te::Tensor op = w.stage(name).op;
  if (op->axes.empty()) return;  // a scalar: one element, nothing to schedule
  const size_t rank = op->axes.size();
  const int64_t last_extent = op->axes.back().extent;
  Loop last = w.root(name, rank - 1);
  const int64_t vector = std::max<int64_t>(1, knobs.vector_split.value_or(lanes));
  if (last_extent > vector && rank > 1)
    w.vectorize(w.split(last, vector).second);
  else if (rank > 1 && last_extent > 1)
    w.vectorize(last);
  order_for_reuse(w, name);
  if (knobs.parallel_loops.value_or(1) == 2 && !w.stage(name).axes[w.stage(name).leaf[0]].is_reduce)
    parallelize(w, name, knobs);
  else
    parallel_outermost(w, name);
}

// A padding stage (its value is a select: inside the border the input, outside a constant) read by
// a reduction. Inlined, every multiply-add of a conv would test the border and guard its load;
// computed once into its own buffer, the conv's inner loop reads it unconditionally. The copy costs
// a write and a read of every padded element, small beside a conv's work, which reads each one
// once per output channel and window position. A pooling reads each about twice (a 3x3 window at
// stride 2: 9 reads per output, 4 inputs per output), so for it the copy is most of the work:
// ResNet-18's 3x3/2 max pool took 0.58 ms with the copy, against ONNX Runtime's 0.20. It stays
// inlined there, its loads guarded by the border test (the codegen reads a safe address where
// the test fails).
constexpr int64_t kReadsWorthACopy = 16;

bool is_padding_for_reduction(const ScheduleState& st, const Stage& s, int64_t reads_worth_a_copy = kReadsWorthACopy) {
  if (!loopir::as<loopir::Select>(s.op->body)) return false;
  const int64_t padded = shape_numel(s.op->shape);
  for (const Stage* c : st.consumers(s.name)) {
    const loopir::Reduce* red = c->op->reduction();
    if (!red) continue;
    int64_t reads = shape_numel(c->op->shape);  // one per output and reduce iteration
    for (const auto& axis : red->axes) reads *= axis.extent;
    if (reads >= reads_worth_a_copy * padded) return true;
  }
  return false;
}

// Whether masked vector loads are cheap on a target with vectors of `lanes` floats. With
// AVX-512's mask registers they are; AVX2's vmaskmovps is not: a depthwise 3x3 144@56 in NCHW,
// its padding inlined so that every vector load along x is masked by the border test, ran at
// 2.9 GFLOP/s on the AVX2 EPYC of session 12, and at 14.7 with the padding copied per channel plane.
bool cheap_masked_loads(int64_t lanes) { return lanes >= 16; }

// Whether padding stage `pad`'s border test varies along its last axis, the one its readers
// vectorize: inlined, each of their vector loads is then a masked load. (In a blocked layout,
// NCHW16c, the test depends on the pixel only, and a vector of channels is loaded whole or not.)
bool border_varies_across_lanes(const Stage& pad) {
  const auto* select = loopir::as<loopir::Select>(pad.op->body);
  if (pad.op->axes.empty()) return false;  // a scalar select (DynamicQuantizeLinear's clamps)
  const loopir::Var* last = pad.op->axes.back().var.get();
  return select && loopir::uses_var(select->cond, [last](const loopir::Var* v) { return v == last; });
}

// A padding stage copied only because masked loads are slow (not for reuse: a depthwise conv or a
// pooling reads each element a few times) is computed per iteration of the kernel output's
// parallel loop, one channel plane with its border (58x58 floats for a 56x56 map: in L1, where the
// reads that follow find it), vectorized along its rows; at the root when the output has no
// parallel loop.
//
//   for c in 0..C parallel {  pad_plane = copy of X[c] with its zero border
//                             for y, x tiles: out += pad_plane[...] * W[c, ...]  (plain loads) }
void pad_per_parallel_iteration(Writer& w, const std::string& pad, const std::string& out, int64_t lanes) {
  const Stage& o = w.stage(out);
  auto parallel = std::find_if(o.leaf.begin(), o.leaf.end(),
                               [&](int axis) { return o.axes[axis].kind == loopir::ForKind::kParallel; });
  if (parallel == o.leaf.end()) return schedule_injective(w, pad, lanes);
  w.compute_at(pad, LoopHandle{out, *parallel});
  const size_t rank = w.stage(pad).op->axes.size();
  const int64_t row = w.stage(pad).op->axes.back().extent;
  if (row > lanes)
    w.vectorize(w.split(w.root(pad, rank - 1), lanes).second);
}

// Row reductions feeding an element-wise output over the same rows (softmax, layer norm,
// log-softmax): every reduction reduces the output's last axis (kept as an extent-1 axis, as
// ONNX's keepdims does, or dropped).
//
//   max[r, 0] = max(x[r, k], k)   sum[r, 0] = sum(exp(x[r, k] - max[r, 0]), k)   out[r, j] = ...
//
// The reductions of the kernel when it has that shape (and at least one), else empty.
std::vector<std::string> row_reductions(const ScheduleState& st, const Stage& out) {
  const Shape& shape = out.op->shape;
  if (out.op->reduction() || shape.size() < 2 || shape.back() < 2) return {};
  std::vector<std::string> reductions;
  for (const Stage& s : st.stages) {
    if (&s == &out) continue;
    if (s.is_output) return {};
    const loopir::Reduce* red = s.op->reduction();
    if (!red) continue;
    Shape rows(shape.begin(), shape.end() - 1), kept = shape;  // the row axes, or with a kept extent-1 axis
    kept.back() = 1;
    if ((s.op->shape != rows && s.op->shape != kept) || red->axes.size() != 1 || red->axes[0].extent != shape.back())
      return {};
    reductions.push_back(s.name);
  }
  return reductions;
}

// Whether a formula calls a function (exp, tanh, ...): worth computing once and storing.
bool calls_a_function(const loopir::Expr& e) {
  struct Finder : loopir::IRVisitor {
    bool found = false;
    bool enter(const loopir::Call&) override { return !(found = true); }
  } finder;
  finder.visit(e);
  return finder.found;
}

// One row at a time, everything about the row inside the row loop, vectorized:
//
//   for rows... (the outermost parallel; 4 rows per iteration, unrolled, so that the rows'
//               dependent chains of vector operations overlap)
//     max_rf[16] = -inf;  for k.outer: max_rf[0..16] = max(max_rf[0..16], x[row, k.outer*16 + 0..16])
//     max_rf_1[0..4] = max over q of max_rf[q*4 + 0..4];  max = max(max_rf_1[0..4])
//                                                       (rfactor twice: partial results, a tree)
//     e[0..128] = exp(x[row, ..] - max)                 (a row-local buffer: exp once per element)
//     sum_rf[16] = 0;     for k.outer: sum_rf[0..16] += e[k.outer*16 + 0..16]
//     sum = sum(sum_rf[0..16])
//     for j.outer: out[row, j.outer*16 + 0..16] = e[..] / sum
//
// The row stays in L1 between the passes. `stages` are the row reductions and the injective
// intermediates kept in row-local buffers (read twice and calling a function), in stage order.
void schedule_row_chain(Writer& w, const std::string& out, const std::vector<std::string>& stages, int64_t lanes) {
  const size_t rank = w.stage(out).op->axes.size();
  const int64_t row_length = w.stage(out).op->shape.back();
  auto vectorize_last = [&](const std::string& name) {
    Loop last = w.root(name, rank - 1);
    w.vectorize(row_length > lanes ? w.split(last, lanes).second : last);
  };
  vectorize_last(out);
  // Rows in groups, unrolled: each row's reductions are chains of dependent vector operations
  // (latency-bound); interleaving independent rows fills the pipeline.
  Loop row = w.root(out, rank - 2);
  const int64_t rows = w.stage(out).op->shape[rank - 2];
  const int64_t group = rows % 4 == 0 ? 4 : rows % 2 == 0 ? 2 : 1;
  if (group > 1) {
    auto [outer, inner] = w.split(row, group);
    w.unroll(inner);
    row = inner;
  }
  w.parallel(parallel_loop(w.stage(out)));
  // Last to first: compute_at wants a stage's other readers already inside the row loop.
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    const std::string& name = *it;
    if (!w.stage(name).op->reduction()) {
      w.compute_at(name, row);
      vectorize_last(name);
      continue;
    }
    // A row shorter than two vectors gains nothing from partial results.
    if (row_length < 2 * lanes) {
      w.compute_at(name, row);
      continue;
    }
    // partial[k.inner, rows...] = reduce(.., k.outer): k.outer outside, k.inner the vector.
    const size_t red_rank = w.stage(name).op->axes.size();
    auto vector_partials = [&](const std::string& partial) {
      std::vector<Loop> order;
      for (size_t d = 1; d <= red_rank; ++d) order.push_back(w.root(partial, d));
      order.push_back(w.reduce_root(partial, 0));
      order.push_back(w.root(partial, 0));
      w.reorder(order);
      w.vectorize(w.root(partial, 0));
    };
    std::string partial = w.rfactor(w.split(w.reduce_root(name, 0), lanes).second);
    vector_partials(partial);
    // The vector of partial results folded to 4, then to 1: two short dependent chains instead
    // of one as long as the vector.
    std::string quarter;
    if (lanes % 4 == 0 && lanes >= 8) {
      quarter = w.rfactor(w.split(w.reduce_root(name, 0), 4).second);
      vector_partials(quarter);
    }
    // Each inside its reader's innermost data-parallel loop (a partial stage's data-parallel axes
    // come after the factored one).
    w.compute_at(name, row);
    if (!quarter.empty()) w.compute_at(quarter, w.root(name, red_rank - 1));
    w.compute_at(partial, quarter.empty() ? w.root(name, red_rank - 1) : w.root(quarter, red_rank));
  }
}

}  // namespace

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t lanes) { return default_cpu_schedule(dag, lanes, {}); }

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t lanes, const CpuKnobs& knobs,
                              const CpuCaches& caches) {
  Schedule out;
  ScheduleState st = initial_state(dag);
  Writer w(st, out);
  w.allow_parallel(worth_parallel(dag));
  std::vector<std::string> names;
  for (auto& s : st.stages) names.push_back(s.name);
  // A kernel of row reductions (softmax, layer norm): its reductions, and the intermediates
  // worth a row-local buffer.
  std::string row_output;
  std::vector<std::string> row_stages;
  for (auto& s : st.stages)
    if (s.is_output && !(row_stages = row_reductions(st, s)).empty()) row_output = s.name;
  if (!row_output.empty()) {
    row_stages.clear();
    for (auto& s : st.stages) {
      if (s.is_output) continue;
      bool row_local = !s.op->reduction() && s.op->shape == st.find(row_output)->op->shape &&
                       st.consumers(s.name).size() >= 2 && calls_a_function(s.op->body);
      if (s.op->reduction() || row_local) row_stages.push_back(s.name);
    }
  }
  std::vector<std::string> materialized, per_plane;
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (s->is_output || s->op->reduction() || st.consumers(n).empty()) continue;
    if (std::find(row_stages.begin(), row_stages.end(), n) != row_stages.end()) continue;
    if (is_padding_for_reduction(st, *s)) {
      materialized.push_back(n);
      continue;
    }
    if (!cheap_masked_loads(lanes) && dag.outputs.size() == 1 && border_varies_across_lanes(*s) &&
        is_padding_for_reduction(st, *s, /*reads_worth_a_copy=*/1)) {
      per_plane.push_back(n);
      continue;
    }
    w.compute_inline(n);
  }
  for (auto& n : materialized) schedule_injective(w, n, lanes);
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output) continue;
    if (s->op->reduction()) {
      schedule_reduction_output(w, n, lanes, knobs, caches);
      continue;
    }
    if (n == row_output) {
      schedule_row_chain(w, n, row_stages, lanes);
      continue;
    }
    // A reduction feeding only this output, with the same shape (conv + bias + relu): register
    // blocked like a reduction output, the epilogue applied as the tile is stored.
    std::string fused_reduction;
    int candidates = 0;
    for (auto& m : names) {
      Stage* r = st.find(m);
      if (r->is_output || !r->op->reduction() || r->attach != Attach::kRoot || r->op->shape != s->op->shape) continue;
      auto readers = st.effective_consumers(m);
      ++candidates;
      if (readers.size() == 1 && readers[0] == s) fused_reduction = m;
    }
    if (candidates == 1 && !fused_reduction.empty()) {
      RegisterTile t = register_tile_for(*s, *st.find(fused_reduction), lanes, knobs);
      if (t.usable) {
        // K blocked, the product is a whole tensor and the epilogue a pass over it (a dense layer's
        // bias); otherwise the epilogue is applied as each register tile is stored.
        if (k_blocked(w, fused_reduction, t, knobs, caches))
          schedule_injective(w, n, lanes, knobs);
        else
          register_blocked(w, n, fused_reduction, t, knobs, caches);
        continue;
      }
    }
    schedule_injective(w, n, lanes, knobs);
    // Otherwise such a reduction is computed per outer iteration.
    for (auto& m : names) {
      Stage* r = st.find(m);
      if (r->is_output || !r->op->reduction() || r->attach != Attach::kRoot || r->op->shape != s->op->shape) continue;
      auto readers = st.effective_consumers(m);
      Stage* o = st.find(n);
      // One row of the output per iteration: the loop just outside the innermost (vector) loop.
      size_t at = o->leaf.size() >= 2 ? o->leaf.size() - 2 : 0;
      if (readers.size() == 1 && readers[0] == o && !o->leaf.empty()) w.compute_at(m, w.leaf(n, at));
    }
  }
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (s->is_output || s->attach != Attach::kRoot || !s->op->reduction()) continue;
    // A K-blocked product has its parallel loop already (k_blocked_gemm).
    if (std::any_of(s->axes.begin(), s->axes.end(),
                    [](const AxisState& a) { return a.kind == loopir::ForKind::kParallel; }))
      continue;
    parallel_outermost(w, n);
  }
  for (auto& n : per_plane) pad_per_parallel_iteration(w, n, dag.outputs[0]->name, lanes);
  return out;
}

namespace {

// Why `dag` is not the int8 GEMM the accelerator's core computes; empty when it is. Two layouts
// (quantize_for_accelerator's gemm_layout):
//   rows   C[i, j]    = Σ_k int32(A[i, k]) · int32(B[k, j])
//   tiled  C[t, i, j] = Σ_k int32(A[i, k]) · int32(B[t, k, j])    B and C as columns of n-wide tiles
std::string why_not_int8_gemm(const te::ComputeDag& dag, int64_t n) {
  if (dag.outputs.size() != 1) return "the kernel has " + std::to_string(dag.outputs.size()) + " outputs, not one";
  const te::Tensor& c = dag.outputs[0];
  const loopir::Reduce* red = c->reduction();
  if (!red) return "'" + c->name + "' is not a reduction";
  if ((c->axes.size() != 2 && c->axes.size() != 3) || red->axes.size() != 1)
    return "'" + c->name + "' is not a matrix product (" + std::to_string(c->axes.size()) + " axes, " +
           std::to_string(red->axes.size()) + " reduction axes)";
  if (c->dtype != DataType::kInt32)
    return "'" + c->name + "' is " + std::string(dtype_name(c->dtype)) + ", not an int32 accumulation";
  if (dag.ops.size() != 3 || c->inputs.size() != 2)
    return "the kernel computes more than one product (" + std::to_string(dag.ops.size()) + " tensors)";
  const bool tiled = c->axes.size() == 3;
  for (const te::Tensor& in : c->inputs)
    if (!in->is_placeholder || in->dtype != DataType::kInt8 || in->shape.size() < 2 ||
        in->shape.size() > c->axes.size())
      return "'" + in->name + "' is not a 2-D int8 input";
  const int64_t k = red->axes[0].extent;
  if (tiled) {
    // One input is the rows [M, K], the other the column tiles [T, K, n].
    const te::Tensor& rows = c->inputs[0]->shape.size() == 2 ? c->inputs[0] : c->inputs[1];
    const te::Tensor& tiles = rows == c->inputs[0] ? c->inputs[1] : c->inputs[0];
    const Shape want_rows{c->shape[1], k}, want_tiles{c->shape[0], k, c->shape[2]};
    if (rows->shape != want_rows || tiles->shape != want_tiles || c->shape[2] != n)
      return "'" + c->name + "' is neither a matrix product nor one of " + std::to_string(n) + "-column tiles";
  }
  const int64_t m = c->shape[c->axes.size() - 2], cols = tiled ? c->shape[0] * n : c->shape[1];
  if (m % n != 0 || cols % n != 0 || k % n != 0)
    return "its extents " + std::to_string(m) + "x" + std::to_string(cols) + "x" + std::to_string(k) +
           " are not multiples of the GEMM core's " + std::to_string(n);
  return {};
}

// The input read with the output's row index (the core's input operand; the other is the
// weight). Read order does not decide it: `cast(A[i, k]) * cast(B[k, j])` may build B's read first.
const te::Tensor& row_operand(const te::Tensor& c) {
  struct RowReads : loopir::IRVisitor {
    const loopir::ExprNode* row = nullptr;
    const loopir::BufferNode* found = nullptr;
    bool enter(const loopir::Load& load) override {
      if (!load.indices.empty() && load.indices[0].get() == row) found = load.buffer.get();
      return true;
    }
  } reads;
  reads.row = c->axes[c->axes.size() - 2].var.get();
  reads.visit(c->reduction()->source);
  return c->inputs[1]->buffer.get() == reads.found ? c->inputs[1] : c->inputs[0];
}

}  // namespace

Schedule default_accel_schedule(const te::ComputeDag& dag, const AccelKnobs& knobs) {
  const int64_t n = knobs.gemm;
  if (std::string why = why_not_int8_gemm(dag, n); !why.empty())
    throw Error("accel: " + why + "; the core computes int32 += int8 x int8 in " + std::to_string(n) + "x" +
                std::to_string(n) + "x" + std::to_string(n) + " blocks");
  const te::Tensor& out = dag.outputs[0];
  Schedule schedule;
  ScheduleState st = initial_state(dag);
  Writer w(st, schedule);
  const std::string c = out->name;
  const te::Tensor& rows_of = row_operand(out);
  const te::Tensor& weights = rows_of == out->inputs[0] ? out->inputs[1] : out->inputs[0];
  const std::string a = w.cache_read(rows_of->name, "accel.inp", c);
  const std::string b = w.cache_read(weights->name, "accel.wgt", c);
  const std::string acc = w.cache_write(c, "accel.acc");
  // One n×n accumulator tile per (column tile, row tile), the row tiles inner: a column of weight
  // tiles (K'×n) stays in accel.wgt while every row tile passes under it, when one copy per virtual
  // thread fits the scratchpad, so the weights cross DRAM once (weight-stationary). The tiled
  // layout has its column tiles as an axis already (C[t, i, j], j < n): only the rows are split.
  const bool tiled = out->axes.size() == 3;
  std::pair<Loop, Loop> rows, cols;
  if (tiled) {
    rows = w.split(w.root(c, 1), n);
    cols = {w.root(c, 0), w.root(c, 2)};
  } else {
    std::tie(rows, cols) = w.tile(w.root(c, 0), w.root(c, 1), n, n);
    w.reorder({cols.first, rows.first});
  }
  // The virtual threads share out the column tiles (each keeps its own weight column), or the row
  // tiles when the columns do not divide.
  const int64_t row_tiles = out->shape[out->axes.size() - 2] / n, v = knobs.vthreads;
  const int64_t column_tiles = tiled ? out->shape[0] : out->shape[1] / n;
  Loop column_loop = cols.first, tile_loop = rows.first;  // a weight column per iteration; an accumulator tile
  int64_t threads = 1;
  if (v > 1 && column_tiles % v == 0 && column_tiles > 1) {
    auto [outer, rest] = w.split(cols.first, column_tiles / v);
    w.vthread(outer);
    column_loop = rest;
    threads = v;
  } else if (v > 1 && row_tiles % v == 0 && row_tiles > 1) {
    auto [outer, rest] = w.split(rows.first, row_tiles / v);
    w.reorder({outer, cols.first, rest});
    w.vthread(outer);
    tile_loop = rest;
    threads = v;
  }
  w.compute_at(acc, tile_loop);
  // Each LOAD brings n·t columns of the reduction (one DRAM request instead of t): the latency of
  // a request is paid once per t GEMMs.
  const int64_t depth = out->reduction()->axes[0].extent, k_tiles = depth / n;
  const bool stationary = threads * depth * n <= knobs.wgt_bytes;
  int64_t t = std::min<int64_t>(knobs.k_tiles, k_tiles);
  while (k_tiles % t != 0) --t;
  auto [k_outer, k_rest] = w.split(w.reduce_root(acc, 0), n * t);
  auto [k_middle, k_inner] = w.split(k_rest, n);
  const size_t row_axis = tiled ? 1 : 0;  // the tiled accumulator's column-tile axis has extent 1
  w.reorder({k_outer, k_middle, w.root(acc, row_axis), w.root(acc, row_axis + 1), k_inner});
  w.compute_at(a, k_outer);
  w.compute_at(b, stationary ? column_loop : k_outer);
  w.tensorize(w.root(acc, row_axis),
              "gemm_" + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n) + "_i8");
  return schedule;
}

}  // namespace tessel::schedule
