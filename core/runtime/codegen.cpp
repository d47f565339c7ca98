#include "core/runtime/codegen.h"

#include "core/support/error.h"

namespace tessel {

CodeGenRegistry& CodeGenRegistry::global() {
  static CodeGenRegistry r;
  return r;
}

void CodeGenRegistry::add(const std::string& target_kind, CodeGenFn fn, const std::string& provider) {
  if (has(target_kind))
    throw Error("target kind '" + target_kind + "' already has a code generator (from " + this->provider(target_kind) + ")");
  entries_.push_back({target_kind, std::move(fn), provider});
}

bool CodeGenRegistry::has(const std::string& target_kind) const {
  for (const Entry& e : entries_)
    if (e.kind == target_kind) return true;
  return false;
}

const CodeGenFn& CodeGenRegistry::get(const std::string& target_kind) const {
  for (const Entry& e : entries_)
    if (e.kind == target_kind) return e.fn;
  std::string known;
  for (const Entry& e : entries_) known += (known.empty() ? "" : ", ") + e.kind;
  throw Error("no code generator for target kind '" + target_kind + "' (available: " + (known.empty() ? "none" : known) +
              "; are the plugins loaded? see `tessel targets`)");
}

std::vector<std::string> CodeGenRegistry::kinds() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.kind);
  return out;
}

std::string CodeGenRegistry::provider(const std::string& target_kind) const {
  for (const Entry& e : entries_)
    if (e.kind == target_kind) return e.provider;
  return "";
}

std::unique_ptr<Module> build_module(const std::vector<loopir::Func>& kernels, const Target& target) {
  const CodeGenFn& fn = CodeGenRegistry::global().get(target.kind());
  return fn(kernels, target);
}

std::string codegen_refusal(const loopir::Func& kernel, const Target& target) {
  try {
    (void)build_module({kernel}, target);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace tessel
