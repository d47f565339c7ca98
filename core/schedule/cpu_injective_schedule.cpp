// Element-wise stages (an output, or padding copied into its own buffer): the last axis split for
// vectors, the outermost loop parallel, and, for an output that reads a small neighbourhood many
// times (Winograd's transforms), its loops ordered for reuse.
#include <algorithm>

#include "core/loopir/functor.h"
#include "core/schedule/cpu_schedule_parts.h"

namespace tessel::schedule::cpu {

namespace {

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
    if (!read[d] && loopir::uses_var(body, [v](const loopir::Var* u) { return u == v; }) && op->axes[d].extent > 1 &&
        op->axes[d].extent <= kMaxCoefficientAxis) {
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

}  // namespace

void schedule_injective(Writer& w, const std::string& name, int64_t lanes, const CpuKnobs& knobs) {
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

}  // namespace tessel::schedule::cpu
