#include "core/lower/inject_virtual_thread.h"

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"

namespace tessel::lower {
using namespace loopir;

namespace {

class VirtualThreadInjector : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(n, self);
    auto* f = as<For>(s);
    if (f->for_kind != ForKind::kVirtualThread) return s;
    int64_t mn = 0, ext = 0;
    if (!is_const_int(f->min, &mn) || !is_const_int(f->extent, &ext))
      throw Error("virtual thread loop " + f->var->name + " needs a constant extent");
    return interleave(f->var.get(), mn, ext, f->body);
  }

 private:
  bool depends(const Expr& e, const Var* v) {
    return uses_var(e, [&](const Var* x) { return x == v; });
  }

  Stmt interleave(const Var* v, int64_t mn, int64_t ext, const Stmt& body) {
    if (auto* f = as<For>(body);
        f && !depends(f->min, v) && !depends(f->extent, v) && f->for_kind != ForKind::kThreadBound) {
      return make_for(f->var, f->min, f->extent, interleave(v, mn, ext, f->body), f->for_kind, f->thread_tag,
                      f->pragmas);
    }
    if (auto* q = as<Seq>(body)) {
      std::vector<Stmt> parts;
      for (auto& c : q->stmts) parts.push_back(interleave(v, mn, ext, c));
      return make_seq(std::move(parts));
    }
    if (auto* i = as<IfThenElse>(body); i && !depends(i->cond, v)) {
      return make_if(i->cond, interleave(v, mn, ext, i->then_case),
                     i->else_case ? interleave(v, mn, ext, i->else_case) : nullptr);
    }
    // A statement that depends on the thread (or owns storage): one copy per virtual thread.
    std::vector<Stmt> copies;
    for (int64_t k = mn; k < mn + ext; ++k)
      copies.push_back(arith::simplify(substitute(body, VarMap{{v, make_int(k)}})));
    return make_seq(std::move(copies));
  }
};

}  // namespace

Func inject_virtual_threads(const Func& f) {
  VirtualThreadInjector inj;
  Func out = f;
  out.body = inj.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
