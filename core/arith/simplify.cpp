#include "core/arith/simplify.h"

#include <cmath>
#include <numeric>

#include "core/loopir/equal.h"
#include "core/loopir/functor.h"
#include "core/support/int_math.h"

namespace tessel::arith {
using namespace loopir;

namespace {

bool is_int_type(DataType t) { return dtype_is_integer(t); }

// sum(coefficient * term) + constant over integers; terms are simplified non-linear expressions.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void add_term(const Expr& t, int64_t c) {
    if (c == 0) return;
    for (auto& [term, coeff] : terms) {
      if (term == t || same_value(term, t)) {
        coeff += c;
        return;
      }
    }
    terms.emplace_back(t, c);
  }
  void add(const Expr& e, int64_t scale) {
    int64_t v = 0;
    if (is_const_int(e, &v)) {
      constant += scale * v;
      return;
    }
    if (auto* b = as<Binary>(e)) {
      if (b->op == BinaryOp::kAdd) {
        add(b->a, scale);
        add(b->b, scale);
        return;
      }
      if (b->op == BinaryOp::kSub) {
        add(b->a, scale);
        add(b->b, -scale);
        return;
      }
      if (b->op == BinaryOp::kMul) {
        if (is_const_int(b->b, &v)) {
          add(b->a, scale * v);
          return;
        }
        if (is_const_int(b->a, &v)) {
          add(b->b, scale * v);
          return;
        }
      }
    }
    add_term(e, scale);
  }
};

LinearForm linear_form(const Expr& e) {
  LinearForm f;
  f.add(e, 1);
  return f;
}

Expr scaled(const Expr& t, int64_t c, DataType type) {
  return c == 1 ? t : make_binary(BinaryOp::kMul, t, make_int(c, type));
}

// Positive terms first (so the text reads "a*8 + b - c"), then the constant.
Expr rebuild(const LinearForm& f, DataType type) {
  Expr acc;
  bool any_positive = false;
  for (auto& [t, c] : f.terms) any_positive = any_positive || c > 0;
  bool constant_first = !any_positive && !f.terms.empty();  // "10 - y" rather than "y * -1 + 10"
  if (constant_first) acc = make_int(f.constant, type);
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& [t, c] : f.terms) {
      if (c == 0 || (pass == 0) != (c > 0)) continue;
      if (!acc)
        acc = c > 0 ? scaled(t, c, type) : make_binary(BinaryOp::kMul, t, make_int(c, type));
      else if (c > 0)
        acc = make_binary(BinaryOp::kAdd, acc, scaled(t, c, type));
      else
        acc = make_binary(BinaryOp::kSub, acc, scaled(t, -c, type));
    }
  }
  if (!acc) return make_int(f.constant, type);
  if (constant_first) return acc;
  if (f.constant > 0) acc = make_binary(BinaryOp::kAdd, acc, make_int(f.constant, type));
  if (f.constant < 0) acc = make_binary(BinaryOp::kSub, acc, make_int(-f.constant, type));
  return acc;
}

Expr bool_const(bool v) { return make_int(v ? 1 : 0, DataType::kBool); }

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(RangeMap ranges) : ranges_(std::move(ranges)) {}

  Expr keep_identity(const Expr& result, const Expr& self) {
    return (result == self || same_value(result, self)) ? self : result;
  }

 protected:
  Expr mutate_Binary(const Binary& n, const Expr& self) override {
    Expr a = mutate(n.a), b = mutate(n.b);
    return keep_identity(simplify_binary(n.op, a, b, n.dtype), self);
  }

  Expr mutate_Not(const Not& n, const Expr& self) override {
    Expr a = mutate(n.a);
    int64_t v = 0;
    if (is_const_int(a, &v)) return bool_const(v == 0);
    return a == n.a ? self : make_not(a);
  }

  Expr mutate_Select(const Select& n, const Expr& self) override {
    Expr c = mutate(n.cond), t = mutate(n.true_value), f = mutate(n.false_value);
    int64_t v = 0;
    if (is_const_int(c, &v)) return v ? t : f;
    if (same_value(t, f)) return t;
    if (c == n.cond && t == n.true_value && f == n.false_value) return self;
    return make_select(c, t, f);
  }

  Expr mutate_Cast(const Cast& n, const Expr& self) override {
    Expr v = mutate(n.value);
    if (v->dtype == n.dtype) return v;
    if (auto* i = as<IntImm>(v)) return make_const(n.dtype, static_cast<double>(i->value));
    if (auto* f = as<FloatImm>(v)) {
      if (dtype_is_float(n.dtype))
        return make_float(n.dtype == DataType::kFloat32 ? static_cast<float>(f->value) : f->value, n.dtype);
      return make_const(n.dtype, std::trunc(f->value));
    }
    return v == n.value ? self : make_cast(n.dtype, v);
  }

  Stmt mutate_For(const For& n, const Stmt& self) override {
    Expr mn = mutate(n.min), ext = mutate(n.extent);
    int64_t lo = 0, e = 0;
    bool known = is_const_int(mn, &lo) && is_const_int(ext, &e);
    if (known && e <= 0) return make_seq({});
    if (known && e == 1 && n.for_kind != ForKind::kThreadBound) {
      VarMap m{{n.var.get(), mn}};
      return mutate(substitute(n.body, m));
    }
    std::optional<Interval> saved;
    if (auto it = ranges_.find(n.var.get()); it != ranges_.end()) saved = it->second;
    if (known)
      ranges_[n.var.get()] = Interval{lo, lo + e - 1};
    else if (auto mb = constant_bounds(mn, ranges_)) {
      if (auto eb = constant_bounds(ext, ranges_)) ranges_[n.var.get()] = Interval{mb->lo, mb->hi + eb->hi - 1};
    }
    Stmt body = mutate(n.body);
    if (saved)
      ranges_[n.var.get()] = *saved;
    else
      ranges_.erase(n.var.get());
    if (auto* q = as<Seq>(body); !body || (q && q->stmts.empty())) return make_seq({});
    if (mn == n.min && ext == n.extent && body == n.body) return self;
    return make_for(n.var, mn, ext, body, n.for_kind, n.thread_tag, n.pragmas);
  }

  Stmt mutate_IfThenElse(const IfThenElse& n, const Stmt& self) override {
    Expr c = mutate(n.cond);
    int64_t v = 0;
    if (is_const_int(c, &v)) return v ? mutate(n.then_case) : mutate(n.else_case);
    Stmt t = mutate(n.then_case), e = mutate(n.else_case);
    auto empty = [](const Stmt& x) {
      auto* q = as<Seq>(x);
      return !x || (q && q->stmts.empty());
    };
    if (empty(t) && empty(e)) return make_seq({});
    if (empty(e)) e = nullptr;
    if (c == n.cond && t == n.then_case && e == n.else_case) return self;
    if (empty(t)) return make_if(make_not(c), e);
    return make_if(c, t, e);
  }

  Stmt mutate_Seq(const Seq& n, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (auto& s : n.stmts) {
      Stmt m = mutate(s);
      if (m != s) changed = true;
      if (auto* q = as<Seq>(m); q && q->stmts.empty()) continue;
      out.push_back(m);
    }
    return changed ? make_seq(std::move(out)) : self;
  }

 private:
  Expr simplify_binary(BinaryOp op, const Expr& a, const Expr& b, DataType type) {
    // Constant folding.
    auto* ia = as<IntImm>(a);
    auto* ib = as<IntImm>(b);
    auto* fa = as<FloatImm>(a);
    auto* fb = as<FloatImm>(b);
    if ((ia || fa) && (ib || fb) && (fa || fb)) {
      double x = fa ? fa->value : static_cast<double>(ia->value), y = fb ? fb->value : static_cast<double>(ib->value);
      return fold_float(op, x, y, type);
    }
    if (ia && ib) return fold_int(op, ia->value, ib->value, type);

    if (dtype_is_float(type) && !is_comparison(op)) {
      if (op == BinaryOp::kAdd && fb && fb->value == 0) return a;
      if (op == BinaryOp::kAdd && fa && fa->value == 0) return b;
      if (op == BinaryOp::kSub && fb && fb->value == 0) return a;
      if (op == BinaryOp::kMul && fb && fb->value == 1) return a;
      if (op == BinaryOp::kMul && fa && fa->value == 1) return b;
      if (op == BinaryOp::kDiv && fb && fb->value == 1) return a;
      return make_binary(op, a, b);
    }

    if (op == BinaryOp::kAnd) {
      if (ia) return ia->value ? b : bool_const(false);
      if (ib) return ib->value ? a : bool_const(false);
      return make_binary(op, a, b);
    }
    if (op == BinaryOp::kOr) {
      if (ia) return ia->value ? bool_const(true) : b;
      if (ib) return ib->value ? bool_const(true) : a;
      return make_binary(op, a, b);
    }

    if (is_comparison(op) && is_int_type(a->dtype) && is_int_type(b->dtype)) {
      Expr diff = simplify_linear(make_binary(BinaryOp::kSub, a, b), a->dtype);
      if (auto iv = constant_bounds(diff, ranges_)) {
        switch (op) {
          case BinaryOp::kLT:
            if (iv->hi < 0) return bool_const(true);
            if (iv->lo >= 0) return bool_const(false);
            break;
          case BinaryOp::kLE:
            if (iv->hi <= 0) return bool_const(true);
            if (iv->lo > 0) return bool_const(false);
            break;
          case BinaryOp::kGT:
            if (iv->lo > 0) return bool_const(true);
            if (iv->hi <= 0) return bool_const(false);
            break;
          case BinaryOp::kGE:
            if (iv->lo >= 0) return bool_const(true);
            if (iv->hi < 0) return bool_const(false);
            break;
          case BinaryOp::kEQ:
            if (iv->lo == 0 && iv->hi == 0) return bool_const(true);
            if (iv->lo > 0 || iv->hi < 0) return bool_const(false);
            break;
          case BinaryOp::kNE:
            if (iv->lo == 0 && iv->hi == 0) return bool_const(false);
            if (iv->lo > 0 || iv->hi < 0) return bool_const(true);
            break;
          default:
            break;
        }
      }
      // Move constants to the right: x + 3 < 10  ->  x < 7.
      LinearForm f = linear_form(diff);
      bool all_negative = !f.terms.empty();
      for (auto& [t, k] : f.terms) all_negative = all_negative && k < 0;
      if (all_negative) {  // 10 < i  reads better than  i*-1 < -10
        for (auto& [t, k] : f.terms) k = -k;
        f.constant = -f.constant;
        op = op == BinaryOp::kLT   ? BinaryOp::kGT
             : op == BinaryOp::kGT ? BinaryOp::kLT
             : op == BinaryOp::kLE ? BinaryOp::kGE
             : op == BinaryOp::kGE ? BinaryOp::kLE
                                   : op;
        int64_t c = -f.constant;
        f.constant = 0;
        return make_binary(op, rebuild(f, a->dtype), make_int(c, a->dtype));
      }
      if (f.constant != 0 && !f.terms.empty()) {
        int64_t c = -f.constant;
        f.constant = 0;
        return make_binary(op, rebuild(f, a->dtype), make_int(c, a->dtype));
      }
      return make_binary(op, a, b);
    }

    if (!is_int_type(type)) return make_binary(op, a, b);

    switch (op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
        return simplify_linear(make_binary(op, a, b), type);
      case BinaryOp::kMul:
        if ((ia && ia->value == 0) || (ib && ib->value == 0)) return make_int(0, type);
        if (ia || ib) return simplify_linear(make_binary(op, a, b), type);
        return make_binary(op, a, b);
      case BinaryOp::kDiv:
        return simplify_div(a, b, type);
      case BinaryOp::kMod:
        return simplify_mod(a, b, type);
      case BinaryOp::kMin:
      case BinaryOp::kMax: {
        if (same_value(a, b)) return a;
        Expr diff = simplify_linear(make_binary(BinaryOp::kSub, a, b), type);
        if (auto iv = constant_bounds(diff, ranges_)) {
          bool a_le_b = iv->hi <= 0, a_ge_b = iv->lo >= 0;
          if (op == BinaryOp::kMin && a_le_b) return a;
          if (op == BinaryOp::kMin && a_ge_b) return b;
          if (op == BinaryOp::kMax && a_ge_b) return a;
          if (op == BinaryOp::kMax && a_le_b) return b;
        }
        return make_binary(op, a, b);
      }
      default:
        return make_binary(op, a, b);
    }
  }

  Expr simplify_linear(const Expr& e, DataType type) { return rebuild(linear_form(e), type); }

  // Splits `a` into (multiples of c) + rest, with rest's constant part in [0, c).
  void split_by(const Expr& a, int64_t c, LinearForm& quotient, LinearForm& rest) {
    LinearForm f = linear_form(a);
    for (auto& [t, k] : f.terms) {
      if (k % c == 0)
        quotient.add_term(t, k / c);
      else
        rest.add_term(t, k);
    }
    quotient.constant = floor_div(f.constant, c);
    rest.constant = floor_mod(f.constant, c);
  }

  Expr simplify_div(const Expr& a, const Expr& b, DataType type) {
    int64_t c = 0;
    if (!is_const_int(b, &c) || c <= 0) return make_binary(BinaryOp::kDiv, a, b);
    if (c == 1) return a;
    // (x / c1) / c2 -> x / (c1*c2)
    if (auto* inner = as<Binary>(a); inner && inner->op == BinaryOp::kDiv) {
      int64_t c1 = 0;
      if (is_const_int(inner->b, &c1) && c1 > 0) return simplify_div(inner->a, make_int(c1 * c, type), type);
    }
    LinearForm q, r;
    split_by(a, c, q, r);
    Expr rest = rebuild(r, type);
    if (auto iv = constant_bounds(rest, ranges_)) {
      int64_t lo = floor_div(iv->lo, c), hi = floor_div(iv->hi, c);
      if (lo == hi) {
        q.constant += lo;
        return rebuild(q, type);
      }
    }
    if (auto coarse = split_at_a_divisor(r, c, type)) {
      Expr x = coarse->big / make_int(coarse->periods, type);
      return q.terms.empty() && q.constant == 0 ? x : x + rebuild(q, type);
    }
    if (q.terms.empty() && q.constant == 0) return make_binary(BinaryOp::kDiv, rest, b);
    return make_binary(BinaryOp::kDiv, a, b);
  }

  // rest = d·X + y with d dividing c and y in [0, d): then rest / c = X / (c/d) and
  // rest mod c = (X mod (c/d))·d + y, as X and y do not interact. A vector loop split off a
  // channel axis that a blocked layout divides (c = 8·co + ci, read at c / 16 and c mod 16):
  //
  //   (8·co + ci) / 16  ->  co / 2          (8·co + ci) mod 16  ->  (co mod 2)·8 + ci
  struct Coarse {
    Expr big, small;  // X and y
    int64_t d = 1, periods = 1;  // d and c / d
  };
  std::optional<Coarse> split_at_a_divisor(const LinearForm& rest, int64_t c, DataType type) {
    for (const auto& [term, k] : rest.terms) {
      const int64_t d = std::gcd(k, c);
      if (d <= 1 || d == c) continue;
      LinearForm big, small;
      for (const auto& [t, kt] : rest.terms) {
        if (kt % d == 0)
          big.add_term(t, kt / d);
        else
          small.add_term(t, kt);
      }
      small.constant = rest.constant;
      const Expr y = rebuild(small, type);
      auto iv = constant_bounds(y, ranges_);
      if (!iv || iv->lo < 0 || iv->hi >= d) continue;
      const Expr x = rebuild(big, type);
      // Non-negative X only: the identity holds for floor division, and index code may truncate.
      if (auto xv = constant_bounds(x, ranges_); !xv || xv->lo < 0) continue;
      return Coarse{x, y, d, c / d};
    }
    return std::nullopt;
  }

  Expr simplify_mod(const Expr& a, const Expr& b, DataType type) {
    int64_t c = 0;
    if (!is_const_int(b, &c) || c <= 0) return make_binary(BinaryOp::kMod, a, b);
    if (c == 1) return make_int(0, type);
    LinearForm q, r;
    split_by(a, c, q, r);
    Expr rest = rebuild(r, type);
    if (auto iv = constant_bounds(rest, ranges_)) {
      if (floor_div(iv->lo, c) == floor_div(iv->hi, c)) {
        // rest stays within one period: rest mod c = rest - period*c
        int64_t shift = floor_div(iv->lo, c) * c;
        if (shift == 0) return rest;
        LinearForm shifted = r;
        shifted.constant -= shift;
        return rebuild(shifted, type);
      }
    }
    if (auto coarse = split_at_a_divisor(r, c, type))
      return (coarse->big % make_int(coarse->periods, type)) * make_int(coarse->d, type) + coarse->small;
    return make_binary(BinaryOp::kMod, rest, b);
  }

  Expr fold_int(BinaryOp op, int64_t x, int64_t y, DataType type) {
    if (auto c = eval_comparison(op, x, y)) return bool_const(*c);
    switch (op) {
      case BinaryOp::kAdd:
        return make_int(x + y, type);
      case BinaryOp::kSub:
        return make_int(x - y, type);
      case BinaryOp::kMul:
        return make_int(x * y, type);
      case BinaryOp::kDiv:
        return y == 0 ? make_binary(op, make_int(x, type), make_int(y, type)) : make_int(floor_div(x, y), type);
      case BinaryOp::kMod:
        return y == 0 ? make_binary(op, make_int(x, type), make_int(y, type)) : make_int(floor_mod(x, y), type);
      case BinaryOp::kMin:
        return make_int(std::min(x, y), type);
      case BinaryOp::kMax:
        return make_int(std::max(x, y), type);
      case BinaryOp::kAnd:
        return bool_const(x && y);
      case BinaryOp::kOr:
        return bool_const(x || y);
      default:  // comparisons were answered above
        break;
    }
    return make_int(0, type);
  }

  Expr fold_float(BinaryOp op, double x, double y, DataType type) {
    if (auto c = eval_comparison(op, x, y)) return bool_const(*c);
    auto r = [&](double v) { return make_float(type == DataType::kFloat32 ? static_cast<float>(v) : v, type); };
    switch (op) {
      case BinaryOp::kAdd:
        return r(x + y);
      case BinaryOp::kSub:
        return r(x - y);
      case BinaryOp::kMul:
        return r(x * y);
      case BinaryOp::kDiv:
        return r(x / y);
      case BinaryOp::kMod:
        return r(x - std::floor(x / y) * y);
      case BinaryOp::kMin:
        return r(std::min(x, y));
      case BinaryOp::kMax:
        return r(std::max(x, y));
      case BinaryOp::kAnd:
        return bool_const(x != 0 && y != 0);
      case BinaryOp::kOr:
        return bool_const(x != 0 || y != 0);
      default:  // comparisons were answered above
        break;
    }
    return r(0);
  }

  RangeMap ranges_;
};

}  // namespace

Expr simplify(const Expr& e, const RangeMap& ranges) {
  if (!e) return e;
  Simplifier s(ranges);
  return s.keep_identity(s.mutate(e), e);
}

Stmt simplify(const Stmt& st, const RangeMap& ranges) {
  if (!st) return st;
  Simplifier s(ranges);
  Stmt out = s.mutate(st);
  return out ? out : make_seq({});
}

bool can_prove(const Expr& cond, const RangeMap& ranges) { return is_const_int_value(simplify(cond, ranges), 1); }

}  // namespace tessel::arith
