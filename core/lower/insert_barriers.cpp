#include "core/lower/insert_barriers.h"

#include <set>

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
    ++loop_depth_;
    const StmtNode* saved = loop_body_;
    loop_body_ = n.body.get();
    Stmt s = IRMutator::mutate_For(n, self);
    loop_body_ = saved;
    --loop_depth_;
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
      if (w && !r) pending_write = true;
      out.push_back(c);
    }
    return inserted ? make_seq(std::move(out)) : s;
  }

 private:
  std::set<std::string> shared_;
  int loop_depth_ = 0;
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
