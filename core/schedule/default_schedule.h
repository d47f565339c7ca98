#pragma once
// Default CPU schedules, derived from the shape of the computation rather than from op names:
//
//   injective intermediates (bias_add)        compute_inline
//   padding read by a reduction (a select)     computed once into its own buffer (vectorized,
//                                              parallel): the reduction then loads unguarded
//   a reduction output (matmul, conv)          register blocking: cache_write(C, local); C tiled
//                                              rows x (vectors*lanes) over its last axis and the
//                                              innermost axis the vector operand does not depend
//                                              on (matmul i, NCHW conv's channels), the
//                                              local accumulator computed per tile with the
//                                              reduction loops outside an unrolled micro-kernel
//                                              (a lone reduction axis unrolled by 4, rows unrolled,
//                                              vectors unrolled, lanes vectorized), so LLVM keeps
//                                              the accumulators in vector registers; parallel the
//                                              outermost loop. Too narrow for vectors (last axis
//                                              < 4): tiled in place, vector axis innermost.
//                                              A GEMM whose vector operand (B) is over half the
//                                              L2 cache: the tile columns outermost, each packing
//                                              its K x (tile width) slice of B into a contiguous
//                                              panel (cache_read + compute_at at the column loop)
//                                              that every row tile streams through.
//   an injective output reading a reduction    the same register blocking, the output stage in
//   with the same shape (conv + bias + relu)   the role of C: the epilogue is applied as each
//                                              register tile is stored (compute_at)
//   an output over rows, reading reductions    one row per iteration of the row loop (outermost
//   of its last axis (softmax, layer norm)     parallel): the reductions computed there, each as
//                                              vector-wide partial results (rfactor) then one
//                                              horizontal step; an intermediate read twice that
//                                              calls a function (softmax's exp) stored once in a
//                                              row-local buffer; the output vectorized
//   other outputs                              split the last axis for vectors, parallel the first;
//                                              an axis that only picks coefficients (no read
//                                              depends on it) moves inside and is unrolled, an
//                                              axis read as y / m and y % m is split by m and its
//                                              position unrolled (Winograd's transforms:
//                                              order_for_reuse)
//   other reductions                           parallel the first axis
#include <optional>

#include "core/schedule/gpu_schedule.h"  // default_gpu_schedule, for the callers that find it here
#include "core/schedule/schedule.h"

namespace tessel::schedule {

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t vector_lanes = 8);

// The decisions above that a search may take instead of the default's own rule (`tessel tune`,
// core/tune/search_space.h). An unset field keeps the default's choice, so default_cpu_schedule
// with no knobs set is the default schedule. Knobs that do not apply to a kernel are ignored.
struct CpuKnobs {
  std::optional<int64_t> tile_rows;     // register tile: rows (reduction outputs)
  std::optional<int64_t> tile_vectors;  // register tile: vectors of `lanes` along the last axis
  std::optional<int64_t> k_unroll;      // a lone reduction axis split by this and unrolled (1: neither)
  // Second level of tiling: the tile columns (x.outer) split into panels of this many tiles, the
  // panel loop outermost, so one panel of the vector operand stays in cache across all rows (0: none;
  // unset: 64 columns per panel for tiles narrower than 32 floats, when the packed panel fits).
  std::optional<int64_t> panel;
  // GEMM-like reductions: copy the vector operand's K x (tile width) slice into a contiguous panel per
  // column of tiles, the tile columns outermost (unset: when that operand is over half the L2 cache).
  std::optional<bool> pack;
  std::optional<int> parallel_loops;    // 1: the outermost loop in parallel; 2: the two outermost fused
  std::optional<int64_t> vector_split;  // element-wise outputs: the vectorized inner loop's extent
  // Tiling and order of the reduce loops of a register-blocked reduction, around its micro-kernel.
  // The main reduce axis is the longest one (a GEMM's k, a conv's input channels rc; the first of
  // equals); the others are its window (a conv's ry, rx).
  //   reduce_split  the main axis split by this factor into a block loop and its inner part, which
  //                 the k unroll then splits in turn (1: not split)
  //   reduce_order  where the main axis's loops go among the window's (unset: the order the
  //                 tensor expression declares its reduce axes in):
  //       kMainOuter     rc.block, rc.inner, ry, rx
  //       kWindowOuter   ry, rx, rc.block, rc.inner
  //       kSplitAround   rc.block, ry, rx, rc.inner   (the block loop outside the window, its
  //                                                   inner part inside)
  enum class ReduceOrder { kMainOuter, kWindowOuter, kSplitAround };
  std::optional<int64_t> reduce_split;
  std::optional<ReduceOrder> reduce_order;
  // A conv's weights hinted into the L2 cache one output-channel block ahead (unset: when they are
  // over half the L2 cache; see streamed_operand in cpu_operand_caching.cpp).
  std::optional<bool> prefetch;
  // K blocking of a GEMM (one reduce axis, the rows the second-last axis; k_blocked_gemm.h): k in
  // blocks of this many (a divisor of K, two blocks at least), the register tile's sums over one
  // block added into the product (a whole tensor then: an element-wise epilogue such as a dense
  // layer's bias becomes a pass over it), so the packed panel of the vector operand is k_block x
  // (tile width) instead of K x (tile width) (unset: a float product is blocked where A's rows
  // outgrow L2, default_k_block in cpu_operand_caching.cpp; `panel`, `reduce_split` and
  // `parallel_loops` do not apply then). k_block_outer: the block loop outside the tile columns
  // rather than inside each (unset: inside for a k_block the knob sets, outside for the default's).
  std::optional<int64_t> k_block;
  std::optional<bool> k_block_outer;
  bool operator==(const CpuKnobs&) const = default;
};
// The data caches of one core, in bytes, as the target declares them (Target's l1_cache_bytes and
// l2_cache_bytes options; core/compile passes them). The defaults are a common x86 core's.
struct CpuCaches {
  int64_t l1_bytes = 32 * 1024;
  int64_t l2_bytes = 1024 * 1024;
};
Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t vector_lanes, const CpuKnobs& knobs,
                              const CpuCaches& caches = {});

// The default schedule for an accelerator with an n×n×n int8 GEMM core (accel-sim). It applies to
// one kernel shape only, the one the core computes, in either layout quantize_for_accelerator
// gives it:
//
//   C[i, j]    = sum(int32(A[i, k]) * int32(B[k, j]), k)      rows: A, B int8 placeholders
//   C[t, i, j] = sum(int32(A[i, k]) * int32(B[t, k, j]), k)   tiled: B, C columns of n-wide tiles
//                                                             M, N, K multiples of n
//
//   cache_read(A, accel.inp, C)   cache_read(B, accel.wgt, C)   cache_write(C, accel.acc)
//   tile(C.i, C.j, n, n); reorder(j.outer, i.outer)   one n×n accumulator tile per (column tile,
//                                                     row tile); tiled: split(C.i, n), t is the
//                                                     column tile already
//   split(the column tiles) into `vthreads` parts, vthread(the outer part)   (the row tiles when
//                                                                            the columns do not divide)
//   compute_at(C_acc, the row tile loop); split(C_acc.k, n·t); split(k.inner, n)
//   reorder(k.outer, k.inner.outer, i, j, k.inner.inner)
//   compute_at(A_inp, k.outer)                    n×(n·t) input tiles: one LOAD per t GEMMs
//   compute_at(B_wgt, the column tile loop)       a K×n column of weight tiles, loaded once and
//                                                 kept while the row tiles pass (weight-stationary),
//                                                 when one per virtual thread fits wgt_bytes;
//                                                 else at k.outer, (n·t)×n tiles like A's
//   tensorize(C_acc.i, gemm_NxNxN_i8)
//
// The virtual threads interleave two accumulator tiles, so one tile's loads overlap the other's
// GEMMs (the lowering inserts the dependence tokens). Anything else throws Error saying why the
// kernel does not tensorize ("accel: the output is float32, not an int32 accumulation"); the
// compile driver then runs that kernel on the host (core/compile/compiled_model.h).
struct AccelKnobs {
  int64_t gemm = 16;  // the core's n
  int64_t vthreads = 2;
  int64_t k_tiles = 8;             // GEMMs per LOAD of the reduction axis (at most; a divisor of K/n)
  int64_t wgt_bytes = 256 * 1024;  // the weight scratchpad: a column of weight tiles stays there if it fits
};
Schedule default_accel_schedule(const te::ComputeDag& dag, const AccelKnobs& knobs = {});

}  // namespace tessel::schedule
