#include "core/lower/loop_partition.h"

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"

namespace tessel::lower {
using namespace loopir;

namespace {

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (auto* b = as<Binary>(e); b && b->op == BinaryOp::kAnd) {
    conjuncts(b->a, out);
    conjuncts(b->b, out);
  } else {
    out.push_back(e);
  }
}

// Guards inside a loop body, each with the ranges of the loops between the body's top and it.
struct Guard {
  Expr cond;
  arith::RangeMap inner;
};

void collect_guards(const Stmt& s, arith::RangeMap& inner, std::vector<Guard>& out) {
  if (!s) return;
  if (auto* f = as<For>(s)) {
    int64_t mn = 0, ext = 0;
    if (!is_const_int(f->min, &mn) || !is_const_int(f->extent, &ext)) return;
    inner[f->var.get()] = arith::Interval{mn, mn + ext - 1};
    collect_guards(f->body, inner, out);
    inner.erase(f->var.get());
  } else if (auto* i = as<IfThenElse>(s)) {
    if (!i->else_case) {
      std::vector<Expr> cs;
      conjuncts(i->cond, cs);
      for (auto& c : cs) out.push_back(Guard{c, inner});
    }
    collect_guards(i->then_case, inner, out);
  } else if (auto* q = as<Seq>(s)) {
    for (auto& c : q->stmts) collect_guards(c, inner, out);
  } else if (auto* a = as<Allocate>(s)) {
    collect_guards(a->body, inner, out);
  } else if (auto* l = as<LetStmt>(s)) {
    collect_guards(l->body, inner, out);
  }
}

class Partitioner : public IRMutator {
 protected:
  // Top-down: split the outermost loop whose guard allows it first, then look inside each part.
  Stmt mutate_For(const For& n, const Stmt& self) override {
    int64_t mn = 0, ext = 0;
    bool known = is_const_int(n.min, &mn) && is_const_int(n.extent, &ext);
    if (known && ext >= 2 && n.for_kind != ForKind::kThreadBound && n.for_kind != ForKind::kVirtualThread) {
      if (Stmt parts = try_partition(n, mn, ext)) return mutate(parts);
    }
    if (known) outer_[n.var.get()] = arith::Interval{mn, mn + ext - 1};
    Stmt body = mutate(n.body);
    outer_.erase(n.var.get());
    return body == n.body ? self : make_for(n.var, n.min, n.extent, body, n.for_kind, n.thread_tag, n.pragmas);
  }

 private:
  Stmt try_partition(const For& n, int64_t mn, int64_t ext) {
    arith::RangeMap inner;
    std::vector<Guard> guards;
    collect_guards(n.body, inner, guards);
    for (auto& g : guards) {
      if (!uses_var(g.cond, [&](const Var* v) { return v == n.var.get(); })) continue;
      // Largest m such that the guard holds for every iteration in [mn, mn + m): binary search;
      // the guards we split on (index < extent) are monotone in the loop variable.
      auto holds = [&](int64_t m) {
        arith::RangeMap r = g.inner;
        for (auto& [v, iv] : outer_) r[v] = iv;
        r[n.var.get()] = arith::Interval{mn, mn + m - 1};
        return arith::can_prove(g.cond, r);
      };
      if (!holds(1) || holds(ext)) continue;  // never true at the start, or always true (simplify drops it)
      int64_t lo = 1, hi = ext;
      while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (holds(mid))
          lo = mid;
        else
          hi = mid;
      }
      arith::RangeMap main_ranges = outer_;
      main_ranges[n.var.get()] = arith::Interval{mn, mn + lo - 1};
      arith::RangeMap tail_ranges = outer_;
      tail_ranges[n.var.get()] = arith::Interval{mn + lo, mn + ext - 1};
      Stmt main_loop = make_for(n.var, make_int(mn), make_int(lo), arith::simplify(n.body, main_ranges), n.for_kind,
                                n.thread_tag, n.pragmas);
      Stmt tail_loop = make_for(n.var, make_int(mn + lo), make_int(ext - lo), arith::simplify(n.body, tail_ranges),
                                n.for_kind, n.thread_tag, n.pragmas);
      auto empty = [](const Stmt& b) {
        auto* q = as<Seq>(b);
        return q && q->stmts.empty();
      };
      return make_seq({empty(as<For>(main_loop)->body) ? nullptr : main_loop,
                       empty(as<For>(tail_loop)->body) ? nullptr : tail_loop});
    }
    return nullptr;
  }

  arith::RangeMap outer_;
};

}  // namespace

Func partition_loops(const Func& f) {
  Partitioner p;
  Func out = f;
  out.body = p.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
