#include "core/lower/vectorize_loops.h"

#include "core/loopir/functor.h"

namespace tessel::lower {
using namespace loopir;

namespace {

class StraightLineCheck : public IRVisitor {
 public:
  bool ok = true;

 protected:
  bool enter(const For&) override {
    ok = false;
    return false;
  }
  bool enter(const IfThenElse&) override {
    ok = false;
    return false;
  }
  bool enter(const Allocate&) override {
    ok = false;
    return false;
  }
  bool enter(const Barrier&) override {
    ok = false;
    return false;
  }
};

class Vectorizer : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(n, self);
    auto* f = as<For>(s);
    if (f->for_kind != ForKind::kVectorized) return s;
    StraightLineCheck check;
    check.visit(f->body);
    if (is_const_int(f->extent) && check.ok) return s;
    return make_for(f->var, f->min, f->extent, f->body, ForKind::kSerial, {}, f->pragmas);
  }
};

}  // namespace

Func vectorize_loops(const Func& f) {
  Vectorizer v;
  Func out = f;
  out.body = v.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
