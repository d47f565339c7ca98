#include "core/schedule/default_schedule.h"

#include <algorithm>

#include "core/loopir/functor.h"

namespace tessel::schedule {

namespace {

std::string ax(const Stage& s, const std::string& axis) { return s.name + "." + axis; }

// Appends a step and applies it, so later decisions see the resulting axes.
void add(ScheduleState& st, Schedule& out, ScheduleStep step) {
  apply_step(st, step);
  out.steps.push_back(std::move(step));
}

size_t stage_index_of(const ScheduleState& st, const std::string& name) {
  for (size_t i = 0; i < st.stages.size(); ++i)
    if (st.stages[i].name == name) return i;
  return st.stages.size();
}

// The outermost loop worth running in parallel: the first root loop with more than one iteration.
std::string parallel_axis(const Stage& s) {
  for (int a : s.leaf)
    if (a < static_cast<int>(s.op->axes.size()) && s.op->axes[a].extent > 1) return s.axes[a].name;
  return s.axes[s.leaf[0]].name;
}

// The register tile of a reduction whose last two data-parallel axes are (y, x): `rows` of y by
// `vectors` vectors of x. The accumulators (rows x vectors registers of `lanes` floats) must fit
// the 32 vector registers with room for the loaded operands; a tile that divides the extent
// avoids tail loops.
struct RegisterTile {
  int64_t rows = 1, vectors = 1, lanes = 1;  // x tile = vectors * lanes
  int rows_axis = -1;                         // which data-parallel axis the rows run along
  bool usable = false;
};

// Rows of the register tile: the most rows (at least half the register budget) whose tiles
// cover the extent with under 3% wasted rows; otherwise the best-covering count. A tail tile is a
// second copy of the unrolled micro-kernel: compile time, and slower for a short extent.
//   1024 rows, budget 6 -> 6 (170 tiles + a 4-row tail)     56, budget 12 -> 8     28 -> 7
int64_t rows_for(int64_t extent, int64_t budget) {
  if (extent <= budget) return extent;
  int64_t best = budget;
  double best_use = 0;
  for (int64_t r = budget; r >= std::max<int64_t>(1, (budget + 1) / 2); --r) {
    double use = static_cast<double>(extent) / static_cast<double>((extent + r - 1) / r * r);
    if (use >= 0.97) return r;
    if (use > best_use) best = r, best_use = use;
  }
  return best;
}

RegisterTile choose_register_tile(int64_t y_extent, int64_t x_extent, int64_t lanes) {
  RegisterTile t;
  if (x_extent < 4 || lanes < 2) return t;  // too narrow to vectorize: the plain schedule does as well
  t.lanes = std::min(lanes, x_extent);
  t.vectors = 1;
  // About 24 accumulators; the rest of the registers hold one row of loaded vectors and a broadcast.
  // With few rows (a GEMV: 1 x N) the tile widens instead, up to 16 vectors: fewer, longer
  // contiguous streams through the weights, which is what a memory-bound kernel needs.
  const bool few_rows = y_extent < 4;
  for (int64_t v : {16, 8, 4, 2}) {
    if (v > 4 && (!few_rows || v * y_extent > 24)) continue;
    if (x_extent % (v * lanes) == 0) {
      t.vectors = v;
      break;
    }
  }
  const int64_t max_rows = std::min<int64_t>(12, 24 / t.vectors);
  t.rows = rows_for(y_extent, max_rows);
  t.usable = true;
  return t;
}

// Register blocking of one reduction (TVM's CPU matmul recipe), with `out` the stage that holds the
// final values: a cache_write copy of the reduction or an element-wise epilogue of the same shape.
//
//   out:   for lead..., y.outer, x.outer          (outermost data-parallel loop in parallel)
//            red: alloc acc[rows][vectors*lanes]   (small and constant: LLVM keeps it in registers)
//                 for reduce axes..., k.outer         (k outside the micro-kernel)
//                   for k.inner (4, when k is the only reduce axis) unrolled, y unrolled,
//                       x.outer unrolled, x.inner vectorized:
//                     acc[y][x] += ...
//            for y.inner, x.inner vectorized:  out = epilogue(acc)
void register_blocked(ScheduleState& st, Schedule& out, const std::string& out_name, const std::string& red_name,
                      const RegisterTile& t) {
  Stage* o = st.find(out_name);
  size_t rank = o->op->axes.size();
  const auto& y = o->op->axes[static_cast<size_t>(t.rows_axis)];
  const auto& x = o->op->axes[rank - 1];
  std::string yn = y.var->name, xn = x.var->name;
  if (static_cast<size_t>(t.rows_axis) == rank - 2) {
    add(st, out, step("tile", {arg(ax(*o, yn)), arg(ax(*o, xn)), arg(t.rows), arg(t.vectors * t.lanes)}));
  } else {
    // Rows along an axis further out (a NCHW conv's output channels): split both, and move the
    // axes between them outside the tile.
    add(st, out, step("split", {arg(ax(*o, yn)), arg(t.rows)}));
    o = st.find(out_name);
    add(st, out, step("split", {arg(ax(*o, xn)), arg(t.vectors * t.lanes)}));
    o = st.find(out_name);
    std::vector<StepArg> order{arg(ax(*o, yn + ".outer"))};
    for (size_t d = static_cast<size_t>(t.rows_axis) + 1; d + 1 < rank; ++d) order.push_back(arg(ax(*o, o->op->axes[d].var->name)));
    for (const std::string& a : {xn + ".outer", yn + ".inner", xn + ".inner"}) order.push_back(arg(ax(*o, a)));
    add(st, out, step("reorder", order));
  }
  o = st.find(out_name);
  add(st, out, step("vectorize", {arg(ax(*o, xn + ".inner"))}));
  add(st, out, step("compute_at", {arg(red_name), arg(ax(*o, xn + ".outer"))}));
  o = st.find(out_name);
  add(st, out, step("parallel", {arg(ax(*o, parallel_axis(*o)))}));

  Stage* r = st.find(red_name);
  size_t rrank = r->op->axes.size();
  std::string ry = r->op->axes[static_cast<size_t>(t.rows_axis)].var->name, rx = r->op->axes[rrank - 1].var->name;
  std::string vec = rx;
  // A single reduction loop (matmul's k) is unrolled by 4 around the micro-kernel: fewer loop
  // branches and address updates per FMA. A conv's nest of reduction loops already amortizes
  // them, and there the unrolled copies only add compile time (the studio's edit loop pays it).
  const auto& reduce_axes = r->op->reduction()->axes;
  const auto& k_axis = reduce_axes.back();
  std::string k_unrolled;
  if (reduce_axes.size() == 1 && k_axis.extent >= 8 && k_axis.extent % 4 == 0) {
    add(st, out, step("split", {arg(ax(*r, k_axis.var->name)), arg(int64_t{4})}));
    r = st.find(red_name);
    k_unrolled = k_axis.var->name + ".inner";
  }
  std::vector<StepArg> order;
  for (int a : r->leaf)
    if (r->axes[a].is_reduce) order.push_back(arg(ax(*r, r->axes[a].name)));
  order.push_back(arg(ax(*r, ry)));
  if (t.vectors > 1) {
    add(st, out, step("split", {arg(ax(*r, rx)), arg(t.lanes)}));
    r = st.find(red_name);
    order.push_back(arg(ax(*r, rx + ".outer")));
    vec = rx + ".inner";
  }
  order.push_back(arg(ax(*r, vec)));
  add(st, out, step("reorder", order));
  r = st.find(red_name);
  if (!k_unrolled.empty()) add(st, out, step("unroll", {arg(ax(*r, k_unrolled))}));
  if (t.rows > 1) add(st, out, step("unroll", {arg(ax(*r, ry))}));
  if (t.vectors > 1) add(st, out, step("unroll", {arg(ax(*r, rx + ".outer"))}));
  add(st, out, step("vectorize", {arg(ax(*r, vec))}));
}

// The plain schedule: tile the last two axes by the vector width, reduction loops outside the
// tile, accumulate in the output. For shapes too narrow for register blocking.
void schedule_reduction_in_place(ScheduleState& st, Schedule& out, const std::string& name, int64_t lanes) {
  Stage* s = st.find(name);
  auto& op = s->op;
  size_t rank = op->axes.size();
  std::vector<std::string> outer, inner;
  if (rank >= 2) {
    const auto& y = op->axes[rank - 2];
    const auto& x = op->axes[rank - 1];
    int64_t fy = std::min<int64_t>(lanes, y.extent), fx = std::min<int64_t>(lanes, x.extent);
    if (fy > 1 && fx > 1) {
      add(st, out, step("tile", {arg(ax(*s, y.var->name)), arg(ax(*s, x.var->name)), arg(fy), arg(fx)}));
      outer = {y.var->name + ".outer", x.var->name + ".outer"};
      inner = {y.var->name + ".inner", x.var->name + ".inner"};
    }
  }
  s = st.find(name);
  const auto* red = op->reduction();
  std::string k = red->axes[0].var->name;
  std::vector<std::string> order;
  if (red->axes[0].extent >= 8) {
    add(st, out, step("split", {arg(ax(*s, k)), arg(int64_t{4})}));
    s = st.find(name);
  }
  if (!inner.empty()) {
    // leaf: [batch axes..., y.outer, x.outer, y.inner, x.inner, reduce...]  ->
    //       [batch axes..., y.outer, x.outer, reduce..., y.inner, x.inner]
    for (int a : s->leaf)
      if (s->axes[a].is_reduce) order.push_back(s->axes[a].name);
    std::vector<StepArg> args;
    for (auto& o : outer) args.push_back(arg(ax(*s, o)));
    for (auto& r : order) args.push_back(arg(ax(*s, r)));
    for (auto& i : inner) args.push_back(arg(ax(*s, i)));
    add(st, out, step("reorder", args));
    s = st.find(name);
    add(st, out, step("vectorize", {arg(ax(*s, inner[1]))}));
  }
  s = st.find(name);
  add(st, out, step("parallel", {arg(ax(*s, parallel_axis(*s)))}));
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
    for (const auto& e : idx) moves_with_x = moves_with_x || loopir::uses_var(e, [x](const loopir::Var* v) { return v == x; });
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
RegisterTile register_tile_for(const Stage& out, const Stage& red, int64_t lanes) {
  size_t rank = out.op->axes.size();
  if (rank < 2 || red.op->axes.size() != rank) return {};
  int rows_axis = reuse_axis(red);
  RegisterTile t = choose_register_tile(out.op->axes[static_cast<size_t>(rows_axis)].extent, out.op->axes[rank - 1].extent, lanes);
  t.rows_axis = rows_axis;
  return t;
}

// A reduction output: accumulate in a local register tile (cache_write), copy out per tile.
void schedule_reduction_output(ScheduleState& st, Schedule& out, const std::string& name, int64_t lanes) {
  RegisterTile t = register_tile_for(*st.find(name), *st.find(name), lanes);
  if (!t.usable) return schedule_reduction_in_place(st, out, name, lanes);
  add(st, out, step("cache_write", {arg(name), arg("local")}));
  // cache_write inserts the accumulating stage just before `name`, named NAME_local.
  std::string local = st.stages[stage_index_of(st, name) - 1].name;
  register_blocked(st, out, name, local, t);
}

// Parallelizes the outermost loop of `name` when it is data-parallel (a scalar reduction has none).
void parallel_outermost(ScheduleState& st, Schedule& out, const std::string& name) {
  Stage* s = st.find(name);
  if (s->leaf.empty() || s->axes[s->leaf[0]].is_reduce) return;
  add(st, out, step("parallel", {arg(ax(*s, parallel_axis(*s)))}));
}

void schedule_injective(ScheduleState& st, Schedule& out, const std::string& name, int64_t lanes) {
  Stage* s = st.find(name);
  if (s->op->axes.empty()) return;  // a scalar: one element, nothing to schedule
  const auto& last = s->op->axes.back();
  if (last.extent > lanes && s->op->axes.size() > 1) {
    add(st, out, step("split", {arg(ax(*s, last.var->name)), arg(lanes)}));
    s = st.find(name);
    add(st, out, step("vectorize", {arg(ax(*s, last.var->name + ".inner"))}));
  } else if (s->op->axes.size() > 1 && last.extent > 1) {
    add(st, out, step("vectorize", {arg(ax(*s, last.var->name))}));
  }
  parallel_outermost(st, out, name);
}

// A padding stage (its value is a select: inside the border the input, outside a constant) read by
// a reduction. Inlined, every multiply-add of a conv would test the border and guard its load;
// computed once into its own buffer, the conv's inner loop reads it unconditionally. The copy costs
// one pass over the input, small beside the reduction's work.
bool is_padding_for_reduction(const ScheduleState& st, const Stage& s) {
  if (!loopir::as<loopir::Select>(s.op->body)) return false;
  for (const Stage* c : st.consumers(s.name))
    if (c->op->reduction()) return true;
  return false;
}

}  // namespace

Schedule default_cpu_schedule(const te::ComputeDag& dag, int64_t lanes) {
  Schedule out;
  ScheduleState st = initial_state(dag);
  std::vector<std::string> names;
  for (auto& s : st.stages) names.push_back(s.name);
  std::vector<std::string> materialized;
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (s->is_output || s->op->reduction() || st.consumers(n).empty()) continue;
    if (is_padding_for_reduction(st, *s)) {
      materialized.push_back(n);
      continue;
    }
    add(st, out, step("compute_inline", {arg(n)}));
  }
  for (auto& n : materialized) schedule_injective(st, out, n, lanes);
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output) continue;
    if (s->op->reduction()) {
      schedule_reduction_output(st, out, n, lanes);
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
      RegisterTile t = register_tile_for(*s, *st.find(fused_reduction), lanes);
      if (t.usable) {
        register_blocked(st, out, n, fused_reduction, t);
        continue;
      }
    }
    schedule_injective(st, out, n, lanes);
    // Otherwise such a reduction is computed per outer iteration.
    for (auto& m : names) {
      Stage* r = st.find(m);
      if (r->is_output || !r->op->reduction() || r->attach != Attach::kRoot || r->op->shape != s->op->shape) continue;
      auto readers = st.effective_consumers(m);
      Stage* o = st.find(n);
      // One row of the output per iteration: the loop just outside the innermost (vector) loop.
      size_t at = o->leaf.size() >= 2 ? o->leaf.size() - 2 : 0;
      if (readers.size() == 1 && readers[0] == o && !o->leaf.empty())
        add(st, out, step("compute_at", {arg(m), arg(ax(*o, o->axes[o->leaf[at]].name))}));
    }
  }
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (s->is_output || s->attach != Attach::kRoot || !s->op->reduction()) continue;
    parallel_outermost(st, out, n);
  }
  return out;
}

namespace {

void gpu_reduction_output(ScheduleState& st, Schedule& out, const std::string& name, int64_t tile) {
  Stage* s = st.find(name);
  std::vector<std::string> inputs;
  for (auto& in : s->op->inputs) {
    const Stage* producer = st.find(in->name);
    if (!producer || !producer->op->reduction()) inputs.push_back(in->name);
  }
  size_t rank = s->op->axes.size();
  if (rank < 2) return;
  std::string y = s->op->axes[rank - 2].var->name, x = s->op->axes[rank - 1].var->name;
  int64_t fy = std::min<int64_t>(tile, s->op->axes[rank - 2].extent),
          fx = std::min<int64_t>(tile, s->op->axes[rank - 1].extent);
  std::vector<std::string> cached;
  for (auto& in : inputs) {
    add(st, out, step("cache_read", {arg(in), arg("shared"), arg(name)}));
    cached.push_back(st.stages[stage_index_of(st, name) - 1].name);
  }
  s = st.find(name);
  add(st, out, step("tile", {arg(ax(*s, y)), arg(ax(*s, x)), arg(fy), arg(fx)}));
  const auto* red = s->op->reduction();
  std::string k = red->axes[0].var->name;
  bool split_k = red->axes[0].extent >= 8;
  if (split_k) add(st, out, step("split", {arg(ax(*s, k)), arg(int64_t{4})}));
  s = st.find(name);
  // [lead..., y.outer, x.outer, y.inner, x.inner, reductions...] already; fuse the leading axes.
  std::string lead;
  for (size_t d = 0; d + 2 < rank; ++d) {
    std::string a = s->op->axes[d].var->name;
    if (lead.empty()) {
      lead = a;
      continue;
    }
    add(st, out, step("fuse", {arg(ax(*s, lead)), arg(ax(*s, a))}));
    lead = lead + "." + a + ".fused";
    s = st.find(name);
  }
  if (!lead.empty()) add(st, out, step("bind", {arg(ax(*s, lead)), arg("blockIdx.z")}));
  add(st, out, step("bind", {arg(ax(*s, y + ".outer")), arg("blockIdx.y")}));
  add(st, out, step("bind", {arg(ax(*s, x + ".outer")), arg("blockIdx.x")}));
  add(st, out, step("bind", {arg(ax(*s, y + ".inner")), arg("threadIdx.y")}));
  add(st, out, step("bind", {arg(ax(*s, x + ".inner")), arg("threadIdx.x")}));
  std::string at = split_k ? k + ".outer" : k;
  for (auto& c : cached) add(st, out, step("compute_at", {arg(c), arg(ax(*st.find(name), at))}));
}

void gpu_injective(ScheduleState& st, Schedule& out, const std::string& name, int64_t threads) {
  Stage* s = st.find(name);
  std::string fused = s->op->axes[0].var->name;
  for (size_t d = 1; d < s->op->axes.size(); ++d) {
    std::string a = s->op->axes[d].var->name;
    add(st, out, step("fuse", {arg(ax(*s, fused)), arg(ax(*s, a))}));
    fused = fused + "." + a + ".fused";
    s = st.find(name);
  }
  add(st, out, step("split", {arg(ax(*s, fused)), arg(threads)}));
  s = st.find(name);
  add(st, out, step("bind", {arg(ax(*s, fused + ".outer")), arg("blockIdx.x")}));
  add(st, out, step("bind", {arg(ax(*s, fused + ".inner")), arg("threadIdx.x")}));
}

}  // namespace

Schedule default_gpu_schedule(const te::ComputeDag& dag, int64_t tile, int64_t threads) {
  Schedule out;
  ScheduleState st = initial_state(dag);
  std::vector<std::string> names;
  for (auto& s : st.stages) names.push_back(s.name);
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output && !s->op->reduction() && !st.consumers(n).empty())
      add(st, out, step("compute_inline", {arg(n)}));
  }
  for (auto& n : names) {
    Stage* s = st.find(n);
    if (!s->is_output) {
      if (s->op->reduction()) add(st, out, step("bind", {arg(ax(*s, s->axes[s->leaf[0]].name)), arg("blockIdx.x")}));
      continue;
    }
    if (s->op->reduction() && s->op->axes.size() >= 2)
      gpu_reduction_output(st, out, n, tile);
    else if (s->op->reduction())
      add(st, out, step("bind", {arg(ax(*s, s->axes[s->leaf[0]].name)), arg("blockIdx.x")}));
    else
      gpu_injective(st, out, n, threads);
  }
  return out;
}

}  // namespace tessel::schedule
