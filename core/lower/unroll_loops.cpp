#include "core/lower/unroll_loops.h"

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"

namespace tessel::lower {
using namespace loopir;

namespace {

constexpr int64_t kMaxExplicitUnroll = 256;
// Nested unrolls multiply: unroll(i), unroll(j), unroll(k) of 256 each would copy the body 16.7
// million times. Past this many statements in one unrolled nest, lowering stops with an error --
// for a typed schedule, a tuning record and the tuner's own candidates alike, since a record is
// untrusted input (issue 40). The bound is set by what LLVM does with one long basic block: its
// alias queries grow with the square of the stores. Measured on mlp's 4x128x128 kernel, `tessel
// run --records` with a record unrolling 4096 / 8192 / 16384 / 32768 statements took 3.7 / 12 /
// 35 / 77 s (0.7 GB at 16384); this keeps a hostile record to a few seconds, while the largest
// unroll a default schedule or the search space makes is a few hundred statements.
constexpr int64_t kMaxUnrolledStatements = 4096;

// Statements in a body (what each copy of an unrolled loop repeats).
class CountStatements : public IRVisitor {
 public:
  int64_t count = 0;

 protected:
  bool enter(const Store&) override { return ++count, true; }
  bool enter(const Evaluate&) override { return ++count, true; }
  bool enter(const Barrier&) override { return ++count, true; }
};

class HasLoop : public IRVisitor {
 public:
  bool found = false;

 protected:
  bool enter(const For&) override {
    found = true;
    return false;
  }
};

class Unroller : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    int64_t limit_here = 0;
    for (auto& [k, v] : n.pragmas)
      if (k == "auto_unroll_max_step") limit_here = v;
    int64_t saved = auto_limit_;
    if (limit_here > 0) auto_limit_ = limit_here;
    Stmt s = IRMutator::mutate_For(n, self);
    auto_limit_ = saved;
    auto* f = as<For>(s);
    int64_t mn = 0, ext = 0;
    if (!is_const_int(f->min, &mn) || !is_const_int(f->extent, &ext)) return s;
    bool explicit_unroll = f->for_kind == ForKind::kUnrolled && ext <= kMaxExplicitUnroll;
    bool auto_unroll = false;
    if (f->for_kind == ForKind::kSerial && auto_limit_ > 0 && ext <= auto_limit_ && limit_here == 0) {
      HasLoop h;
      h.visit(f->body);
      auto_unroll = !h.found;
    }
    if (!explicit_unroll && !auto_unroll) return s;
    CountStatements body_size;
    body_size.visit(f->body);
    if (body_size.count * ext > kMaxUnrolledStatements)
      throw Error("unrolling loop " + f->var->name + " (" + std::to_string(ext) + " iterations of " +
                  std::to_string(body_size.count) + " statements, after the unrolls inside it) would write " +
                  std::to_string(body_size.count * ext) + " statements, more than " +
                  std::to_string(kMaxUnrolledStatements) + ": unroll fewer or shorter loops");
    std::vector<Stmt> copies;
    for (int64_t k = mn; k < mn + ext; ++k)
      copies.push_back(arith::simplify(substitute(f->body, VarMap{{f->var.get(), make_int(k)}})));
    return make_seq(std::move(copies));
  }

 private:
  int64_t auto_limit_ = 0;
};

}  // namespace

Func unroll_loops(const Func& f) {
  Unroller u;
  Func out = f;
  out.body = u.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
