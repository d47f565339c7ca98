#include "core/lower/inject_double_buffer.h"

#include <set>

#include "core/loopir/functor.h"
#include "core/support/error.h"

namespace tessel::lower {
using namespace loopir;

namespace {

bool accesses(const Stmt& s, const std::set<std::string>& names, bool want_store, std::string* scope = nullptr) {
  bool found = false;
  for_each_access(s, [&](const Buffer& b, const std::vector<Expr>&, bool is_store) {
    if (is_store != want_store || !names.count(b->name)) return;
    found = true;
    if (scope) *scope = b->scope;
  });
  return found;
}

class DoubleBufferInjector : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(n, self);
    auto* f = as<For>(s);
    std::set<std::string> names;
    Pragmas kept;
    for (auto& [key, value] : f->pragmas) {
      if (key.rfind(double_buffer_pragma_prefix(), 0) == 0)
        names.insert(key.substr(double_buffer_pragma_prefix().size()));
      else
        kept.emplace_back(key, value);
    }
    if (names.empty()) return s;
    std::string what = "double_buffer(" + *names.begin() + ") at loop " + f->var->name;
    if (f->for_kind != ForKind::kSerial && f->for_kind != ForKind::kUnrolled)
      throw Error(what + ": the loop is " + std::string(for_kind_name(f->for_kind)) +
                  "; a prefetch pipeline needs a serial loop");
    int64_t ext = 0;
    if (!is_const_int(f->extent, &ext)) throw Error(what + ": the loop needs a constant extent");

    // The fetch: the statements that fill the double-buffered stages; the rest computes on them.
    std::vector<Stmt> parts = as<Seq>(f->body) ? as<Seq>(f->body)->stmts : std::vector<Stmt>{f->body};
    std::vector<Stmt> fetch, compute;
    std::string scope;
    for (auto& p : parts) {
      bool fills = accesses(p, names, true, &scope) && !accesses(p, names, false);
      (fills && compute.empty() ? fetch : compute).push_back(p);
    }
    if (fetch.empty()) throw Error(what + ": found no fetch of the stage at the start of the loop body");
    Stmt fetch_body = make_seq(fetch), compute_body = make_seq(compute);
    auto at = [&](const Stmt& body, Expr k) { return substitute(body, VarMap{{f->var.get(), std::move(k)}}); };

    Stmt prologue = at(fetch_body, f->min);
    Stmt epilogue = at(compute_body, f->min + (ext - 1));
    if (ext <= 1) return make_seq({prologue, epilogue});
    std::vector<Stmt> steady = {at(fetch_body, Expr(f->var) + 1), compute_body};
    if (scope == "shared") steady.push_back(make_barrier("shared"));
    Stmt loop =
        make_for(f->var, f->min, make_int(ext - 1), make_seq(std::move(steady)), f->for_kind, f->thread_tag, kept);
    return make_seq({prologue, loop, epilogue});
  }
};

}  // namespace

Func inject_double_buffer(const Func& f) {
  DoubleBufferInjector inj;
  Func out = f;
  out.body = inj.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
