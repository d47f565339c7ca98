#include "core/lower/inject_prefetch.h"

#include <map>
#include <set>

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"

namespace tessel::lower {
using namespace loopir;

std::string prefetch_pragma(const std::string& tensor, const std::string& ahead_loop) {
  return prefetch_pragma_prefix() + tensor + ":" + ahead_loop;
}

namespace {

constexpr int64_t kLineBytes = 64;
// The most inner-loop values one access is evaluated at (the unrolled micro-kernel's loops are
// far below this; a larger inner nest keeps only its first values' lines).
constexpr int64_t kMaxPoints = 512;

struct Loop {
  const Var* var;
  int64_t min = 0, extent = 1;
};

// The loops inside a loop body, outermost first.
std::vector<Loop> inner_loops(const Stmt& body) {
  struct Collector : IRVisitor {
    std::vector<Loop> loops;
    bool enter(const For& f) override {
      int64_t mn = 0, ext = 1;
      if (is_const_int(f.min, &mn) && is_const_int(f.extent, &ext)) loops.push_back({f.var.get(), mn, ext});
      return true;
    }
  } c;
  c.visit(body);
  return c.loops;
}

struct Access {
  Buffer buffer;
  Expr index;  // one offset (after storage_flatten)
};

std::vector<Access> loads_of(const Stmt& body, const std::string& tensor) {
  std::vector<Access> out;
  for_each_access(body, [&](const Buffer& b, const std::vector<Expr>& idx, bool is_store) {
    if (!is_store && b->name == tensor && idx.size() == 1) out.push_back({b, idx[0]});
  });
  return out;
}

int64_t element_count(const Buffer& b) {
  int64_t n = 1;
  for (int64_t d : b->shape) n *= d;
  return n;
}

// Every value of the inner loops `index` uses (up to kMaxPoints), as substitutions.
std::vector<VarMap> points_of(const Expr& index, const std::vector<Loop>& loops) {
  std::vector<VarMap> points{VarMap{}};
  for (const Loop& l : loops) {
    if (!uses_var(index, [&](const Var* v) { return v == l.var; })) continue;
    std::vector<VarMap> next;
    for (const VarMap& p : points)
      for (int64_t v = l.min; v < l.min + l.extent && static_cast<int64_t>(next.size()) < kMaxPoints; ++v) {
        VarMap q = p;
        q[l.var] = make_int(v, DataType::kInt64);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

// The hints for one pragma: one per distinct line the loop body reads of `tensor`, at `ahead`
// shifted by `offset`.
std::vector<Stmt> hints(const For& loop, const std::string& tensor, const VarRef& ahead, int64_t offset) {
  const std::vector<Access> accesses = loads_of(loop.body, tensor);
  if (accesses.empty()) return {};
  const std::vector<Loop> loops = inner_loops(loop.body);
  const Buffer& buffer = accesses.front().buffer;
  const int64_t per_line = std::max<int64_t>(1, kLineBytes / static_cast<int64_t>(dtype_size(buffer->dtype)));
  // Offsets from the first access at the inner loops' first values: constants for the affine
  // indices of a micro-kernel.
  VarMap first_values;
  for (const Loop& l : loops) first_values[l.var] = make_int(l.min, DataType::kInt64);
  const Expr base = arith::simplify(substitute(accesses.front().index, first_values));
  std::set<int64_t> lines;
  for (const Access& a : accesses)
    for (const VarMap& p : points_of(a.index, loops)) {
      VarMap at = first_values;
      for (auto& [v, e] : p) at[v] = e;
      int64_t delta = 0;
      if (!is_const_int(arith::simplify(substitute(a.index, at) - base), &delta)) continue;
      lines.insert(delta >= 0 ? delta / per_line : -((-delta + per_line - 1) / per_line));
    }
  const Expr shifted = substitute(base, VarMap{{ahead.get(), Expr(ahead) + offset}});
  const int64_t last = element_count(buffer) - 1;
  std::vector<Stmt> out;
  for (int64_t line : lines) {
    Expr index = arith::simplify(shifted + line * per_line);
    index = make_binary(BinaryOp::kMin, make_binary(BinaryOp::kMax, index, make_int(0)), make_int(last));
    out.push_back(make_evaluate(make_prefetch(make_address_of(make_load(buffer, {index}), buffer->dtype))));
  }
  return out;
}

class PrefetchInjector : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    enclosing_.push_back(n.var);
    Stmt s = IRMutator::mutate_For(n, self);
    auto* f = as<For>(s);
    Pragmas kept;
    std::vector<Stmt> added;
    for (auto& [key, offset] : f->pragmas) {
      if (key.rfind(prefetch_pragma_prefix(), 0) != 0) {
        kept.emplace_back(key, offset);
        continue;
      }
      const std::string rest = key.substr(prefetch_pragma_prefix().size());
      const std::string tensor = rest.substr(0, rest.find(':'));
      const std::string ahead_name = rest.substr(rest.find(':') + 1);
      VarRef ahead;  // the loop itself (a stream: a later iteration of this loop) or one around it
      for (auto it = enclosing_.rbegin(); it != enclosing_.rend() && !ahead; ++it)
        if ((*it)->name == ahead_name) ahead = *it;
      if (!ahead)
        throw Error("prefetch(" + f->var->name + ", " + tensor + ", " + ahead_name + ", " + std::to_string(offset) +
                    "): no loop " + ahead_name + " encloses loop " + f->var->name +
                    " (prefetch ahead along this loop or one outside it)");
      for (Stmt& h : hints(*f, tensor, ahead, offset)) added.push_back(std::move(h));
    }
    enclosing_.pop_back();
    if (kept.size() == f->pragmas.size()) return s;
    added.push_back(f->body);
    return make_for(f->var, f->min, f->extent, make_seq(std::move(added)), f->for_kind, f->thread_tag, kept);
  }

 private:
  std::vector<VarRef> enclosing_;
};

}  // namespace

Func inject_prefetch(const Func& f) {
  Func out = f;
  out.body = PrefetchInjector().mutate(f.body);
  return out;
}

}  // namespace tessel::lower
