#include "core/arith/bounds.h"

#include <algorithm>

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/support/int_math.h"

namespace tessel::arith {
using namespace loopir;

std::optional<Interval> constant_bounds(const Expr& e, const RangeMap& ranges) {
  if (!e) return std::nullopt;
  if (auto* i = as<IntImm>(e)) return Interval{i->value, i->value};
  if (auto* v = as<Var>(e)) {
    auto it = ranges.find(v);
    if (it == ranges.end()) return std::nullopt;
    return it->second;
  }
  if (auto* s = as<Select>(e)) {
    auto t = constant_bounds(s->true_value, ranges), f = constant_bounds(s->false_value, ranges);
    if (!t || !f) return std::nullopt;
    return Interval{std::min(t->lo, f->lo), std::max(t->hi, f->hi)};
  }
  if (auto* c = as<Cast>(e)) {
    if (dtype_is_integer(c->dtype) && dtype_is_integer(c->value->dtype)) return constant_bounds(c->value, ranges);
    return std::nullopt;
  }
  auto* b = as<Binary>(e);
  if (!b) return std::nullopt;
  if (is_comparison(b->op) || is_logical(b->op)) return Interval{0, 1};
  auto x = constant_bounds(b->a, ranges);
  auto y = constant_bounds(b->b, ranges);
  if (b->op == BinaryOp::kMod && y && y->lo == y->hi && y->lo > 0) {
    int64_t c = y->lo;
    if (x && x->lo >= 0 && x->hi < c) return x;
    if (x && floor_div(x->lo, c) == floor_div(x->hi, c))
      return Interval{x->lo - floor_div(x->lo, c) * c, x->hi - floor_div(x->lo, c) * c};
    return Interval{0, c - 1};
  }
  if (!x || !y) return std::nullopt;
  switch (b->op) {
    case BinaryOp::kAdd:
      return Interval{x->lo + y->lo, x->hi + y->hi};
    case BinaryOp::kSub:
      return Interval{x->lo - y->hi, x->hi - y->lo};
    case BinaryOp::kMul: {
      int64_t p[4] = {x->lo * y->lo, x->lo * y->hi, x->hi * y->lo, x->hi * y->hi};
      return Interval{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    case BinaryOp::kDiv:
      if (y->lo == y->hi && y->lo > 0) return Interval{floor_div(x->lo, y->lo), floor_div(x->hi, y->lo)};
      return std::nullopt;
    case BinaryOp::kMin:
      return Interval{std::min(x->lo, y->lo), std::min(x->hi, y->hi)};
    case BinaryOp::kMax:
      return Interval{std::max(x->lo, y->lo), std::max(x->hi, y->hi)};
    default:
      return std::nullopt;
  }
}

namespace {

std::optional<SymbolicInterval> bounds_of(const Expr& e, const RangeMap& ranges) {
  if (!uses_var_in(e, ranges)) return SymbolicInterval{e, e};
  if (auto* v = as<Var>(e)) {
    const Interval& r = ranges.at(v);
    return SymbolicInterval{make_int(r.lo, e->dtype), make_int(r.hi, e->dtype)};
  }
  auto* b = as<Binary>(e);
  if (!b) {
    if (auto iv = constant_bounds(e, ranges))
      return SymbolicInterval{make_int(iv->lo, e->dtype), make_int(iv->hi, e->dtype)};
    return std::nullopt;
  }
  auto x = bounds_of(b->a, ranges);
  auto y = bounds_of(b->b, ranges);
  if (!x || !y) {
    if (auto iv = constant_bounds(e, ranges))
      return SymbolicInterval{make_int(iv->lo, e->dtype), make_int(iv->hi, e->dtype)};
    return std::nullopt;
  }
  int64_t c = 0;
  switch (b->op) {
    case BinaryOp::kAdd:
      return SymbolicInterval{x->lo + y->lo, x->hi + y->hi};
    case BinaryOp::kSub:
      return SymbolicInterval{x->lo - y->hi, x->hi - y->lo};
    case BinaryOp::kMul:
      if (is_const_int(b->b, &c))
        return c >= 0 ? SymbolicInterval{x->lo * c, x->hi * c} : SymbolicInterval{x->hi * c, x->lo * c};
      if (is_const_int(b->a, &c))
        return c >= 0 ? SymbolicInterval{y->lo * c, y->hi * c} : SymbolicInterval{y->hi * c, y->lo * c};
      break;
    case BinaryOp::kDiv:
      if (is_const_int(b->b, &c) && c > 0) return SymbolicInterval{x->lo / c, x->hi / c};
      break;
    case BinaryOp::kMin:
      return SymbolicInterval{min(x->lo, y->lo), min(x->hi, y->hi)};
    case BinaryOp::kMax:
      return SymbolicInterval{max(x->lo, y->lo), max(x->hi, y->hi)};
    default:
      break;
  }
  if (auto iv = constant_bounds(e, ranges))
    return SymbolicInterval{make_int(iv->lo, e->dtype), make_int(iv->hi, e->dtype)};
  return std::nullopt;
}

}  // namespace

bool uses_var_in(const Expr& e, const RangeMap& ranges) {
  return uses_var(e, [&](const Var* v) { return ranges.count(v) != 0; });
}

std::optional<SymbolicInterval> symbolic_bounds(const Expr& e, const RangeMap& ranges) {
  auto r = bounds_of(simplify(e, ranges), ranges);
  if (!r) return std::nullopt;
  return SymbolicInterval{simplify(r->lo), simplify(r->hi)};
}

}  // namespace tessel::arith
