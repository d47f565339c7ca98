#pragma once
// Compiles kernels to machine code in this process: loop IR → LLVM IR (codegen_llvm) → O3 with
// the target machine's cost model → ORC LLJIT. The resulting runtime Module keeps the JIT alive
// and returns the optimized LLVM IR and the assembly as artifacts.
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/module.h"
#include "core/loopir/ir.h"

namespace tessel::llvm_cpu {

struct JitOptions {
  std::string mcpu;    // "native" or an LLVM CPU name ("znver4", "skylake-avx512")
  std::string mattr;   // "" = the host's features; else "+avx2,-avx512f" style
  int opt_level = 3;
  bool fast_math = false;
  bool emit_asm = true;  // offer "asm" among the artifacts (made on first request: a second backend run)
};

std::unique_ptr<Module> jit_compile(const std::vector<loopir::Func>& kernels, const JitOptions& options);

// Host CPU name and feature string as LLVM sees them (for `tessel targets`).
std::string host_cpu_name();
std::string host_cpu_features();
// Whether the host has an x86 VNNI dot product (avx512-vnni or avx-vnni).
bool host_has_vnni();

}  // namespace tessel::llvm_cpu
