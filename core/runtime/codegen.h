#pragma once
// CodeGen: one per target kind. Takes the lowered kernels and the Target (never the device:
// compilation may happen away from it) and returns a runtime Module.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/loopir/ir.h"
#include "core/runtime/module.h"
#include "core/target/target.h"

namespace tessel {

using CodeGenFn = std::function<std::unique_ptr<Module>(const std::vector<loopir::Func>& kernels, const Target& target)>;

class CodeGenRegistry {
 public:
  static CodeGenRegistry& global();
  void add(const std::string& target_kind, CodeGenFn fn, const std::string& provider);  // throws when taken
  bool has(const std::string& target_kind) const;
  // Throws Error naming the kind and listing the kinds that have a code generator.
  const CodeGenFn& get(const std::string& target_kind) const;
  std::vector<std::string> kinds() const;
  std::string provider(const std::string& target_kind) const;

 private:
  struct Entry {
    std::string kind;
    CodeGenFn fn;
    std::string provider;
  };
  std::vector<Entry> entries_;
};

// Generates code for `kernels` with the code generator of target.kind(); errors name the kernel
// and the stage: "kernel 'fused_conv2d_relu_0': llvm codegen: ...".
std::unique_ptr<Module> build_module(const std::vector<loopir::Func>& kernels, const Target& target);

// Why the code generator of target.kind() does not take `kernel` ("" when it does), asked by
// generating the kernel alone. An accelerator's generator refuses some programs (and simulates each
// one to find races and deadlocks), so placement asks kernel by kernel and never has to read a
// kernel's name back out of a whole module's error.
std::string codegen_refusal(const loopir::Func& kernel, const Target& target);

}  // namespace tessel
