#pragma once
// Loop IR → LLVM IR. One LLVM function per kernel with the runtime's calling convention
//
//   void <kernel>(void** args)      args[k] = data of parameter k (inputs, then outputs)
//
// which unpacks the buffers into a body function whose pointer parameters are noalias and
// 64-byte aligned. Vectorized loops become real vector code (contiguous accesses as vector loads
// and stores, others as gathers/scatters); parallel loops are outlined into chunk functions run by
// tessel_parallel_for; unrolled loops carry full-unroll metadata.
//
// Throws tessel::Error naming the kernel and the construct it cannot compile. No LLVM exception
// ever unwinds (LLVM is built without exceptions); errors are thrown from our own frames only.
#include <memory>
#include <vector>

#include "core/loopir/ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessel::llvm_cpu {

// The x86 VNNI dot product (vpdpbusd) the target offers, if any: a tensorized
// dot_16x4_u8i8_i32 step (core/te/tensor_intrinsic.h) becomes that instruction instead of a call.
enum class VnniForm { kNone, kAvxVnni256, kAvx512Vnni512 };

struct CodegenOptions {
  bool fast_math = false;  // otherwise only FMA contraction is allowed
  VnniForm vnni = VnniForm::kNone;
  bool avx512f = false;  // vscalefps in exp (vector_math.h)
};

std::unique_ptr<llvm::Module> emit_llvm_module(llvm::LLVMContext& ctx, const std::vector<loopir::Func>& kernels,
                                               const CodegenOptions& options);

}  // namespace tessel::llvm_cpu
