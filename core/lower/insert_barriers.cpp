#include "core/lower/insert_barriers.h"

#include <map>
#include <set>

#include "core/loopir/equal.h"
#include "core/loopir/functor.h"

namespace tessel::lower {
using namespace loopir;

namespace {

bool touches(const Stmt& s, const std::set<std::string>& names, bool want_store) {
  bool found = false;
  for_each_access(s, [&](const Buffer& b, const std::vector<Expr>&, bool is_store) {
    if (is_store == want_store && names.count(b->name)) found = true;
  });
  return found;
}

// Shared buffers that every thread of `loop` (bound to threadIdx) touches only at its own
// elements: all accesses inside the loop use one index, which depends on the loop's variable.
// Inside that loop they need no barrier (a GPU reduction's partial results, where each thread
// initializes and then updates its own element); outside it they do.
std::set<std::string> private_to_each_thread(const For& loop, const std::set<std::string>& shared) {
  std::map<std::string, std::vector<Expr>> index;
  std::set<std::string> mixed;
  for_each_access(loop.body, [&](const Buffer& b, const std::vector<Expr>& idx, bool) {
    if (!shared.count(b->name) || mixed.count(b->name)) return;
    auto [it, first] = index.emplace(b->name, idx);
    if (first) return;
    bool same = it->second.size() == idx.size();
    for (size_t d = 0; same && d < idx.size(); ++d) same = same_value(it->second[d], idx[d]);
    if (!same) mixed.insert(b->name);
  });
  std::set<std::string> out;
  for (auto& [name, idx] : index) {
    if (mixed.count(name)) continue;
    bool by_thread = false;
    for (const Expr& e : idx) by_thread = by_thread || uses_var(e, [&](const Var* v) { return v == loop.var.get(); });
    if (by_thread) out.insert(name);
  }
  return out;
}

// A statement whose last act is a barrier (a double-buffer pipeline's loop) leaves nothing unordered.
bool ends_with_barrier(const Stmt& s) {
  if (as<Barrier>(s)) return true;
  if (auto* f = as<For>(s)) return ends_with_barrier(f->body);
  if (auto* q = as<Seq>(s)) return !q->stmts.empty() && ends_with_barrier(q->stmts.back());
  return false;
}

class BarrierInserter : public IRMutator {
 protected:
  Stmt mutate_Allocate(const Allocate& n, const Stmt& self) override {
    bool shared = n.buffer->scope == "shared";
    if (shared) shared_.insert(n.buffer->name);
    Stmt s = IRMutator::mutate_Allocate(n, self);
    if (shared) shared_.erase(n.buffer->name);
    return s;
  }
  Stmt mutate_For(const For& n, const Stmt& self) override {
    // A loop bound to blockIdx has no previous iteration in a block (each iteration is another
    // block, with its own shared memory): nothing of it to wait for.
    const bool repeats = n.for_kind != ForKind::kThreadBound || n.thread_tag.rfind("blockIdx", 0) != 0;
    loop_depth_ += repeats;
    const StmtNode* saved = loop_body_;
    loop_body_ = n.body.get();
    const std::set<std::string> saved_shared = shared_;
    if (n.for_kind == ForKind::kThreadBound && n.thread_tag.rfind("threadIdx", 0) == 0)
      for (const std::string& b : private_to_each_thread(n, shared_)) shared_.erase(b);
    Stmt s = IRMutator::mutate_For(n, self);
    shared_ = saved_shared;
    loop_body_ = saved;
    loop_depth_ -= repeats;
    return s;
  }
  Stmt mutate_Seq(const Seq& n, const Stmt& self) override {
    bool is_loop_body = &n == loop_body_;
    Stmt s = IRMutator::mutate_Seq(n, self);
    if (shared_.empty()) return s;
    auto* q = as<Seq>(s);
    if (!q) return s;
    // A loop body that ends with a barrier is a double-buffer pipeline's steady state, which
    // inject_double_buffer synchronized: its fetch and compute touch different halves.
    if (loop_depth_ > 0 && !q->stmts.empty() && as<Barrier>(q->stmts.back()) && is_loop_body) return s;
    std::vector<Stmt> out;
    bool pending_write = false, inserted = false;
    bool reads_anywhere = false;
    for (auto& c : q->stmts) {
      reads_anywhere = reads_anywhere || touches(c, shared_, false);
    }
    for (auto& c : q->stmts) {
      if (as<Barrier>(c)) pending_write = false;  // a barrier already there orders what came before
      bool w = touches(c, shared_, true), r = touches(c, shared_, false);
      if (w && !r && !pending_write && loop_depth_ > 0 && reads_anywhere && !inserted) {
        out.push_back(make_barrier("shared"));  // the previous iteration's readers are done
        inserted = true;
      }
      if (r && pending_write) {
        out.push_back(make_barrier("shared"));
        pending_write = false;
        inserted = true;
      }
      // A statement that updates a shared buffer (reads and writes it, as a reduction's partial
      // results) is a write for the statements after it too.
      if (w) pending_write = !ends_with_barrier(c);
      out.push_back(c);
    }
    return inserted ? make_seq(std::move(out)) : s;
  }

 private:
  std::set<std::string> shared_;
  int loop_depth_ = 0;                   // loops around that repeat in one block (not bound to blockIdx)
  const StmtNode* loop_body_ = nullptr;  // the body of the innermost loop being rebuilt
};

}  // namespace

Func insert_barriers(const Func& f) {
  BarrierInserter b;
  Func out = f;
  out.body = b.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
