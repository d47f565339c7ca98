// Virtual threads over decoupled queues, with dependence tokens (the VTA scheme).
//
// An accelerator with a load queue (global -> scratchpad), a compute queue (scratchpad ->
// scratchpad) and a store queue (scratchpad -> global) runs them concurrently; a token says
// "the data you need is ready" (read after write) or "the buffer you will overwrite is free"
// (write after read). Tokens are counted per (from, to) queue pair: dep_push adds one, dep_pop
// waits for one and takes it.
//
//   one virtual thread's body                 with tokens                    2 vthreads interleaved
//   for ko {                                  push(1,0)                      push(1,0) push(1,0)
//     A_inp = A[ko]        (load)             for ko {                       for ko {
//     acc += A_inp * ...   (compute)            pop(1,0) A_inp=.. push(0,1)    pop(1,0) A_inp0 push(0,1)
//   }                                           pop(0,1) acc+=..  push(1,0)    pop(1,0) A_inp1 push(0,1)
//   C = acc                (store)            }                                pop(0,1) acc0   push(1,0)
//                                             pop(1,0)                         pop(0,1) acc1   push(1,0)
//                                             push(1,2) .. pop(1,2) C = acc  }  ...
//
// Rules, on each sequence of statements (a statement belongs to the queues of its stores):
//   - j needs i (earlier, other queue) when one writes what the other reads or writes: push after
//     i, pop before j; a later consumer on the same queue is covered (queues run in order);
//   - in a loop, j (later in the body) and i (earlier) that conflict across iterations: push
//     after j, pop before i, plus one push before the loop and one pop after it, so the counts
//     balance (the interpreter checks that every pop finds a token and that none is left over).
// A statement with tokens is kept together with them when the threads are interleaved, so one
// thread's load can run while the other's compute waits.
#include "core/lower/inject_virtual_thread.h"

#include <map>
#include <set>

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"
#include "core/te/tensor_intrinsic.h"

namespace tessel::lower {
using namespace loopir;

namespace {

bool accelerator_scope(const std::string& scope) { return scope.find('.') != std::string::npos; }

struct QueueAccess {
  std::set<std::string> reads, writes;
};
using QueueMap = std::map<DepQueue, QueueAccess>;

// Adds each store of `s` to its queue's reads and writes. A store that touches no accelerator
// buffer belongs to no queue (ordinary CPU/GPU code gets no tokens).
void classify(const Stmt& s, QueueMap& out) {
  class Walk : public IRVisitor {
   public:
    explicit Walk(QueueMap& out) : out_(out) {}

   protected:
    bool enter(const Store& n) override {
      bool dst = accelerator_scope(n.buffer->scope), src = false, outside = false;
      std::set<std::string> reads;
      for_each_access(n.value, [&](const Buffer& b, const std::vector<Expr>&, bool) {
        reads.insert(b->name);
        (accelerator_scope(b->scope) ? src : outside) = true;
      });
      for (auto& i : n.indices)
        for_each_access(i, [&](const Buffer& b, const std::vector<Expr>&, bool) { reads.insert(b->name); });
      if (!dst && !src) return false;
      // Loads bring outside data into scratchpads; a reset (constants only) is compute work.
      DepQueue q = dst && !src && outside ? DepQueue::kLoad : !dst ? DepQueue::kStore : DepQueue::kCompute;
      out_[q].writes.insert(n.buffer->name);
      out_[q].reads.insert(reads.begin(), reads.end());
      return false;
    }
    // A tensor intrinsic call (tensorize) reads its input operands and writes its last operand,
    // each passed as address_of(T[first element]); on scratchpads it is compute work.
    bool enter(const Evaluate& n) override {
      auto* call = as<Call>(n.value);
      if (!call || !te::find_tensor_intrinsic_call(call->name, nullptr)) return false;
      std::vector<Buffer> operands;
      for (auto& a : call->args)
        if (const Load* load = address_of_load(a)) operands.push_back(load->buffer);
      if (operands.empty() || !accelerator_scope(operands.back()->scope)) return false;
      QueueAccess& compute = out_[DepQueue::kCompute];
      compute.writes.insert(operands.back()->name);
      for (auto& b : operands) compute.reads.insert(b->name);  // the update reads its output too
      return false;
    }

   private:
    QueueMap& out_;
  } walk(out);
  walk.visit(s);
}

bool conflict(const QueueAccess& a, const QueueAccess& b) {
  auto meets = [](const std::set<std::string>& x, const std::set<std::string>& y) {
    for (auto& n : x)
      if (y.count(n)) return true;
    return false;
  };
  return meets(a.writes, b.reads) || meets(a.writes, b.writes) || meets(a.reads, b.writes);
}

Stmt token(Builtin push_or_pop, DepQueue from, DepQueue to) {
  return make_evaluate(make_dependence_token(push_or_pop, static_cast<int64_t>(from), static_cast<int64_t>(to)));
}

class TokenInserter {
 public:
  std::set<const StmtNode*> groups;  // statement + its tokens: one unit when interleaving

  Stmt sync(const Stmt& s) {
    QueueMap q;
    classify(s, q);
    if (q.size() <= 1) return s;
    if (auto* f = as<For>(s)) {
      // Buffers allocated in the body live in the same scratchpad every iteration: look through
      // the allocations for the sequence whose statements may conflict across iterations. An
      // allocation in the middle of the body (a reduction loop that vanished because it had one
      // iteration leaves one there) is hoisted to its head and its statements joined to the
      // sequence; otherwise its loads and computes would be one statement here, and the conflict
      // between this iteration's compute and the next one's load inside it would get no token.
      std::vector<Buffer> allocs;
      std::vector<Stmt> stmts;
      Stmt inner = f->body;
      if (!hoist_allocations(f->body, allocs, stmts)) {
        allocs.clear(), stmts.clear();
        while (auto* a = as<Allocate>(inner)) {
          allocs.push_back(a->buffer);
          inner = a->body;
        }
        stmts = as<Seq>(inner) ? as<Seq>(inner)->stmts : std::vector<Stmt>{inner};
      }
      std::vector<Stmt> pre, post;
      Stmt body = sync_seq(stmts, &pre, &post);
      for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) body = make_allocate(*it, body);
      pre.push_back(make_for(f->var, f->min, f->extent, body, f->for_kind, f->thread_tag, f->pragmas));
      pre.insert(pre.end(), post.begin(), post.end());
      return make_seq(std::move(pre));
    }
    if (auto* q2 = as<Seq>(s)) return sync_seq(q2->stmts, nullptr, nullptr);
    if (auto* a = as<Allocate>(s)) return make_allocate(a->buffer, sync(a->body));
    if (auto* l = as<LetStmt>(s)) return make_let(l->var, l->value, sync(l->body));
    if (auto* i = as<IfThenElse>(s))
      return make_if(i->cond, sync(i->then_case), i->else_case ? sync(i->else_case) : nullptr);
    return s;
  }

 private:
  // The statements of a loop body with every allocation among them (through sequences and
  // allocations, not into loops or branches) taken out: false when a buffer name is allocated
  // twice, where hoisting would merge two buffers.
  static bool hoist_allocations(const Stmt& s, std::vector<Buffer>& allocs, std::vector<Stmt>& stmts) {
    if (auto* a = as<Allocate>(s)) {
      for (const Buffer& b : allocs)
        if (b->name == a->buffer->name) return false;
      allocs.push_back(a->buffer);
      return hoist_allocations(a->body, allocs, stmts);
    }
    if (auto* q = as<Seq>(s)) {
      for (const Stmt& c : q->stmts)
        if (!hoist_allocations(c, allocs, stmts)) return false;
      return true;
    }
    stmts.push_back(s);
    return true;
  }

  // `pre`/`post` non-null: the sequence is a loop body; loop-carried tokens go there.
  Stmt sync_seq(const std::vector<Stmt>& in, std::vector<Stmt>* pre, std::vector<Stmt>* post) {
    std::vector<Stmt> parts;
    std::vector<QueueMap> acc;
    for (auto& c : in) {
      parts.push_back(sync(c));
      acc.emplace_back();
      classify(parts.back(), acc.back());
    }
    size_t n = parts.size();
    std::vector<std::vector<Stmt>> before(n), after(n);
    std::map<std::pair<DepQueue, DepQueue>, long> covered;  // last producer index already synchronized
    for (size_t j = 0; j < n; ++j)
      for (auto& [qj, aj] : acc[j])
        for (size_t i = j; i-- > 0;) {
          bool found = false;
          for (auto& [qi, ai] : acc[i]) {
            if (qi == qj || !conflict(ai, aj)) continue;
            auto key = std::make_pair(qi, qj);
            auto it = covered.find(key);
            if (it == covered.end() || it->second < static_cast<long>(i)) {
              after[i].push_back(token(Builtin::kDepPush, qi, qj));
              before[j].push_back(token(Builtin::kDepPop, qi, qj));
              covered[key] = static_cast<long>(i);
            }
            found = true;
          }
          if (found) break;
        }
    if (pre) {
      // Across iterations: the latest j on queue q against the earliest earlier i on queue p.
      std::map<std::pair<DepQueue, DepQueue>, std::pair<size_t, size_t>> carried;  // (q, p) -> (j, i)
      for (size_t j = 0; j < n; ++j)
        for (auto& [qj, aj] : acc[j])
          for (size_t i = 0; i < j; ++i)
            for (auto& [qi, ai] : acc[i]) {
              if (qi == qj || !conflict(aj, ai)) continue;
              auto key = std::make_pair(qj, qi);
              auto it = carried.find(key);
              if (it == carried.end())
                carried[key] = {j, i};
              else
                it->second = {std::max(it->second.first, j), std::min(it->second.second, i)};
            }
      for (auto& [key, ji] : carried) {
        after[ji.first].push_back(token(Builtin::kDepPush, key.first, key.second));
        before[ji.second].insert(before[ji.second].begin(), token(Builtin::kDepPop, key.first, key.second));
        pre->push_back(token(Builtin::kDepPush, key.first, key.second));
        post->push_back(token(Builtin::kDepPop, key.first, key.second));
      }
    }
    std::vector<Stmt> out;
    for (size_t k = 0; k < n; ++k) {
      if (before[k].empty() && after[k].empty()) {
        out.push_back(parts[k]);
        continue;
      }
      std::vector<Stmt> g = before[k];
      g.push_back(parts[k]);
      g.insert(g.end(), after[k].begin(), after[k].end());
      if (acc[k].size() == 1) {
        // Built without make_seq's flattening, so the interleaver can keep the group whole.
        auto group = std::make_shared<const Seq>(std::move(g));
        groups.insert(group.get());
        out.push_back(group);
      } else {
        out.insert(out.end(), g.begin(), g.end());
      }
    }
    return std::make_shared<const Seq>(std::move(out));
  }
};

// Gives each virtual thread its own copy of an allocation: a flat buffer `threads` times as
// large, thread t using the elements [t*span, (t+1)*span).
class ExpandBuffer : public IRMutator {
 public:
  ExpandBuffer(const Buffer& old, Buffer expanded, Expr offset)
      : old_(old), new_(std::move(expanded)), offset_(std::move(offset)) {}

 protected:
  Expr mutate_Load(const Load& n, const Expr& self) override {
    Expr e = IRMutator::mutate_Load(n, self);
    auto* l = as<Load>(e);
    if (l->buffer->name != old_->name) return e;
    return make_load(new_, {flat(l->indices)});
  }
  Stmt mutate_Store(const Store& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Store(n, self);
    auto* st = as<Store>(s);
    if (st->buffer->name != old_->name) return s;
    return make_store(new_, {flat(st->indices)}, st->value);
  }

 private:
  Expr flat(const std::vector<Expr>& idx) const {
    Expr e = offset_;
    if (idx.size() == 1) return e + idx[0];
    Shape strides = old_->strides.empty() ? contiguous_strides(old_->shape) : old_->strides;
    for (size_t d = 0; d < idx.size(); ++d) e = e + idx[d] * strides[d];
    return e;
  }
  Buffer old_, new_;
  Expr offset_;
};

// Expands every allocation inside a virtual thread loop (before tokens and interleaving, which
// then see the final buffers).
class ExpandAllocations : public IRMutator {
 public:
  ExpandAllocations(VarRef var, int64_t mn, int64_t ext) : var_(std::move(var)), mn_(mn), ext_(ext) {}

 protected:
  Stmt mutate_Allocate(const Allocate& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Allocate(n, self);
    auto* a = as<Allocate>(s);
    int64_t span = buffer_span(*a->buffer);
    Buffer expanded = make_buffer(a->buffer->name, a->buffer->dtype, {span * ext_}, a->buffer->scope);
    ExpandBuffer expand(a->buffer, expanded, arith::simplify((Expr(var_) - mn_) * span));
    return make_allocate(expanded, expand.mutate(a->body));
  }

 private:
  VarRef var_;
  int64_t mn_, ext_;
};

class VirtualThreadInjector : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(n, self);
    auto* f = as<For>(s);
    if (f->for_kind != ForKind::kVirtualThread) return s;
    int64_t mn = 0, ext = 0;
    if (!is_const_int(f->min, &mn) || !is_const_int(f->extent, &ext))
      throw Error("virtual thread loop " + f->var->name + " needs a constant extent");
    ExpandAllocations expand(f->var, mn, ext);
    TokenInserter tokens;
    Stmt body = tokens.sync(expand.mutate(f->body));
    groups_ = &tokens.groups;
    Stmt out = interleave(f->var, mn, ext, body);
    groups_ = nullptr;
    return out;
  }

 private:
  bool depends(const Expr& e, const Var* v) {
    return uses_var(e, [&](const Var* x) { return x == v; });
  }

  Stmt interleave(const VarRef& var, int64_t mn, int64_t ext, const Stmt& body) {
    const Var* v = var.get();
    bool group = groups_ && groups_->count(body.get());
    if (auto* f = as<For>(body);
        f && !depends(f->min, v) && !depends(f->extent, v) && f->for_kind != ForKind::kThreadBound) {
      return make_for(f->var, f->min, f->extent, interleave(var, mn, ext, f->body), f->for_kind, f->thread_tag,
                      f->pragmas);
    }
    if (auto* q = as<Seq>(body); q && !group) {
      std::vector<Stmt> parts;
      for (auto& c : q->stmts) parts.push_back(interleave(var, mn, ext, c));
      return make_seq(std::move(parts));
    }
    if (auto* i = as<IfThenElse>(body); i && !depends(i->cond, v)) {
      return make_if(i->cond, interleave(var, mn, ext, i->then_case),
                     i->else_case ? interleave(var, mn, ext, i->else_case) : nullptr);
    }
    if (auto* a = as<Allocate>(body))  // already one copy per thread (ExpandAllocations)
      return make_allocate(a->buffer, interleave(var, mn, ext, a->body));
    // A statement that depends on the thread (or a statement kept with its tokens): one copy
    // per virtual thread.
    std::vector<Stmt> copies;
    for (int64_t k = mn; k < mn + ext; ++k)
      copies.push_back(arith::simplify(substitute(body, VarMap{{v, make_int(k)}})));
    return make_seq(std::move(copies));
  }

  const std::set<const StmtNode*>* groups_ = nullptr;
};

}  // namespace

Func inject_virtual_threads(const Func& f) {
  VirtualThreadInjector inj;
  Func out = f;
  out.body = inj.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
