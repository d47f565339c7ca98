// The default schedule of an accelerator with an int8 GEMM core (default_accel_schedule in
// default_schedule.h): whether a kernel is the product the core computes, and the tiles, virtual
// threads, scratchpad copies and tensorize step that map it onto the core.
#include <tuple>

#include "core/loopir/functor.h"
#include "core/schedule/default_schedule.h"
#include "core/schedule/schedule_writer.h"
#include "core/support/error.h"

namespace tessel::schedule {

namespace {

using Loop = LoopHandle;
using Writer = ScheduleWriter;

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
