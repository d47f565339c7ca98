#include "core/lower/storage_rewrite.h"

#include <map>
#include <set>

#include "core/loopir/functor.h"

namespace tessel::lower {
using namespace loopir;

namespace {

class Rename : public IRMutator {
 public:
  explicit Rename(const std::map<std::string, Buffer>& to) : to_(to) {}

 protected:
  Expr mutate_Load(const Load& n, const Expr& self) override {
    Expr e = IRMutator::mutate_Load(n, self);
    auto* l = as<Load>(e);
    auto it = to_.find(l->buffer->name);
    return it == to_.end() ? e : make_load(it->second, l->indices);
  }
  Stmt mutate_Store(const Store& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Store(n, self);
    auto* st = as<Store>(s);
    auto it = to_.find(st->buffer->name);
    return it == to_.end() ? s : make_store(it->second, st->indices, st->value);
  }

 private:
  const std::map<std::string, Buffer>& to_;
};

}  // namespace

Func rewrite_storage(const Func& f) {
  // The top-level allocations (build_loop_nests puts root intermediates there), then the program.
  std::vector<Buffer> allocs;
  Stmt body = f.body;
  while (auto* a = as<Allocate>(body)) {
    allocs.push_back(a->buffer);
    body = a->body;
  }
  auto* seq = as<Seq>(body);
  if (allocs.size() < 2 || !seq) return f;
  // Live range of each buffer over the top-level statements: [first access, last access].
  std::map<std::string, std::pair<size_t, size_t>> live;
  for (size_t k = 0; k < seq->stmts.size(); ++k) {
    for_each_access(seq->stmts[k], [&](const Buffer& b, const std::vector<Expr>&, bool) {
      auto it = live.find(b->name);
      if (it == live.end())
        live[b->name] = {k, k};
      else
        it->second.second = k;
    });
  }
  // Greedy: each buffer takes over the storage of an earlier one whose range ended before it starts.
  std::map<std::string, Buffer> rename;       // buffer -> the storage it uses
  std::map<std::string, size_t> storage_end;  // storage name -> last statement using it
  std::map<std::string, Buffer> storage;      // storage name -> its (possibly grown) buffer
  std::vector<std::string> order;             // storages, in allocation order
  for (auto& b : allocs) {
    auto lr = live.find(b->name);
    if (lr == live.end() || !b->strides.empty() || b->shape.size() != 1) {
      storage[b->name] = b;
      storage_end[b->name] = lr == live.end() ? 0 : lr->second.second;
      order.push_back(b->name);
      continue;
    }
    std::string reuse;
    for (auto& name : order) {
      const Buffer& s = storage[name];
      if (s->dtype == b->dtype && s->scope == b->scope && s->strides.empty() && s->shape.size() == 1 &&
          storage_end[name] < lr->second.first) {
        reuse = name;
        break;
      }
    }
    if (reuse.empty()) {
      storage[b->name] = b;
      storage_end[b->name] = lr->second.second;
      order.push_back(b->name);
      continue;
    }
    if (b->shape[0] > storage[reuse]->shape[0]) storage[reuse] = make_buffer(reuse, b->dtype, b->shape, b->scope);
    storage_end[reuse] = lr->second.second;
    rename[b->name] = storage[reuse];
  }
  if (rename.empty()) return f;
  // Buffers that grew are re-declared; every access to a reused buffer goes to its storage.
  for (auto& name : order) rename[name] = storage[name];
  for (auto& [from, to] : rename)
    if (to->name != from) rename[from] = storage[to->name];
  Rename r(rename);
  Stmt out = r.mutate(body);
  for (auto it = order.rbegin(); it != order.rend(); ++it) out = make_allocate(storage[*it], out);
  Func result = f;
  result.body = out;
  return result;
}

}  // namespace tessel::lower
