// KernelEmitter's calls (codegen_llvm_emitter.h): the loop IR's math functions (f32 exp, sigmoid,
// tanh and erf as inline vector polynomials, others as LLVM intrinsics or libm lane by lane),
// tensor intrinsics as calls into libtessel_core or as the target's VNNI instruction, prefetch
// hints, and the dependence tokens a CPU thread already satisfies.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <set>

#include "plugins/llvm_cpu/codegen_llvm_emitter.h"
#include "plugins/llvm_cpu/vector_math.h"

namespace tessel::llvm_cpu {

llvm::Value* KernelEmitter::call(const ir::Call& n) {
  // Dependence tokens between an accelerator's queues (inject_virtual_thread): one CPU thread
  // runs the queues' work in program order, so every token is already satisfied.
  if (n.is_dependence_token()) return llvm::Constant::getNullValue(scalar_type(n.dtype));
  // prefetch(address_of(B[i])) (inject_prefetch): a read hint into the L2 cache (locality 2 is
  // prefetcht1 on x86): the line is needed a block of work later, not by the next instructions.
  if (n.builtin == ir::Builtin::kPrefetch && n.args.size() == 1) {
    b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {b_.getPtrTy()},
                       {operand_address(n, n.args[0]), b_.getInt32(0), b_.getInt32(2), b_.getInt32(1)});
    return llvm::Constant::getNullValue(scalar_type(n.dtype));
  }
  // A tensor intrinsic call: a void C function of libtessel_core (core/runtime/tensor_intrinsics.h)
  // taking pointers to operand regions (address_of(BUFFER[index])) and int64 strides.
  if (n.name == "tessel_intrin_dot_16x4_u8i8_i32" && options_.vnni != VnniForm::kNone)
    if (vnni_dot(n)) return llvm::Constant::getNullValue(scalar_type(n.dtype));
  if (n.name == "tessel_intrin_dot_16x4_u8i8_i32_reset" && n.args.size() == 1) {  // 16 zero lanes, on every CPU
    b_.CreateAlignedStore(llvm::Constant::getNullValue(llvm::FixedVectorType::get(b_.getInt32Ty(), 16)),
                          operand_address(n, n.args[0]), llvm::Align(4));
    return llvm::Constant::getNullValue(scalar_type(n.dtype));
  }
  if (n.builtin == ir::Builtin::kTensorIntrinsic) {
    std::vector<llvm::Value*> cargs;
    std::vector<llvm::Type*> types;
    for (const auto& a : n.args) {
      auto* addr = ir::as<ir::Call>(a);
      const ir::Load* l = ir::address_of_load(a);
      if (addr && addr->builtin == ir::Builtin::kAddressOf && !l) fail(n.name + ": address_of takes one buffer access");
      cargs.push_back(l ? b_.CreateGEP(memory_type(l->buffer->dtype), slot(l->buffer).ptr, flat_index(l->buffer, l->indices))
                        : convert(expr(a), a->dtype, DataType::kInt64));
      types.push_back(cargs.back()->getType());
    }
    b_.CreateCall(module_.getOrInsertFunction(n.name, llvm::FunctionType::get(b_.getVoidTy(), types, false)), cargs);
    return llvm::Constant::getNullValue(scalar_type(n.dtype));
  }
  std::vector<llvm::Value*> args;
  for (const auto& a : n.args) args.push_back(convert(expr(a), a->dtype, n.dtype));
  for (auto& a : args)
    for (auto& other : args) a = splat_to(a, other);
  auto need = [&](size_t k) {
    if (args.size() != k) fail("intrinsic '" + n.name + "' takes " + std::to_string(k) + " arguments");
  };
  bool fp = dtype_is_float(n.dtype);
  llvm::Type* ty = args.empty() ? scalar_type(n.dtype) : args[0]->getType();
  auto unary = [&](llvm::Intrinsic::ID id) {
    need(1);
    return b_.CreateUnaryIntrinsic(id, args[0]);
  };
  // f32 exp, sigmoid, tanh and erf are inline polynomials (vector_math.h): LLVM would otherwise call
  // expf once per lane of a vector. f64 (and f16) keep the intrinsics and libm.
  const bool single = fp && is_single_float(ty);
  if (single && (n.name == "exp" || n.name == "sigmoid" || n.name == "tanh" || n.name == "erf")) {
    need(1);
    const MathTarget math{options_.avx512f};
    if (n.name == "exp") return emit_exp(b_, args[0], math);
    if (n.name == "erf") return emit_erf(b_, args[0], math);
    return n.name == "sigmoid" ? emit_sigmoid(b_, args[0], math) : emit_tanh(b_, args[0], math);
  }
  if (n.name == "exp" && fp) return unary(llvm::Intrinsic::exp);
  if (n.name == "log" && fp) return unary(llvm::Intrinsic::log);
  if (n.name == "sqrt" && fp) return unary(llvm::Intrinsic::sqrt);
  if (n.name == "rsqrt" && fp) return b_.CreateFDiv(llvm::ConstantFP::get(ty, 1.0), unary(llvm::Intrinsic::sqrt));
  if (n.name == "abs") {
    need(1);
    if (fp) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, args[0]);
    return b_.CreateSelect(b_.CreateICmpSLT(args[0], llvm::Constant::getNullValue(ty)), b_.CreateNeg(args[0]), args[0]);
  }
  if (n.name == "sigmoid" && fp) {
    need(1);
    llvm::Value* one = llvm::ConstantFP::get(ty, 1.0);
    llvm::Value* e = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(args[0]));
    return b_.CreateFDiv(one, b_.CreateFAdd(one, e));
  }
  if (n.name == "pow" && fp) {
    need(2);
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
  }
  if (n.name == "fma" && fp) {
    need(3);
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {ty}, args);
  }
  if (n.name == "fmod" && fp) {
    need(2);
    return b_.CreateFRem(args[0], args[1]);  // frem is C's fmod: the dividend's sign
  }
  static const std::set<std::string> libm_unary = {"tanh", "erf",  "sin",  "cos",  "tan",   "asin",
                                                   "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"};
  if (libm_unary.count(n.name) && fp) {
    need(1);
    return libm_call(n.name, args[0], n.dtype);
  }
  fail("unknown intrinsic '" + n.name + "' for " + std::string(dtype_name(n.dtype)));
}

// dot_16x4_u8i8_i32(&A[a], &B[b], ldb, &C[c]) as the target's vpdpbusd when B's rows are packed
// (ldb = 4, so the 16 × 4 bytes are one 64-byte vector); false (emit nothing) otherwise.
//
//   A's 4 bytes, one i32 ──splat──► <16 x i32>  ┐
//   B's 64 bytes       ──load───► <16 x i32>  ├─ vpdpbusd(C, A, B): C[j] += Σ_k u8(A)[k] · s8(B)[j, k]
//   C's 16 × s32       ──load───► <16 x i32>  ┘   (wrapping, not saturating: vpdpbusds would clamp)
//
// avx-vnni has only the 256-bit form: two steps over lanes 0..7 and 8..15.
bool KernelEmitter::vnni_dot(const ir::Call& n) {
  int64_t ldb = 0;
  if (n.args.size() != 4 || !ir::is_const_int(n.args[2], &ldb) || ldb != 4) return false;
  llvm::Value *a = operand_address(n, n.args[0]), *b = operand_address(n, n.args[1]),
              *c = operand_address(n, n.args[3]);
  llvm::Type* i32 = b_.getInt32Ty();
  auto* v16 = llvm::FixedVectorType::get(i32, 16);
  llvm::Value* lhs = b_.CreateVectorSplat(16, b_.CreateAlignedLoad(i32, a, llvm::Align(1)));
  llvm::Value* rhs = b_.CreateAlignedLoad(v16, b, llvm::Align(1));
  llvm::Value* acc = b_.CreateAlignedLoad(v16, c, llvm::Align(4));
  llvm::Value* sum = nullptr;
  if (options_.vnni == VnniForm::kAvx512Vnni512) {
    sum = b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpbusd_512, {}, {acc, lhs, rhs});
  } else {
    auto half = [&](llvm::Value* v, int h) {
      return b_.CreateShuffleVector(v, {8 * h, 8 * h + 1, 8 * h + 2, 8 * h + 3, 8 * h + 4, 8 * h + 5, 8 * h + 6,
                                        8 * h + 7});
    };
    llvm::Value* parts[2];
    for (int h = 0; h < 2; ++h)
      parts[h] = b_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpbusd_256, {},
                                    {half(acc, h), half(lhs, h), half(rhs, h)});
    sum = b_.CreateShuffleVector(parts[0], parts[1], {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  }
  b_.CreateAlignedStore(sum, c, llvm::Align(4));
  return true;
}

llvm::Value* KernelEmitter::operand_address(const ir::Call& n, const ir::Expr& arg) {
  const ir::Load* l = ir::address_of_load(arg);
  if (!l) fail(n.name + ": an operand is not address_of(BUFFER[index])");
  return b_.CreateGEP(memory_type(l->buffer->dtype), slot(l->buffer).ptr, flat_index(l->buffer, l->indices));
}

// A libm function without an LLVM intrinsic, applied lane by lane to vectors.
llvm::Value* KernelEmitter::libm_call(const std::string& name, llvm::Value* x, DataType t) {
  bool single = t != DataType::kFloat64;
  llvm::Type* fty = single ? b_.getFloatTy() : b_.getDoubleTy();
  llvm::FunctionCallee fn = module_.getOrInsertFunction(single ? name + "f" : name, fty, fty);
  auto apply = [&](llvm::Value* scalar) {
    llvm::Value* in = scalar->getType() == fty ? scalar : b_.CreateFPCast(scalar, fty);
    llvm::Value* out = b_.CreateCall(fn, {in});
    return scalar->getType() == fty ? out : b_.CreateFPCast(out, scalar->getType());
  };
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vt) return apply(x);
  llvm::Value* result = llvm::UndefValue::get(vt);
  for (unsigned lane = 0; lane < vt->getNumElements(); ++lane)
    result = b_.CreateInsertElement(result, apply(b_.CreateExtractElement(x, lane)), lane);
  return result;
}

}  // namespace tessel::llvm_cpu
