// What keeps the operands of a register-blocked reduction (cpu_register_blocking.cpp) in cache:
// which operand a GEMM packs into contiguous panels at run time, or reads as packed at compile time;
// how many tile columns share one cache panel; which conv weights stream from beyond L2 and are
// prefetched a block ahead, and whether such a conv accumulates a whole output plane per channel
// block; whether a conv's rows go outside its channel blocks; and a GEMM's K block. Each rule
// compares what the operands occupy with the caches the target declares (CpuCaches).
#include <algorithm>

#include "core/loopir/functor.h"
#include "core/schedule/cpu_schedule_parts.h"

namespace tessel::schedule::cpu {

namespace {

// The bytes of input `name` of stage `s` (0 when it reads no such input).
int64_t input_bytes(const Stage& s, const std::string& name) {
  for (const te::Tensor& in : s.op->inputs)
    if (in->name == name) return shape_numel(in->shape) * static_cast<int64_t>(dtype_size(in->dtype));
  return 0;
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

}  // namespace

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
// them, default_panel) after the other, as with a run-time packed panel, and the time the copy
// took at every run is saved (tests/bench/RESULTS.md, session 17).
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
// 64 columns measured best: narrower panels gained nothing, and wider ones make the packed panel
// fill L2 (tests/bench/RESULTS.md, session 14). Only while A does not stay in L2 anyway (then a panel
// saves no reads of A and adds a loop: BERT's 128 x 768 rows), while the packed panel fits in half
// the L2 cache, and while there are panels enough for the threads (it is the parallel loop).
// 32-wide tiles already read A half as often, and panels did not pay there (tests/bench/RESULTS.md,
// sessions 8 and 10), so they keep none.
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

// The operand of a register-blocked conv that streams from beyond the L2 cache, or "": its weights
// when they are over half the L2 cache.
// Each output-channel block's weights then come from L3 or DRAM for the block's first row and from
// L2 for the others; a prefetch of the next block's (core/lower/inject_prefetch.h) fetches them
// while those rows compute. Inside a model, where the kernels before have evicted them, the
// weights' DRAM time otherwise adds to the conv's own: ResNet-18's layer4 3x3 convs (9.4 MB of
// weights each) took that much longer in the model than alone (tests/bench/RESULTS.md, session 10).
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
// Reading its input from its own cache rather than the other core's is what made ResNet-18 scale at
// 2 threads (tests/bench/RESULTS.md, session 11). Each band then reads every block's weights, so rows go
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
// and from L1 by the other rows, and the accumulators go through L1 once per slice: the weights'
// DRAM time is paid once per block instead of once per row (ResNet-18's layer4, on AVX-512 and
// AVX2: tests/bench/RESULTS.md, sessions 11 and 14).
// Applies when the block loop already has enough parallel iterations (not fused with the rows),
// the tile spans the block's channels, and the plane fits in a quarter of L1. A tile shorter than
// the row (AVX2: 4 of 7 pixels by 16 channels) walks each row in tiles inside the (rcb, ry) loops.
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

// The K block of a GEMM when the knobs leave it open (0: none). Its row tiles each stream a K-long
// run of A's rows per tile column; once A (M x K) no longer fits in L2, every tile column reads
// it again from L3. Blocks of kc keep one M x kc block of A in three quarters of L2, at the price
// of one pass over C per block (k_blocked_gemm.h), which a deep block makes small beside its
// multiply-adds: so only blocks of 256 and more, the largest divisor of K that fits, at least two.
//
//   BERT's FFN down-projection, 128 x 768 x 3072 (A 1.5 MiB), with 512 KiB of L2: kc = 768 (A's
//   block 384 KiB), the block loop outermost (the best of the blocks that fit: tests/bench/RESULTS.md,
//   session 16). GEMM 1024³ would need kc <= 96, too shallow to pay for its passes over C
//   (session 10): none.
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
  // Weights packed at compile time stream in order from memory already: K blocks add passes over C
  // and save nothing (tests/bench/RESULTS.md, session 17).
  if (prepacked_operand(s).width > 0) return 0;
  for (int64_t kc = k / 2; kc >= kMinBlock; --kc)
    if (k % kc == 0 && kc % 4 == 0 && 4 * rows * kc * element <= 3 * caches.l2_bytes) return kc;
  return 0;
}

}  // namespace tessel::schedule::cpu
