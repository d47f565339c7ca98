#include "core/loopir/equal.h"

namespace tessel::loopir {
namespace {

bool same_buffer(const Buffer& a, const Buffer& b) {
  return a == b || (a->name == b->name && a->dtype == b->dtype && a->shape == b->shape && a->scope == b->scope &&
                    a->strides == b->strides);
}

bool expr_equal(const Expr& a, const Expr& b, bool by_identity);

bool all_equal(const std::vector<Expr>& a, const std::vector<Expr>& b, bool by_identity = false) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!expr_equal(a[i], b[i], by_identity)) return false;
  return true;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) { return expr_equal(a, b, false); }
bool same_value(const Expr& a, const Expr& b) { return expr_equal(a, b, true); }

namespace {

bool expr_equal(const Expr& a, const Expr& b, bool by_identity) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case NodeKind::kIntImm:
      return as<IntImm>(a)->value == as<IntImm>(b)->value;
    case NodeKind::kFloatImm:
      return as<FloatImm>(a)->value == as<FloatImm>(b)->value;
    case NodeKind::kVar:
      return !by_identity && as<Var>(a)->name == as<Var>(b)->name;
    case NodeKind::kBinary: {
      auto *x = as<Binary>(a), *y = as<Binary>(b);
      return x->op == y->op && expr_equal(x->a, y->a, by_identity) && expr_equal(x->b, y->b, by_identity);
    }
    case NodeKind::kNot:
      return expr_equal(as<Not>(a)->a, as<Not>(b)->a, by_identity);
    case NodeKind::kSelect: {
      auto *x = as<Select>(a), *y = as<Select>(b);
      return expr_equal(x->cond, y->cond, by_identity) && expr_equal(x->true_value, y->true_value, by_identity) &&
             expr_equal(x->false_value, y->false_value, by_identity);
    }
    case NodeKind::kCast:
      return expr_equal(as<Cast>(a)->value, as<Cast>(b)->value, by_identity);
    case NodeKind::kLoad: {
      auto *x = as<Load>(a), *y = as<Load>(b);
      return same_buffer(x->buffer, y->buffer) && all_equal(x->indices, y->indices, by_identity);
    }
    case NodeKind::kCall: {
      auto *x = as<Call>(a), *y = as<Call>(b);
      return x->name == y->name && all_equal(x->args, y->args, by_identity);
    }
    case NodeKind::kReduce: {
      auto *x = as<Reduce>(a), *y = as<Reduce>(b);
      if (x->combiner->name != y->combiner->name || x->axes.size() != y->axes.size()) return false;
      for (size_t i = 0; i < x->axes.size(); ++i)
        if (x->axes[i].var->name != y->axes[i].var->name || x->axes[i].extent != y->axes[i].extent) return false;
      return expr_equal(x->source, y->source, by_identity);
    }
    case NodeKind::kCheck: {
      auto *x = as<Check>(a), *y = as<Check>(b);
      return x->message == y->message && expr_equal(x->condition, y->condition, by_identity) &&
             expr_equal(x->value, y->value, by_identity) && expr_equal(x->reported, y->reported, by_identity);
    }
    default:
      return false;
  }
}

}  // namespace

bool structural_equal(const Stmt& a, const Stmt& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case NodeKind::kFor: {
      auto *x = as<For>(a), *y = as<For>(b);
      return x->var->name == y->var->name && x->for_kind == y->for_kind && x->thread_tag == y->thread_tag &&
             x->pragmas == y->pragmas && structural_equal(x->min, y->min) && structural_equal(x->extent, y->extent) &&
             structural_equal(x->body, y->body);
    }
    case NodeKind::kStore: {
      auto *x = as<Store>(a), *y = as<Store>(b);
      return same_buffer(x->buffer, y->buffer) && all_equal(x->indices, y->indices) &&
             structural_equal(x->value, y->value);
    }
    case NodeKind::kAllocate: {
      auto *x = as<Allocate>(a), *y = as<Allocate>(b);
      return same_buffer(x->buffer, y->buffer) && structural_equal(x->body, y->body);
    }
    case NodeKind::kLetStmt: {
      auto *x = as<LetStmt>(a), *y = as<LetStmt>(b);
      return x->var->name == y->var->name && structural_equal(x->value, y->value) && structural_equal(x->body, y->body);
    }
    case NodeKind::kIfThenElse: {
      auto *x = as<IfThenElse>(a), *y = as<IfThenElse>(b);
      return structural_equal(x->cond, y->cond) && structural_equal(x->then_case, y->then_case) &&
             structural_equal(x->else_case, y->else_case);
    }
    case NodeKind::kSeq: {
      auto *x = as<Seq>(a), *y = as<Seq>(b);
      if (x->stmts.size() != y->stmts.size()) return false;
      for (size_t i = 0; i < x->stmts.size(); ++i)
        if (!structural_equal(x->stmts[i], y->stmts[i])) return false;
      return true;
    }
    case NodeKind::kEvaluate:
      return structural_equal(as<Evaluate>(a)->value, as<Evaluate>(b)->value);
    case NodeKind::kBarrier:
      return as<Barrier>(a)->scope == as<Barrier>(b)->scope;
    default:
      return false;
  }
}

}  // namespace tessel::loopir
