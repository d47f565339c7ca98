#include "core/lower/storage_flatten.h"

#include <map>

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"

namespace tessel::lower {
using namespace loopir;

namespace {

class Flattener : public IRMutator {
 public:
  explicit Flattener(const std::vector<Buffer>& params) {
    for (auto& p : params) declared_[p->name] = p;
  }

 protected:
  Stmt mutate_Allocate(const Allocate& n, const Stmt& self) override {
    auto saved = declared_.find(n.buffer->name) != declared_.end() ? declared_[n.buffer->name] : nullptr;
    declared_[n.buffer->name] = n.buffer;
    Stmt body = mutate(n.body);
    if (saved)
      declared_[n.buffer->name] = saved;
    else
      declared_.erase(n.buffer->name);
    Buffer flat = flat_buffer(*n.buffer);
    if (!flat) flat = n.buffer;
    if (body == n.body && flat == n.buffer) return self;
    return make_allocate(flat, body);
  }
  Expr mutate_Load(const Load& n, const Expr& self) override {
    Expr e = IRMutator::mutate_Load(n, self);
    auto* l = as<Load>(e);
    if (l->indices.size() <= 1) return e;
    const Buffer& decl = declared(l->buffer);
    return make_load(flat_buffer(*decl), {offset(*decl, l->indices)});
  }
  Stmt mutate_Store(const Store& n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Store(n, self);
    auto* st = as<Store>(s);
    if (st->indices.size() <= 1) return s;
    const Buffer& decl = declared(st->buffer);
    return make_store(flat_buffer(*decl), {offset(*decl, st->indices)}, st->value);
  }

 private:
  const Buffer& declared(const Buffer& b) {
    auto it = declared_.find(b->name);
    return it == declared_.end() ? b : it->second;
  }
  Buffer flat_buffer(const BufferNode& b) {
    if (b.shape.size() <= 1 && b.strides.empty()) return nullptr;
    std::string key = b.name + "/" + b.scope + "/" + std::to_string(buffer_span(b));
    auto& slot = flat_[key];
    if (!slot) slot = make_buffer(b.name, b.dtype, {buffer_span(b)}, b.scope);
    return slot;
  }
  static Expr offset(const BufferNode& b, const std::vector<Expr>& idx) {
    Shape strides = b.strides.empty() ? contiguous_strides(b.shape) : b.strides;
    Expr e;
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr term = strides[d] == 1 ? idx[d] : idx[d] * strides[d];
      e = e ? e + term : term;
    }
    return arith::simplify(e);
  }
  std::map<std::string, Buffer> declared_;
  std::map<std::string, Buffer> flat_;
};

}  // namespace

Func flatten_storage(const Func& f) {
  Flattener fl(f.params);
  Func out = f;
  out.body = fl.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
