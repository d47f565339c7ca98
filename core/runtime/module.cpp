#include "core/runtime/module.h"

#include <tuple>

#include "core/loopir/ir.h"
#include "core/support/error.h"

namespace tessel {

KernelSignature kernel_signature(const loopir::Func& f) {
  KernelSignature sig{f.name, {}, loopir::check_messages(f)};
  for (const auto& p : f.params) sig.params.push_back({p->name, p->dtype, p->shape});
  return sig;
}

size_t Module::index_of(const std::string& name) const {
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (kernels_[i].name == name) return i;
  std::string known;
  for (const auto& k : kernels_) known += (known.empty() ? "" : ", ") + k.name;
  throw Error("module (" + target_kind() + ") has no kernel '" + name +
              "' (kernels: " + (known.empty() ? "none" : known) + ")");
}

bool Module::has_kernel(const std::string& name) const {
  for (const auto& k : kernels_)
    if (k.name == name) return true;
  return false;
}

void Module::save_object(const std::string&) const {
  throw Error("the " + target_kind() + " backend has no object code to save (build with --target llvm or c)");
}

const KernelSignature& Module::signature(const std::string& name) const { return kernels_[index_of(name)]; }

void Module::check_arg(const KernelSignature& sig, size_t k, DataType dtype, const Shape& shape) const {
  const KernelParam& p = sig.params[k];
  if (p.dtype != dtype || p.shape != shape)
    throw Error("kernel '" + sig.name + "' argument " + std::to_string(k) + " (" + p.name + ") expects " +
                std::string(dtype_name(p.dtype)) + shape_str(p.shape) + ", got " + std::string(dtype_name(dtype)) +
                shape_str(shape));
}

// Checks the arguments of kernel `name` and runs it; `describe(k)` gives argument k's dtype,
// shape and data.
template <class Describe>
void Module::checked_invoke(const std::string& name, size_t count, bool host, const Describe& describe) const {
  size_t index = index_of(name);
  const KernelSignature& sig = kernels_[index];
  if (count != sig.params.size())
    throw Error("kernel '" + name + "' takes " + std::to_string(sig.params.size()) + " arguments, got " +
                std::to_string(count));
  std::vector<void*> data;
  for (size_t k = 0; k < count; ++k) {
    auto [dtype, shape, ptr] = describe(k);
    check_arg(sig, k, dtype, shape);
    data.push_back(ptr);
  }
  loopir::CheckRecord record;
  data.push_back(&record);
  if (host)
    invoke_host(index, data.data());
  else
    invoke(index, data.data());
  if (record.check != 0) throw Error("kernel '" + name + "': " + loopir::check_failure_text(sig.checks, record));
}

void Module::call(const std::string& name, const std::vector<const NDArray*>& args) const {
  checked_invoke(name, args.size(), false,
                 [&](size_t k) { return std::make_tuple(args[k]->dtype(), args[k]->shape(), args[k]->data()); });
}

void Module::call_host(const std::string& name, const std::vector<Tensor*>& args) const {
  checked_invoke(name, args.size(), true, [&](size_t k) {
    return std::make_tuple(args[k]->dtype(), args[k]->shape(), static_cast<void*>(args[k]->raw_data()));
  });
}

}  // namespace tessel
