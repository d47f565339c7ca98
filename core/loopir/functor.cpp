#include "core/loopir/functor.h"

namespace tessel::loopir {

void IRVisitor::visit(const Expr& e) {
  if (!e) return;
  switch (e->kind) {
    case NodeKind::kIntImm:
      enter(*as<IntImm>(e));
      return;
    case NodeKind::kFloatImm:
      enter(*as<FloatImm>(e));
      return;
    case NodeKind::kVar:
      enter(*as<Var>(e));
      return;
    case NodeKind::kBinary: {
      auto* n = as<Binary>(e);
      if (enter(*n)) {
        visit(n->a);
        visit(n->b);
      }
      return;
    }
    case NodeKind::kNot: {
      auto* n = as<Not>(e);
      if (enter(*n)) visit(n->a);
      return;
    }
    case NodeKind::kSelect: {
      auto* n = as<Select>(e);
      if (enter(*n)) {
        visit(n->cond);
        visit(n->true_value);
        visit(n->false_value);
      }
      return;
    }
    case NodeKind::kCast: {
      auto* n = as<Cast>(e);
      if (enter(*n)) visit(n->value);
      return;
    }
    case NodeKind::kLoad: {
      auto* n = as<Load>(e);
      if (enter(*n))
        for (auto& i : n->indices) visit(i);
      return;
    }
    case NodeKind::kCall: {
      auto* n = as<Call>(e);
      if (enter(*n))
        for (auto& a : n->args) visit(a);
      return;
    }
    case NodeKind::kReduce: {
      auto* n = as<Reduce>(e);
      if (enter(*n)) visit(n->source);
      return;
    }
    case NodeKind::kCheck: {
      auto* n = as<Check>(e);
      if (enter(*n)) {
        visit(n->condition);
        visit(n->value);
        visit(n->reported);
      }
      return;
    }
    default:
      return;
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case NodeKind::kFor: {
      auto* n = as<For>(s);
      if (enter(*n)) {
        visit(n->min);
        visit(n->extent);
        visit(n->body);
      }
      return;
    }
    case NodeKind::kStore: {
      auto* n = as<Store>(s);
      if (enter(*n)) {
        for (auto& i : n->indices) visit(i);
        visit(n->value);
      }
      return;
    }
    case NodeKind::kAllocate: {
      auto* n = as<Allocate>(s);
      if (enter(*n)) visit(n->body);
      return;
    }
    case NodeKind::kLetStmt: {
      auto* n = as<LetStmt>(s);
      if (enter(*n)) {
        visit(n->value);
        visit(n->body);
      }
      return;
    }
    case NodeKind::kIfThenElse: {
      auto* n = as<IfThenElse>(s);
      if (enter(*n)) {
        visit(n->cond);
        visit(n->then_case);
        visit(n->else_case);
      }
      return;
    }
    case NodeKind::kSeq: {
      auto* n = as<Seq>(s);
      if (enter(*n))
        for (auto& c : n->stmts) visit(c);
      return;
    }
    case NodeKind::kEvaluate: {
      auto* n = as<Evaluate>(s);
      if (enter(*n)) visit(n->value);
      return;
    }
    case NodeKind::kBarrier:
      enter(*as<Barrier>(s));
      return;
    default:
      return;
  }
}

Expr IRMutator::mutate(const Expr& e) {
  if (!e) return e;
  switch (e->kind) {
#define TESSEL_EXPR(Name) \
  case NodeKind::k##Name: \
    return mutate_##Name(*as<Name>(e), e);
#include "core/loopir/node_kinds.def"
    default:
      return e;
  }
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
#define TESSEL_STMT(Name) \
  case NodeKind::k##Name: \
    return mutate_##Name(*as<Name>(s), s);
#include "core/loopir/node_kinds.def"
    default:
      return s;
  }
}

std::vector<Expr> IRMutator::mutate_all(const std::vector<Expr>& v, bool* changed) {
  std::vector<Expr> out;
  out.reserve(v.size());
  for (auto& e : v) {
    out.push_back(mutate(e));
    if (out.back() != e) *changed = true;
  }
  return out;
}

Expr IRMutator::mutate_IntImm(const IntImm&, const Expr& self) { return self; }
Expr IRMutator::mutate_FloatImm(const FloatImm&, const Expr& self) { return self; }
Expr IRMutator::mutate_Var(const Var&, const Expr& self) { return self; }
Expr IRMutator::mutate_Binary(const Binary& n, const Expr& self) {
  Expr a = mutate(n.a), b = mutate(n.b);
  if (a == n.a && b == n.b) return self;
  return make_binary(n.op, a, b);
}
Expr IRMutator::mutate_Not(const Not& n, const Expr& self) {
  Expr a = mutate(n.a);
  return a == n.a ? self : make_not(a);
}
Expr IRMutator::mutate_Select(const Select& n, const Expr& self) {
  Expr c = mutate(n.cond), t = mutate(n.true_value), f = mutate(n.false_value);
  if (c == n.cond && t == n.true_value && f == n.false_value) return self;
  return make_select(c, t, f);
}
Expr IRMutator::mutate_Cast(const Cast& n, const Expr& self) {
  Expr v = mutate(n.value);
  return v == n.value ? self : make_cast(n.dtype, v);
}
Expr IRMutator::mutate_Load(const Load& n, const Expr& self) {
  bool changed = false;
  auto idx = mutate_all(n.indices, &changed);
  return changed ? make_load(n.buffer, std::move(idx)) : self;
}
Expr IRMutator::mutate_Call(const Call& n, const Expr& self) {
  bool changed = false;
  auto args = mutate_all(n.args, &changed);
  return changed ? make_call(n.name, std::move(args), n.dtype) : self;
}
Expr IRMutator::mutate_Reduce(const Reduce& n, const Expr& self) {
  Expr s = mutate(n.source);
  return s == n.source ? self : make_reduce(n.combiner, s, n.axes);
}
Expr IRMutator::mutate_Check(const Check& n, const Expr& self) {
  Expr c = mutate(n.condition), v = mutate(n.value), r = mutate(n.reported);
  if (c == n.condition && v == n.value && r == n.reported) return self;
  return make_check(c, v, r, n.message);
}

Stmt IRMutator::mutate_For(const For& n, const Stmt& self) {
  Expr mn = mutate(n.min), ext = mutate(n.extent);
  Stmt body = mutate(n.body);
  if (mn == n.min && ext == n.extent && body == n.body) return self;
  return make_for(n.var, mn, ext, body, n.for_kind, n.thread_tag, n.pragmas);
}
Stmt IRMutator::mutate_Store(const Store& n, const Stmt& self) {
  bool changed = false;
  auto idx = mutate_all(n.indices, &changed);
  Expr v = mutate(n.value);
  if (!changed && v == n.value) return self;
  return make_store(n.buffer, std::move(idx), v);
}
Stmt IRMutator::mutate_Allocate(const Allocate& n, const Stmt& self) {
  Stmt body = mutate(n.body);
  return body == n.body ? self : make_allocate(n.buffer, body);
}
Stmt IRMutator::mutate_LetStmt(const LetStmt& n, const Stmt& self) {
  Expr v = mutate(n.value);
  Stmt body = mutate(n.body);
  if (v == n.value && body == n.body) return self;
  return make_let(n.var, v, body);
}
Stmt IRMutator::mutate_IfThenElse(const IfThenElse& n, const Stmt& self) {
  Expr c = mutate(n.cond);
  Stmt t = mutate(n.then_case), e = mutate(n.else_case);
  if (c == n.cond && t == n.then_case && e == n.else_case) return self;
  return make_if(c, t, e);
}
Stmt IRMutator::mutate_Seq(const Seq& n, const Stmt& self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (auto& s : n.stmts) {
    out.push_back(mutate(s));
    if (out.back() != s) changed = true;
  }
  return changed ? make_seq(std::move(out)) : self;
}
Stmt IRMutator::mutate_Evaluate(const Evaluate& n, const Stmt& self) {
  Expr v = mutate(n.value);
  return v == n.value ? self : make_evaluate(v);
}
Stmt IRMutator::mutate_Barrier(const Barrier&, const Stmt& self) { return self; }

namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& m) : map_(m) {}

 protected:
  Expr mutate_Var(const Var& v, const Expr& self) override {
    auto it = map_.find(&v);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

class VarUseFinder : public IRVisitor {
 public:
  explicit VarUseFinder(const std::function<bool(const Var*)>& p) : pred_(p) {}
  bool found = false;

 protected:
  bool enter(const Var& v) override {
    if (pred_(&v)) found = true;
    return true;
  }
  bool enter(const For& f) override {
    if (pred_(f.var.get())) found = true;
    return !found;
  }

 private:
  const std::function<bool(const Var*)>& pred_;
};

class AccessFinder : public IRVisitor {
 public:
  using F = std::function<void(const Buffer&, const std::vector<Expr>&, bool)>;
  explicit AccessFinder(const F& f) : f_(f) {}

 protected:
  bool enter(const Load& l) override {
    f_(l.buffer, l.indices, false);
    return true;
  }
  bool enter(const Store& s) override {
    f_(s.buffer, s.indices, true);
    return true;
  }

 private:
  const F& f_;
};

}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  Substituter s(map);
  return s.mutate(e);
}
Stmt substitute(const Stmt& st, const VarMap& map) {
  if (map.empty()) return st;
  Substituter s(map);
  return s.mutate(st);
}

bool uses_var(const Expr& e, const std::function<bool(const Var*)>& pred) {
  VarUseFinder f(pred);
  f.visit(e);
  return f.found;
}
bool uses_var(const Stmt& s, const std::function<bool(const Var*)>& pred) {
  VarUseFinder f(pred);
  f.visit(s);
  return f.found;
}

void for_each_access(const Stmt& s, const std::function<void(const Buffer&, const std::vector<Expr>&, bool)>& f) {
  AccessFinder a(f);
  a.visit(s);
}
void for_each_access(const Expr& e, const std::function<void(const Buffer&, const std::vector<Expr>&, bool)>& f) {
  AccessFinder a(f);
  a.visit(e);
}

}  // namespace tessel::loopir
