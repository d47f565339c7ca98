#include "core/lower/store_from_thread_zero.h"

#include <array>
#include <functional>
#include <map>
#include <set>

#include "core/loopir/functor.h"

namespace tessel::lower {
using namespace loopir;

namespace {

constexpr std::array<const char*, 3> kThreadTags = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
constexpr std::array<const char*, 3> kStoreVars = {"tx", "ty", "tz"};

int thread_dimension(const For& f) {
  if (f.for_kind != ForKind::kThreadBound) return -1;
  for (int d = 0; d < 3; ++d)
    if (f.thread_tag == kThreadTags[d]) return d;
  return -1;
}

// Calls `on_store` for every store with the mask of threadIdx dimensions around it, and
// `on_control` for every value that decides what runs (a condition, a let, a loop's bounds) with
// the mask around it.
void walk(const Stmt& s, int mask, const std::function<void(const Store&, int)>& on_store,
          const std::function<void(const Expr&, int)>& on_control) {
  if (!s) return;
  if (auto* n = as<Seq>(s)) {
    for (const Stmt& c : n->stmts) walk(c, mask, on_store, on_control);
  } else if (auto* n = as<For>(s)) {
    const int d = thread_dimension(*n);
    on_control(n->min, mask);
    on_control(n->extent, mask);
    walk(n->body, d < 0 ? mask : mask | (1 << d), on_store, on_control);
  } else if (auto* n = as<Allocate>(s)) {
    walk(n->body, mask, on_store, on_control);
  } else if (auto* n = as<LetStmt>(s)) {
    on_control(n->value, mask);
    walk(n->body, mask, on_store, on_control);
  } else if (auto* n = as<IfThenElse>(s)) {
    on_control(n->cond, mask);
    walk(n->then_case, mask, on_store, on_control);
    walk(n->else_case, mask, on_store, on_control);
  } else if (auto* n = as<Store>(s)) {
    on_store(*n, mask);
  }
}

bool reads_any(const Expr& e, const std::set<std::string>& buffers) {
  bool found = false;
  for_each_access(e, [&](const Buffer& b, const std::vector<Expr>&, bool) { found = found || buffers.count(b->name); });
  return found;
}

bool reads_any(const Store& st, const std::set<std::string>& buffers) {
  if (reads_any(st.value, buffers)) return true;
  for (const Expr& i : st.indices)
    if (reads_any(i, buffers)) return true;
  return false;
}

// One root loop nest (one kernel launch).
class NestRewrite : public IRMutator {
 public:
  // False when the nest launches no threadIdx, or launches one with two extents (the launch
  // analysis refuses that nest anyway).
  bool analyse(const Stmt& nest) {
    bool consistent = true;
    struct Extents : IRVisitor {
      std::array<int64_t, 3>* extent;
      bool* consistent;
      bool enter(const For& f) override {
        const int d = thread_dimension(f);
        int64_t e = 0;
        if (d < 0) return true;
        if (!is_const_int(f.extent, &e) || ((*extent)[d] != 0 && (*extent)[d] != e)) *consistent = false;
        (*extent)[d] = e;
        return true;
      }
    } extents;
    extents.extent = &extent_;
    extents.consistent = &consistent;
    extents.visit(nest);
    for (int d = 0; d < 3; ++d)
      if (extent_[d] > 0) launched_ |= 1 << d;
    if (!consistent || launched_ == 0) return false;

    // Private buffers whose value differs between threads: written inside a threadIdx loop, or
    // from one that does.
    std::set<std::string> varying;
    for (bool grew = true; grew;) {
      grew = false;
      walk(
          nest, 0,
          [&](const Store& st, int mask) {
            if (st.buffer->scope != "local" || varying.count(st.buffer->name)) return;
            if (mask != 0 || reads_any(st, varying)) grew = varying.insert(st.buffer->name).second || grew;
          },
          [](const Expr&, int) {});
    }
    // Outside some thread loop, what runs then differs between threads too: left alone.
    bool varying_control = false;
    walk(
        nest, 0, [](const Store&, int) {},
        [&](const Expr& e, int mask) {
          varying_control = varying_control || ((mask & launched_) != launched_ && reads_any(e, varying));
        });
    if (varying_control) return false;

    // Buffers every access of which is a store the block would make alike.
    std::map<std::string, bool> alike;  // buffer -> every store so far is one
    std::map<std::string, int> loads_inside;
    walk(
        nest, 0,
        [&](const Store& st, int mask) {
          if (st.buffer->scope == "local") return;
          const bool one = (mask & launched_) != launched_ && !reads_any(st, varying);
          auto [it, first] = alike.emplace(st.buffer->name, one);
          if (!first) it->second = it->second && one;
          auto count = [&](const Buffer& b, const std::vector<Expr>&, bool) {
            if (b->name == st.buffer->name) ++loads_inside[b->name];
          };
          for_each_access(st.value, count);
          for (const Expr& i : st.indices) for_each_access(i, count);
        },
        [](const Expr&, int) {});
    std::map<std::string, int> loads;
    for_each_access(nest, [&](const Buffer& b, const std::vector<Expr>&, bool is_store) {
      if (!is_store) ++loads[b->name];
    });
    for (const auto& [name, one] : alike)
      if (one && loads[name] == loads_inside[name]) moved_.insert(name);
    return !moved_.empty();
  }

 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    const int d = thread_dimension(n);
    const int saved = mask_;
    if (d >= 0) mask_ |= 1 << d;
    Stmt s = IRMutator::mutate_For(n, self);
    mask_ = saved;
    return s;
  }
  Stmt mutate_Store(const Store& n, const Stmt& self) override {
    if (!moved_.count(n.buffer->name)) return self;
    std::vector<std::pair<int, VarRef>> loops;  // the launched threadIdx dimensions around it not
    Expr on_zero;
    for (int d = 0; d < 3; ++d) {
      if (!(launched_ & ~mask_ & (1 << d))) continue;
      VarRef v = make_var(kStoreVars[d]);
      on_zero = on_zero ? logical_and(on_zero, eq(v, make_int(0))) : eq(v, make_int(0));
      loops.emplace_back(d, v);
    }
    if (!on_zero) return self;
    Stmt s = make_if(on_zero, self);
    for (const auto& [d, v] : loops)
      s = make_for(v, make_int(0), make_int(extent_[d]), s, ForKind::kThreadBound, kThreadTags[d]);
    return s;
  }

 private:
  std::array<int64_t, 3> extent_{0, 0, 0};
  int launched_ = 0;
  int mask_ = 0;
  std::set<std::string> moved_;
};

Stmt rewrite_roots(const Stmt& s) {
  if (!s) return s;
  if (auto* n = as<Allocate>(s)) {
    Stmt body = rewrite_roots(n->body);
    return body == n->body ? s : make_allocate(n->buffer, body);
  }
  if (auto* n = as<LetStmt>(s)) {
    Stmt body = rewrite_roots(n->body);
    return body == n->body ? s : make_let(n->var, n->value, body);
  }
  if (auto* n = as<Seq>(s)) {
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& c : n->stmts) {
      out.push_back(rewrite_roots(c));
      changed = changed || out.back() != c;
    }
    return changed ? make_seq(std::move(out)) : s;
  }
  NestRewrite nest;
  return nest.analyse(s) ? nest.mutate(s) : s;
}

}  // namespace

Func store_from_thread_zero(const Func& f) {
  Func out = f;
  out.body = rewrite_roots(f.body);
  return out;
}

}  // namespace tessel::lower
