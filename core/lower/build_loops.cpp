#include "core/lower/build_loops.h"

#include <algorithm>
#include <map>

#include "core/arith/bounds.h"
#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/lower/inject_double_buffer.h"
#include "core/lower/inject_prefetch.h"
#include "core/lower/lower_thread_allreduce.h"
#include "core/support/error.h"

namespace tessel::lower {
using namespace loopir;
using schedule::Attach;
using schedule::Relation;
using schedule::ScheduleState;
using schedule::Stage;

namespace {

struct RegionDim {
  Expr min;
  int64_t extent = 0;
};

// Replaces reads of inlined tensors by their formulas.
class Inliner : public IRMutator {
 public:
  explicit Inliner(const std::map<std::string, const Stage*>& inlined) : inlined_(inlined) {}

 protected:
  Expr mutate_Load(const Load& n, const Expr& self) override {
    Expr e = IRMutator::mutate_Load(n, self);
    auto* l = as<Load>(e);
    auto it = inlined_.find(l->buffer->name);
    if (it == inlined_.end()) return e;
    const auto& op = it->second->op;
    VarMap m;
    for (size_t d = 0; d < op->axes.size(); ++d) m[op->axes[d].var.get()] = l->indices[d];
    return mutate(substitute(op->body, m));
  }

 private:
  const std::map<std::string, const Stage*>& inlined_;
};

// Redirects accesses of a tensor to its local allocation, relative to the region's start.
class Relocate : public IRMutator {
 public:
  Relocate(std::string name, Buffer local, std::vector<Expr> mins, Expr buffer_index)
      : name_(std::move(name)), local_(std::move(local)), mins_(std::move(mins)), lead_(std::move(buffer_index)) {}

 protected:
  Expr mutate_Load(const Load& n, const Expr& self) override {
    Expr e = IRMutator::mutate_Load(n, self);
    auto* l = as<Load>(e);
    if (l->buffer->name != name_) return e;
    return make_load(local_, shift(l->indices));
  }
  Stmt mutate_Store(const Store& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Store(n, self);
    auto* st = as<Store>(s);
    if (st->buffer->name != name_) return s;
    return make_store(local_, shift(st->indices), st->value);
  }

 private:
  std::vector<Expr> shift(const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    if (lead_) out.push_back(lead_);
    for (size_t d = 0; d < idx.size(); ++d) out.push_back(arith::simplify(idx[d] - mins_[d]));
    return out;
  }
  std::string name_;
  Buffer local_;
  std::vector<Expr> mins_;
  Expr lead_;
};

// Strides of a stage's storage with its storage_align steps applied (empty: contiguous).
Shape aligned_strides(const Stage& s, const Shape& shape) {
  if (s.align.empty()) return {};
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = d + 1 == shape.size() ? 1 : strides[d + 1] * shape[d + 1];
    for (auto& a : s.align) {
      if (static_cast<size_t>(a.root_axis) != d) continue;
      int64_t k = (strides[d] - a.offset + a.factor - 1) / a.factor;
      strides[d] = std::max<int64_t>(k, 0) * a.factor + a.offset;
      if (strides[d] < strides[d + 1] * shape[d + 1]) strides[d] += a.factor;
    }
  }
  return strides;
}

// The loop variables of a nest with their ranges (loops with constant bounds).
class LoopRanges : public IRVisitor {
 public:
  arith::RangeMap ranges;

 protected:
  bool enter(const For& f) override {
    int64_t lo = 0, extent = 0;
    if (is_const_int(f.min, &lo) && is_const_int(f.extent, &extent))
      ranges[f.var.get()] = arith::Interval{lo, lo + extent - 1};
    return true;
  }
};

class NestBuilder {
 public:
  explicit NestBuilder(const ScheduleState& st) : st_(st) {
    for (auto& s : st.stages)
      if (s.attach == Attach::kInline) inlined_[s.name] = &s;
    Inliner inliner(inlined_);
    for (auto& s : st.stages) {
      if (s.attach == Attach::kInline) continue;
      bodies_[s.name] = inliner.mutate(s.op->body);
      if (s.attach == Attach::kAt) {
        const Stage* target = st.find(s.attach_stage);
        if (!target) throw Error("stage " + s.name + " is computed at unknown stage " + s.attach_stage);
        if (target->attach == Attach::kInline)
          throw Error("stage " + s.name + " is computed at " + target->name + ", which is inlined");
        children_[s.attach_stage].push_back(&s);
      }
    }
  }

  Func build() {
    Func f;
    f.name = st_.dag.name;
    for (auto& t : st_.dag.ops)
      if (t->is_placeholder) f.params.push_back(t->buffer);
    std::vector<Stmt> body;
    std::vector<Buffer> intermediates;
    for (auto& s : st_.stages) {
      if (s.is_output) f.params.push_back(s.op->buffer);
      if (s.attach != Attach::kRoot) continue;
      if (!s.is_output) {
        auto b = s.op->buffer;
        intermediates.push_back(make_buffer(b->name, b->dtype, b->shape, s.scope, aligned_strides(s, b->shape)));
      }
      std::vector<RegionDim> region;
      for (int r = 0; r < s.num_root; ++r) region.push_back(RegionDim{make_int(0), root_extent(s, r)});
      body.push_back(emit_stage(s, region));
    }
    Stmt program = make_seq(std::move(body));
    for (auto it = intermediates.rbegin(); it != intermediates.rend(); ++it) program = make_allocate(*it, program);
    f.body = program;
    return f;
  }

 private:
  static int64_t root_extent(const Stage& s, int r) {
    int spatial = static_cast<int>(s.op->axes.size());
    if (r < spatial) return s.op->axes[r].extent;
    return s.op->reduction()->axes[r - spatial].extent;
  }

  static Expr root_var(const Stage& s, int r) {
    int spatial = static_cast<int>(s.op->axes.size());
    if (r < spatial) return s.op->axes[r].var;
    return s.op->reduction()->axes[r - spatial].var;
  }

  struct StageLoops {
    std::vector<int64_t> extent;                // per axis
    std::vector<VarRef> var;                    // per axis (leaf axes only)
    std::vector<Expr> value;                    // per axis: its value in terms of leaf variables
    std::vector<Expr> index;                    // per root axis: region start + value
    std::vector<std::pair<Expr, bool>> guards;  // condition, involves a reduction axis
  };

  StageLoops make_loops(const Stage& s, const std::vector<RegionDim>& region) {
    StageLoops L;
    size_t n = s.axes.size();
    L.extent.assign(n, 0);
    L.var.assign(n, nullptr);
    L.value.assign(n, nullptr);
    for (int r = 0; r < s.num_root; ++r) L.extent[r] = region[r].extent;
    for (auto& rel : s.relations) {
      if (rel.kind == Relation::Kind::kSplit) {
        int64_t e = L.extent[rel.parent];
        int64_t parts = (e + rel.factor - 1) / rel.factor;
        L.extent[rel.outer] = rel.by_nparts ? rel.factor : parts;
        L.extent[rel.inner] = rel.by_nparts ? parts : rel.factor;
      } else {
        L.extent[rel.fused] = L.extent[rel.outer] * L.extent[rel.inner];
      }
    }
    for (int a : s.leaf) {
      // A loop nested in a consumer's loop of the same name gets the stage's name in front
      // (pad.n inside conv's n), so the printed program is unambiguous.
      const std::string& n = s.axes[a].name;
      bool taken = std::find(enclosing_.begin(), enclosing_.end(), n) != enclosing_.end();
      L.var[a] = make_var(taken ? s.name + "." + n : n);
      L.value[a] = L.var[a];
    }
    for (auto it = s.relations.rbegin(); it != s.relations.rend(); ++it) {
      if (it->kind == Relation::Kind::kSplit) {
        L.value[it->parent] = arith::simplify(L.value[it->outer] * L.extent[it->inner] + L.value[it->inner]);
        if (L.extent[it->outer] * L.extent[it->inner] != L.extent[it->parent])
          L.guards.emplace_back(lt(L.value[it->parent], make_int(L.extent[it->parent])), s.axes[it->parent].is_reduce);
      } else {
        L.value[it->outer] = arith::simplify(L.value[it->fused] / L.extent[it->inner]);
        L.value[it->inner] = arith::simplify(L.value[it->fused] % L.extent[it->inner]);
      }
    }
    int spatial = static_cast<int>(s.op->axes.size());
    for (int r = 0; r < s.num_root; ++r) {
      L.index.push_back(arith::simplify(region[r].min + L.value[r]));
      if (r < spatial && !is_const_int_value(region[r].min, 0)) {
        // A region that starts inside the tensor may still run past its end (split tails of
        // the consumer); the simplifier drops the guard where ranges prove it.
        L.guards.emplace_back(lt(L.index[r], make_int(s.op->shape[r])), false);
      }
    }
    return L;
  }

  Stmt guarded(Stmt body, const StageLoops& L, bool include_reduce) {
    Expr cond;
    for (auto& [g, red] : L.guards) {
      if (red && !include_reduce) continue;
      cond = cond ? logical_and(cond, g) : g;
    }
    return cond ? make_if(cond, body) : body;
  }

  // A tensorized loop carries the intrinsic's name as a pragma; the tensorize pass replaces it.
  Stmt make_loop(const Stage& s, const StageLoops& L, int axis, Stmt body) {
    const auto& ax = s.axes[axis];
    Pragmas pragmas = ax.pragmas;
    if (axis == s.tensorize_axis) pragmas.emplace_back(tensorize_pragma_prefix() + s.tensor_intrinsic, 1);
    // A double-buffered stage computed at this loop: inject_double_buffer pipelines the loop.
    if (auto it = children_.find(s.name); it != children_.end())
      for (auto* c : it->second)
        if (c->double_buffer && c->attach_axis == axis) pragmas.emplace_back(double_buffer_pragma_prefix() + c->name, 1);
    // Prefetch hints in this loop: inject_prefetch turns the pragma into the hints.
    for (const auto& h : s.prefetches)
      if (h.axis == axis) pragmas.emplace_back(prefetch_pragma(h.tensor, h.ahead_var), h.offset);
    return make_for(L.var[axis], make_int(0), make_int(L.extent[axis]), body, ax.kind, ax.thread_tag, pragmas);
  }

  // Region of `child` read by one iteration of `s`'s loop at leaf position `pos`: by `s` itself and
  // by `later`, the nests of the stages computed after `child` at the same loop (softmax's max is
  // read by the sum and by the output, both inside the row loop).
  std::vector<RegionDim> infer_region(const Stage& s, const StageLoops& L, size_t pos, const Stage& child,
                                      const Expr& body, const std::vector<Stmt>& later) {
    arith::RangeMap inner;
    for (size_t q = pos + 1; q < s.leaf.size(); ++q) {
      int a = s.leaf[q];
      inner[L.var[a].get()] = arith::Interval{0, L.extent[a] - 1};
    }
    // A shared buffer serves every thread of the block: relax the consumer's thread loops too,
    // so the region is the block's tile (fetched cooperatively), not one thread's slice.
    if (child.scope == "shared") {
      for (size_t q = 0; q <= pos && q < s.leaf.size(); ++q) {
        int a = s.leaf[q];
        if (s.axes[a].kind == ForKind::kThreadBound && s.axes[a].thread_tag.rfind("threadIdx", 0) == 0)
          inner[L.var[a].get()] = arith::Interval{0, L.extent[a] - 1};
      }
    }
    size_t rank = child.op->shape.size();
    std::vector<std::optional<arith::SymbolicInterval>> hull(rank);
    std::vector<bool> failed(rank, false);
    bool any = false;
    const arith::RangeMap* ranges = &inner;
    auto read = [&](const Buffer& b, const std::vector<Expr>& idx, bool) {
      if (b->name != child.name) return;
      any = true;
      for (size_t d = 0; d < rank; ++d) {
        auto iv = arith::symbolic_bounds(idx[d], *ranges);
        if (!iv) {
          failed[d] = true;
          continue;
        }
        if (!hull[d]) {
          hull[d] = iv;
          continue;
        }
        int64_t dlo = 0, dhi = 0;
        if (is_const_int(arith::simplify(iv->lo - hull[d]->lo), &dlo) &&
            is_const_int(arith::simplify(iv->hi - hull[d]->hi), &dhi)) {
          if (dlo < 0) hull[d]->lo = iv->lo;
          if (dhi > 0) hull[d]->hi = iv->hi;
        } else {
          failed[d] = true;
        }
      }
    };
    for_each_access(body, read);
    for (const Stmt& nest : later) {
      LoopRanges loops;
      loops.ranges = inner;
      loops.visit(nest);
      ranges = &loops.ranges;
      for_each_access(nest, read);
      ranges = &inner;
    }
    if (!any) throw Error("stage " + child.name + " is computed at " + s.name + ", which does not read it");
    std::vector<RegionDim> region;
    for (size_t d = 0; d < rank; ++d) {
      int64_t full = child.op->shape[d];
      int64_t ext = 0;
      if (!failed[d] && hull[d] && is_const_int(arith::simplify(hull[d]->hi - hull[d]->lo + 1), &ext) && ext < full) {
        region.push_back(RegionDim{hull[d]->lo, ext});
      } else {
        region.push_back(RegionDim{make_int(0), full});
      }
    }
    for (int r = static_cast<int>(rank); r < child.num_root; ++r)
      region.push_back(RegionDim{make_int(0), root_extent(child, r)});
    return region;
  }

  // Emits `s`'s nest over `region`, with its children placed at their loops.
  Stmt emit_stage(const Stage& s, const std::vector<RegionDim>& region) {
    for (const auto& h : s.prefetches)
      if (std::find(s.leaf.begin(), s.leaf.end(), h.axis) == s.leaf.end())
        throw Error("prefetch(" + s.name + "." + s.axes[h.axis].name + ", " + h.tensor + ", " + h.ahead + ", " +
                    std::to_string(h.offset) + "): that loop was split or fused after the prefetch step");
    StageLoops L = make_loops(s, region);
    VarMap roots;
    for (int r = 0; r < s.num_root; ++r) roots[static_cast<const Var*>(root_var(s, r).get())] = L.index[r];
    Expr body = substitute(bodies_.at(s.name), roots);
    std::vector<Expr> out_idx(L.index.begin(), L.index.begin() + static_cast<long>(s.op->axes.size()));
    const Buffer& buf = s.op->buffer;

    const std::vector<const Stage*>* kids = nullptr;
    if (auto it = children_.find(s.name); it != children_.end()) kids = &it->second;

    if (auto* red = as<Reduce>(body); red && thread_reduce_position(s) >= 0)
      return emit_cross_thread(s, L, body, *red, out_idx, kids);

    // The innermost statement (update for reductions) and where the reduction loops start.
    Stmt update;
    Stmt init;
    size_t first_reduce = s.leaf.size();
    if (auto* red = as<Reduce>(body)) {
      VarMap m{{red->combiner->lhs.get(), make_load(buf, out_idx)}, {red->combiner->rhs.get(), red->source}};
      update = guarded(make_store(buf, out_idx, substitute(red->combiner->combine, m)), L, true);
      init = guarded(make_store(buf, out_idx, red->combiner->identity), L, false);
      for (size_t q = 0; q < s.leaf.size(); ++q)
        if (s.axes[s.leaf[q]].is_reduce) {
          first_reduce = q;
          break;
        }
    } else {
      update = guarded(make_store(buf, out_idx, body), L, true);
    }

    // Builds loops leaf[from..) around `inner`, attaching children (only when `with_children`).
    auto wrap = [&](size_t from, Stmt inner, bool spatial_only, bool with_children) {
      Stmt cur = inner;
      for (size_t q = s.leaf.size(); q-- > from;) {
        int a = s.leaf[q];
        if (spatial_only && s.axes[a].is_reduce) continue;
        if (with_children && kids) cur = attach_children(s, L, q, body, cur, *kids);
        cur = make_loop(s, L, a, cur);
      }
      return cur;
    };

    if (!init) return wrap(0, update, false, true);
    Stmt inner = make_seq({wrap(first_reduce, init, true, false), wrap(first_reduce, update, false, true)});
    Stmt cur = inner;
    for (size_t q = first_reduce; q-- > 0;) {
      if (kids) cur = attach_children(s, L, q, body, cur, *kids);
      cur = make_loop(s, L, s.leaf[q], cur);
    }
    return cur;
  }

  // The leaf position of the stage's reduction loop bound to threadIdx, or -1 when it has none.
  static int thread_reduce_position(const Stage& s) {
    for (size_t q = 0; q < s.leaf.size(); ++q) {
      const schedule::AxisState& ax = s.axes[s.leaf[q]];
      if (ax.is_reduce && ax.kind == ForKind::kThreadBound) return static_cast<int>(q);
    }
    return -1;
  }

  // A reduction whose threads reduce together (see lower_thread_allreduce.h): each thread's
  // partial result over the other reduction loops in a register, then in its lane of a shared
  // buffer; the lanes combined (the serial loop the pass turns into a tree); the result stored
  // from lane 0.
  //
  //   for k.inner in 0..T bind(threadIdx.x) {
  //     C_partial[0] = 0;  for k.outer { if (guards) C_partial[0] += X[...] }
  //     C_red[k.inner] = C_partial[0]
  //   }
  //   for k.inner in 1..T pragma(thread_allreduce:threadIdx.x=T) { C_red[0] += C_red[k.inner] }
  //   C[...] = C_red[0]
  Stmt emit_cross_thread(const Stage& s, const StageLoops& L, const Expr& body, const Reduce& red,
                         const std::vector<Expr>& out_idx, const std::vector<const Stage*>* kids) {
    const size_t at = static_cast<size_t>(thread_reduce_position(s));
    const int thread_axis = s.leaf[at];
    const std::string& tag = s.axes[thread_axis].thread_tag;
    auto loop_name = [&](size_t q) { return s.name + "." + s.axes[s.leaf[q]].name; };
    for (size_t q = 0; q < s.leaf.size(); ++q) {
      const schedule::AxisState& ax = s.axes[s.leaf[q]];
      if (q < at && ax.is_reduce)
        throw Error("stage " + s.name + ": its reduction loop " + loop_name(at) + " bound to " + tag +
                    " must be its outermost reduction loop (reorder it before " + loop_name(q) + ")");
      if (q > at && ax.kind == ForKind::kThreadBound)
        throw Error("stage " + s.name + ": two of its reduction loops are bound to thread indices (" + loop_name(at) +
                    ", " + loop_name(q) + "); the threads reduce along one");
      if (q > at && !ax.is_reduce)
        throw Error("stage " + s.name + ": the data-parallel loop " + loop_name(q) +
                    " is inside its reduction loops, whose threads reduce together (reorder it outside)");
      if (q < at && ax.kind == ForKind::kThreadBound && ax.thread_tag.rfind("threadIdx", 0) == 0)
        throw Error("stage " + s.name + ": its threads reduce together, inside its loop " + loop_name(q) +
                    " bound to " + ax.thread_tag + " (bind that loop to a block index or leave it serial)");
    }
    if (std::count(enclosing_threads_.begin(), enclosing_threads_.end(), true) > 0)
      throw Error("stage " + s.name + ": its threads reduce together, but it is computed inside a loop bound to " +
                  "threadIdx (compute it at a loop outside the thread loops)");

    const Buffer& buf = s.op->buffer;
    const int64_t threads = L.extent[thread_axis];
    const Buffer partial = make_buffer(s.name + "_partial", buf->dtype, {1}, "local");
    const Buffer lanes = make_buffer(s.name + "_red", buf->dtype, {threads}, "shared");
    auto combine = [&](Expr a, Expr b) {
      return substitute(red.combiner->combine, VarMap{{red.combiner->lhs.get(), a}, {red.combiner->rhs.get(), b}});
    };
    const Expr zero = make_int(0);
    const Expr partial_value = make_load(partial, {zero});

    // One thread's part: the loops inside the thread loop, with the stages computed at them.
    Stmt cur = guarded(make_store(partial, {zero}, combine(partial_value, red.source)), L, true);
    for (size_t q = s.leaf.size(); q-- > at + 1;) {
      if (kids) cur = attach_children(s, L, q, body, cur, *kids);
      cur = make_loop(s, L, s.leaf[q], cur);
    }
    const VarRef& lane = L.var[thread_axis];
    cur = make_allocate(partial, make_seq({make_store(partial, {zero}, red.combiner->identity), cur,
                                           make_store(lanes, {Expr(lane)}, partial_value)}));
    if (kids) cur = attach_children(s, L, at, body, cur, *kids);
    std::vector<Stmt> parts = {make_loop(s, L, thread_axis, cur)};
    if (threads > 1) {
      VarRef r = make_var(lane->name);
      parts.push_back(
          make_for(r, make_int(1), make_int(threads - 1),
                   make_store(lanes, {zero}, combine(make_load(lanes, {zero}), make_load(lanes, {Expr(r)}))),
                   ForKind::kSerial, {}, {{thread_allreduce_pragma_prefix() + tag, threads}}));
    }
    parts.push_back(guarded(make_store(buf, out_idx, make_load(lanes, {zero})), L, false));
    cur = make_allocate(lanes, make_seq(std::move(parts)));
    for (size_t q = at; q-- > 0;) {
      if (kids) cur = attach_children(s, L, q, body, cur, *kids);
      cur = make_loop(s, L, s.leaf[q], cur);
    }
    return cur;
  }

  // A reorder after compute_at can move a reader's loop outside the loop its producer is computed
  // at; the producer would then run after its reader.
  void check_readers_inside(const Stage& s, size_t pos, const Stage& child) const {
    for (const Stage* reader : st_.effective_consumers(child.name))
      for (const Stage* r = reader; r && r->attach == Attach::kAt; r = st_.find(r->attach_stage)) {
        if (r->attach_stage != s.name) continue;
        auto at = std::find(s.leaf.begin(), s.leaf.end(), r->attach_axis);
        if (static_cast<size_t>(at - s.leaf.begin()) < pos)
          throw Error("stage " + child.name + " is computed at " + s.name + "." + s.axes[s.leaf[pos]].name +
                      ", inside the loop " + s.name + "." + s.axes[r->attach_axis].name + " where its reader " +
                      reader->name + " is computed (a reorder after compute_at?)");
        break;
      }
  }

  // Places the children attached at leaf position `pos` in front of `rest` (inside that loop).
  Stmt attach_children(const Stage& s, const StageLoops& L, size_t pos, const Expr& body, Stmt rest,
                       const std::vector<const Stage*>& kids) {
    int axis = s.leaf[pos];
    std::vector<const Stage*> here;
    for (auto* c : kids)
      if (c->attach_axis == axis) here.push_back(c);
    if (here.empty()) return rest;
    std::vector<Stmt> parts;
    std::vector<std::tuple<const Stage*, std::vector<RegionDim>>> regions;
    size_t depth = enclosing_.size();
    for (size_t q = 0; q <= pos; ++q) {
      const schedule::AxisState& ax = s.axes[s.leaf[q]];
      enclosing_.push_back(L.var[s.leaf[q]]->name);
      enclosing_threads_.push_back(ax.kind == ForKind::kThreadBound && ax.thread_tag.rfind("threadIdx", 0) == 0);
    }
    // Last to first: a stage's region covers what the stages after it read.
    std::vector<Stmt> nests(here.size());
    std::vector<std::vector<RegionDim>> child_regions(here.size());
    // Stages computed at loops further in (already built into `rest`) may read a child too: a B
    // panel packed at a column-block loop is read by the register tile computed at the tile loop
    // inside it. Their reads count towards the region, over every loop they run inside.
    bool deeper_kids = false;
    for (auto* c : kids) {
      auto at = std::find(s.leaf.begin(), s.leaf.end(), c->attach_axis);
      if (at == s.leaf.end()) throw Error("stage " + c->name + " is computed at a loop " + s.name + " no longer has");
      deeper_kids = deeper_kids || static_cast<size_t>(at - s.leaf.begin()) > pos;
    }
    for (size_t k = here.size(); k-- > 0;) {
      std::vector<Stmt> later(nests.begin() + static_cast<long>(k) + 1, nests.end());
      if (deeper_kids) later.push_back(rest);
      check_readers_inside(s, pos, *here[k]);
      child_regions[k] = infer_region(s, L, pos, *here[k], body, later);
      nests[k] = emit_stage(*here[k], child_regions[k]);
    }
    for (size_t k = 0; k < here.size(); ++k) {
      regions.emplace_back(here[k], child_regions[k]);
      parts.push_back(nests[k]);
    }
    enclosing_.resize(depth);
    enclosing_threads_.resize(depth);
    parts.push_back(rest);
    Stmt cur = make_seq(std::move(parts));
    for (auto& [c, region] : regions) {
      Shape shape;
      std::vector<Expr> mins;
      for (size_t d = 0; d < c->op->shape.size(); ++d) {
        shape.push_back(region[d].extent);
        mins.push_back(region[d].min);
      }
      Expr lead;
      Shape strides = aligned_strides(*c, shape);
      if (c->double_buffer) {
        int64_t half = strides.empty() ? shape_numel(shape)
                                       : buffer_span(*make_buffer(c->name, c->op->dtype, shape, c->scope, strides));
        if (!strides.empty()) strides.insert(strides.begin(), half);
        shape.insert(shape.begin(), 2);
        lead = L.var[axis] % 2;
      }
      Buffer local = make_buffer(c->name, c->op->dtype, shape, c->scope, strides);
      Relocate relocate(c->name, local, mins, lead);
      cur = relocate.mutate(cur);
      if (!c->double_buffer)
        cur = make_allocate(local, cur);
      else
        double_buffered_.push_back(local);
    }
    return cur;
  }

 public:
  std::vector<Buffer> double_buffered_;

 private:
  const ScheduleState& st_;
  std::map<std::string, const Stage*> inlined_;
  std::map<std::string, Expr> bodies_;
  std::map<std::string, std::vector<const Stage*>> children_;
  std::vector<std::string> enclosing_;   // names of the loops around the stage being emitted
  std::vector<bool> enclosing_threads_;  // per loop of enclosing_: bound to a threadIdx
};

// Double-buffered allocations live around the loop they alternate in: hoist them to the top.
Stmt wrap_allocations(Stmt body, const std::vector<Buffer>& buffers) {
  for (auto it = buffers.rbegin(); it != buffers.rend(); ++it) body = make_allocate(*it, body);
  return body;
}

}  // namespace

Func build_loop_nests(const ScheduleState& state) {
  NestBuilder b(state);
  Func f = b.build();
  f.body = wrap_allocations(f.body, b.double_buffered_);
  return f;
}

}  // namespace tessel::lower
