#include "plugins/llvm_cpu/codegen_llvm.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <set>
#include <unordered_map>

#include "core/loopir/equal.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"
#include "plugins/llvm_cpu/vector_math.h"

namespace tessel::llvm_cpu {

namespace {

namespace ir = tessel::loopir;

constexpr unsigned kBufferAlignment = 64;       // Tensor and NDArray storage is 64-byte aligned
constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;
constexpr int64_t kMaxVectorLanes = 64;
constexpr int64_t kMaxStrideForWideLoad = 4;  // beyond it a gather touches fewer cache lines per lane

// How a vectorized loop's variable enters an index: index = base + coefficient * var.
std::optional<int64_t> linear_coefficient(const ir::Expr& e, const ir::Var* v) {
  if (auto* var = ir::as<ir::Var>(e)) return var == v ? 1 : 0;
  if (ir::as<ir::IntImm>(e) || ir::as<ir::FloatImm>(e)) return 0;
  if (auto* b = ir::as<ir::Binary>(e)) {
    auto ca = linear_coefficient(b->a, v), cb = linear_coefficient(b->b, v);
    switch (b->op) {
      case ir::BinaryOp::kAdd:
        if (ca && cb) return *ca + *cb;
        break;
      case ir::BinaryOp::kSub:
        if (ca && cb) return *ca - *cb;
        break;
      case ir::BinaryOp::kMul: {
        int64_t k;
        if (ca && ir::is_const_int(b->b, &k)) return *ca * k;
        if (cb && ir::is_const_int(b->a, &k)) return *cb * k;
        break;
      }
      default: break;
    }
  }
  if (!ir::uses_var(e, [v](const ir::Var* x) { return x == v; })) return 0;
  return std::nullopt;
}

// Flat element offset of an access: sum of index_k * stride_k.
std::vector<int64_t> strides_of(const ir::BufferNode& b) {
  return b.strides.empty() ? contiguous_strides(b.shape) : b.strides;
}

std::optional<int64_t> access_coefficient(const ir::Buffer& b, const std::vector<ir::Expr>& idx, const ir::Var* v) {
  std::vector<int64_t> strides = strides_of(*b);
  if (idx.size() == 1 && b->shape.size() != 1) strides = {1};  // already flattened
  int64_t total = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    auto c = linear_coefficient(idx[k], v);
    if (!c) return std::nullopt;
    total += *c * strides[k];
  }
  return total;
}

class KernelEmitter {
 public:
  KernelEmitter(llvm::Module& m, const CodegenOptions& options)
      : module_(m), ctx_(m.getContext()), b_(ctx_), options_(options) {
    llvm::FastMathFlags fmf;
    if (options.fast_math) fmf.setFast();
    else fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }

  void emit(const ir::Func& f) {
    kernel_ = f.name;
    for (const std::string& message : ir::check_messages(f))
      check_ids_[message] = static_cast<int64_t>(check_ids_.size()) + 1;
    // The body function: typed, noalias, aligned buffer pointers, then the check record.
    std::vector<llvm::Type*> params(f.params.size() + 1, b_.getPtrTy());
    auto* body_ty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    auto* body_fn = llvm::Function::Create(body_ty, llvm::Function::InternalLinkage, f.name + ".body", module_);
    body_fn->addFnAttr(llvm::Attribute::AlwaysInline);
    body_fn->addFnAttr(llvm::Attribute::NoUnwind);
    for (size_t k = 0; k < f.params.size(); ++k) {
      body_fn->addParamAttr(static_cast<unsigned>(k), llvm::Attribute::NoAlias);
      body_fn->addParamAttr(static_cast<unsigned>(k), llvm::Attribute::getWithAlignment(ctx_, llvm::Align(kBufferAlignment)));
      body_fn->getArg(static_cast<unsigned>(k))->setName(f.params[k]->name);
    }
    begin_function(body_fn);
    for (size_t k = 0; k < f.params.size(); ++k) buffers_[f.params[k]->name] = {body_fn->getArg(static_cast<unsigned>(k)), f.params[k]};
    check_record_ = body_fn->getArg(static_cast<unsigned>(f.params.size()));
    check_record_->setName("check_record");
    if (f.body) stmt(f.body);
    b_.CreateRetVoid();

    // The entry point: void kernel(void** args), args = the buffers, then the check record.
    auto* entry_ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false);
    auto* entry_fn = llvm::Function::Create(entry_ty, llvm::Function::ExternalLinkage, f.name, module_);
    entry_fn->addFnAttr(llvm::Attribute::NoUnwind);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", entry_fn));
    std::vector<llvm::Value*> args;
    for (size_t k = 0; k <= f.params.size(); ++k) {
      llvm::Value* slot = b_.CreateConstGEP1_64(b_.getPtrTy(), entry_fn->getArg(0), k);
      args.push_back(b_.CreateLoad(b_.getPtrTy(), slot, k < f.params.size() ? f.params[k]->name : "check_record"));
    }
    b_.CreateCall(body_fn, args);
    b_.CreateRetVoid();
  }

 private:
  struct BufferSlot {
    llvm::Value* ptr = nullptr;
    ir::Buffer buffer;
  };

  [[noreturn]] void fail(const std::string& why) const { throw Error("kernel '" + kernel_ + "': llvm codegen: " + why); }

  void begin_function(llvm::Function* fn) {
    function_ = fn;
    entry_block_ = llvm::BasicBlock::Create(ctx_, "entry", fn);
    b_.SetInsertPoint(entry_block_);
  }

  // ------------------------------------------------------------------ types and conversions

  llvm::Type* scalar_type(DataType t) {
    switch (t) {
      case DataType::kFloat32: return b_.getFloatTy();
      case DataType::kFloat64: return b_.getDoubleTy();
      case DataType::kFloat16: return b_.getHalfTy();
      case DataType::kBFloat16: return b_.getBFloatTy();
      case DataType::kInt8: case DataType::kUInt8: return b_.getInt8Ty();
      case DataType::kInt16: case DataType::kUInt16: return b_.getInt16Ty();
      case DataType::kInt32: case DataType::kUInt32: return b_.getInt32Ty();
      case DataType::kInt64: case DataType::kUInt64: return b_.getInt64Ty();
      case DataType::kBool: return b_.getInt1Ty();
      case DataType::kString: break;  // never compiled (te_from_graph declines string values)
    }
    return b_.getFloatTy();
  }
  // Bools are i1 in registers and i8 in memory.
  llvm::Type* memory_type(DataType t) { return t == DataType::kBool ? b_.getInt8Ty() : scalar_type(t); }
  llvm::Type* with_lanes(llvm::Type* scalar, llvm::Value* like) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType())) return llvm::FixedVectorType::get(scalar, vt->getNumElements());
    return scalar;
  }
  static bool is_vector(llvm::Value* v) { return v->getType()->isVectorTy(); }
  llvm::Value* splat_to(llvm::Value* v, llvm::Value* like) {
    if (is_vector(v) || !is_vector(like)) return v;
    return b_.CreateVectorSplat(llvm::cast<llvm::FixedVectorType>(like->getType())->getNumElements(), v);
  }

  llvm::Value* convert(llvm::Value* v, DataType from, DataType to) {
    if (from == to) return v;
    // bfloat16 goes through float32 with integer ops (LLVM 15 would call compiler-rt's
    // __truncsfbf2, which the JIT does not have), rounding as core/support's to_bfloat16 does.
    if (from == DataType::kBFloat16) return convert(bfloat16_to_float(v), DataType::kFloat32, to);
    if (to == DataType::kBFloat16) return float_to_bfloat16(convert(v, from, DataType::kFloat32));
    llvm::Type* dst = with_lanes(scalar_type(to), v);
    bool from_float = dtype_is_float(from), to_float = dtype_is_float(to);
    bool from_unsigned = dtype_is_unsigned(from) || from == DataType::kBool;
    if (to == DataType::kBool) {
      if (from_float) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
      return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (from_float && to_float) return b_.CreateFPCast(v, dst);
    if (from_float) return dtype_is_unsigned(to) ? b_.CreateFPToUI(v, dst) : b_.CreateFPToSI(v, dst);
    if (to_float) return from_unsigned ? b_.CreateUIToFP(v, dst) : b_.CreateSIToFP(v, dst);
    return b_.CreateIntCast(v, dst, !from_unsigned);
  }

  // bfloat16 is the upper half of a float32: widening shifts its bits up.
  llvm::Value* bfloat16_to_float(llvm::Value* v) {
    llvm::Value* bits =
        b_.CreateZExt(b_.CreateBitCast(v, with_lanes(b_.getInt16Ty(), v)), with_lanes(b_.getInt32Ty(), v));
    return b_.CreateBitCast(b_.CreateShl(bits, splat_to(b_.getInt32(16), bits)), with_lanes(b_.getFloatTy(), v));
  }
  // Round to nearest even: add 0x7fff plus the kept half's lowest bit, keep the upper half. A NaN
  // keeps its upper half with the quiet bit set (adding could carry it into an infinity).
  llvm::Value* float_to_bfloat16(llvm::Value* v) {
    llvm::Value* bits = b_.CreateBitCast(v, with_lanes(b_.getInt32Ty(), v));
    auto k = [&](uint32_t c) { return splat_to(b_.getInt32(c), bits); };
    llvm::Value* upper = b_.CreateLShr(bits, k(16));
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(k(0x7fff), b_.CreateAnd(upper, k(1)))), k(16));
    llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(bits, k(0x7fffffff)), k(0x7f800000));
    llvm::Value* half = b_.CreateSelect(is_nan, b_.CreateOr(upper, k(0x40)), rounded);
    return b_.CreateBitCast(b_.CreateTrunc(half, with_lanes(b_.getInt16Ty(), v)), with_lanes(b_.getBFloatTy(), v));
  }

  // ------------------------------------------------------------------ expressions

  llvm::Value* expr(const ir::Expr& e) {
    switch (e->kind) {
      case ir::NodeKind::kIntImm: {
        auto* n = ir::as<ir::IntImm>(e);
        if (dtype_is_float(n->dtype)) return llvm::ConstantFP::get(scalar_type(n->dtype), static_cast<double>(n->value));
        return llvm::ConstantInt::get(scalar_type(n->dtype), static_cast<uint64_t>(n->value), true);
      }
      case ir::NodeKind::kFloatImm: {
        auto* n = ir::as<ir::FloatImm>(e);
        if (!dtype_is_float(n->dtype)) return llvm::ConstantInt::get(scalar_type(n->dtype), static_cast<uint64_t>(n->value), true);
        return llvm::ConstantFP::get(scalar_type(n->dtype), n->value);
      }
      case ir::NodeKind::kVar: {
        auto* n = ir::as<ir::Var>(e);
        auto it = vars_.find(n);
        if (it == vars_.end()) fail("variable '" + n->name + "' is used outside its loop or let");
        return it->second;
      }
      case ir::NodeKind::kBinary: return binary(*ir::as<ir::Binary>(e));
      case ir::NodeKind::kNot: return b_.CreateNot(convert(expr(ir::as<ir::Not>(e)->a), ir::as<ir::Not>(e)->a->dtype, DataType::kBool));
      case ir::NodeKind::kSelect: return select(*ir::as<ir::Select>(e));
      case ir::NodeKind::kCast: {
        auto* n = ir::as<ir::Cast>(e);
        return convert(expr(n->value), n->value->dtype, n->dtype);
      }
      case ir::NodeKind::kLoad: return load(*ir::as<ir::Load>(e));
      case ir::NodeKind::kCall: return call(*ir::as<ir::Call>(e));
      case ir::NodeKind::kReduce: fail("a reduction expression reached code generation (it should have been lowered to loops)");
      case ir::NodeKind::kCheck:
        return check(*ir::as<ir::Check>(e));
      default: break;
    }
    fail("unexpected expression node " + std::string(ir::node_kind_name(e->kind)));
  }

  // select(c, t, f) evaluates both sides, branch-free. A side that loads is evaluated under the
  // guard c (or !c): its loads read a safe address where the guard is false (see guarded_index),
  // so a padded conv's select(in bounds, X[y - 1, ...], 0) never touches memory outside X.
  llvm::Value* select(const ir::Select& n) {
    llvm::Value* c = convert(expr(n.cond), n.cond->dtype, DataType::kBool);
    auto side = [&](const ir::Expr& value, llvm::Value* guard) {
      bool loads = false;
      ir::for_each_access(value, [&](const ir::Buffer&, const std::vector<ir::Expr>&, bool) { loads = true; });
      llvm::Value* saved = load_guard_;
      if (loads) load_guard_ = saved ? b_.CreateAnd(splat_to(saved, guard), splat_to(guard, saved)) : guard;
      llvm::Value* v = convert(expr(value), value->dtype, n.dtype);
      load_guard_ = saved;
      return v;
    };
    llvm::Value* t = side(n.true_value, c);
    llvm::Value* f = side(n.false_value, b_.CreateNot(c));
    llvm::Value* like = is_vector(c) ? c : is_vector(t) ? t : f;
    return b_.CreateSelect(splat_to(c, like), splat_to(t, like), splat_to(f, like));
  }

  // check(cond, value, message): one compare and a branch that is almost never taken, to a cold
  // block that records the failure (the first failing lane's reported value); the value goes on
  // as 0 where the check failed, so the access it indexes stays inside its buffer. Lanes whose
  // enclosing select discards the value (load_guard_ false) cannot fail.
  //
  //   ok = cond; br (!ok & guard) ? check.failed : check.ok      check.failed: tessel.check_failed(record, id, v); br
  //   check.ok check.ok: select(ok, value, 0)
  llvm::Value* check(const ir::Check& n) {
    llvm::Value* ok = convert(expr(n.condition), n.condition->dtype, DataType::kBool);
    llvm::Value* value = expr(n.value);
    llvm::Value* failed = b_.CreateNot(ok);
    if (load_guard_) failed = b_.CreateAnd(splat_to(failed, load_guard_), splat_to(load_guard_, failed));
    llvm::Value* any = is_vector(failed) ? b_.CreateOrReduce(failed) : failed;
    auto* failed_bb = llvm::BasicBlock::Create(ctx_, "check.failed", function_);
    auto* ok_bb = llvm::BasicBlock::Create(ctx_, "check.ok", function_);
    b_.CreateCondBr(any, failed_bb, ok_bb, llvm::MDBuilder(ctx_).createBranchWeights(1, 1u << 20));
    b_.SetInsertPoint(failed_bb);
    llvm::Value* reported = convert(expr(n.reported), n.reported->dtype, DataType::kInt64);
    if (is_vector(reported)) {
      llvm::Value* lane = b_.getInt64(0);
      if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(failed->getType())) {
        llvm::Value* bits = b_.CreateBitCast(failed, b_.getIntNTy(vt->getNumElements()));
        lane =
            b_.CreateZExtOrTrunc(b_.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, bits, b_.getTrue()), b_.getInt64Ty());
      }
      reported = b_.CreateExtractElement(reported, lane);
    }
    auto id = check_ids_.find(n.message);
    if (id == check_ids_.end()) fail("a check that check_messages does not list: " + n.message);
    b_.CreateCall(check_failed_function(), {check_record_, b_.getInt64(static_cast<uint64_t>(id->second)), reported});
    b_.CreateBr(ok_bb);
    b_.SetInsertPoint(ok_bb);
    value = splat_to(value, ok);
    return b_.CreateSelect(splat_to(ok, value), value, llvm::Constant::getNullValue(value->getType()));
  }

  // void tessel.check_failed(CheckRecord* record, i64 check, i64 value): the first failure to
  // claim the record (check still 0) writes its number and value; parallel chunks may race here.
  llvm::Function* check_failed_function() {
    if (llvm::Function* existing = module_.getFunction("tessel.check_failed")) return existing;
    auto* ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    auto* fn = llvm::Function::Create(ty, llvm::Function::InternalLinkage, "tessel.check_failed", module_);
    fn->addFnAttr(llvm::Attribute::Cold);
    fn->addFnAttr(llvm::Attribute::NoInline);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx_, "entry", fn));
    auto* store_bb = llvm::BasicBlock::Create(ctx_, "claimed", fn);
    auto* done_bb = llvm::BasicBlock::Create(ctx_, "done", fn);
    llvm::Value* claim = b.CreateAtomicCmpXchg(fn->getArg(0), b.getInt64(0), fn->getArg(1), llvm::MaybeAlign(8),
                                               llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
    b.CreateCondBr(b.CreateExtractValue(claim, 1), store_bb, done_bb);
    b.SetInsertPoint(store_bb);
    b.CreateStore(fn->getArg(2), b.CreateConstGEP1_64(b.getInt64Ty(), fn->getArg(0), 1));
    b.CreateBr(done_bb);
    b.SetInsertPoint(done_bb);
    b.CreateRetVoid();
    return fn;
  }

  // Where the enclosing select's guard is false, a load reads element 0 of its buffer instead of
  // its own index: always a valid address, and its value is discarded by the select.
  llvm::Value* guarded_index(llvm::Value* index) {
    if (!load_guard_) return index;
    llvm::Value* guard = load_guard_;
    if (is_vector(guard) && !is_vector(index)) guard = b_.CreateOrReduce(guard);  // a lane needs it: the address is real
    return b_.CreateSelect(splat_to(guard, index), index, llvm::Constant::getNullValue(index->getType()));
  }

  llvm::Value* binary(const ir::Binary& n) {
    using Op = ir::BinaryOp;
    DataType ta = n.a->dtype, tb = n.b->dtype;
    bool compare = ir::is_comparison(n.op), logical = ir::is_logical(n.op);
    // Operands meet in one type: the result's for arithmetic, the wider for comparisons.
    DataType operand = n.dtype;
    if (logical) operand = DataType::kBool;
    else if (compare) operand = dtype_is_float(ta) ? ta : dtype_is_float(tb) ? tb : dtype_size(ta) >= dtype_size(tb) ? ta : tb;
    llvm::Value* a = convert(expr(n.a), ta, operand);
    llvm::Value* b = convert(expr(n.b), tb, operand);
    a = splat_to(a, b);
    b = splat_to(b, a);
    bool fp = dtype_is_float(operand);
    bool is_unsigned = dtype_is_unsigned(operand) || operand == DataType::kBool;
    switch (n.op) {
      case Op::kAdd: return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
      case Op::kSub: return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
      case Op::kMul: return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
      case Op::kDiv: return fp ? b_.CreateFDiv(a, b) : is_unsigned ? b_.CreateUDiv(a, b) : floor_div(a, b);
      case Op::kMod: return fp ? float_floor_mod(a, b) : is_unsigned ? b_.CreateURem(a, b) : floor_mod(a, b);
      case Op::kMin:
        return fp ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b)
                  : b_.CreateSelect(is_unsigned ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b), a, b);
      case Op::kMax:
        return fp ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b)
                  : b_.CreateSelect(is_unsigned ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b), a, b);
      case Op::kEQ: return fp ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
      case Op::kNE: return fp ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
      case Op::kLT: return fp ? b_.CreateFCmpOLT(a, b) : is_unsigned ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b);
      case Op::kLE: return fp ? b_.CreateFCmpOLE(a, b) : is_unsigned ? b_.CreateICmpULE(a, b) : b_.CreateICmpSLE(a, b);
      case Op::kGT: return fp ? b_.CreateFCmpOGT(a, b) : is_unsigned ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b);
      case Op::kGE: return fp ? b_.CreateFCmpOGE(a, b) : is_unsigned ? b_.CreateICmpUGE(a, b) : b_.CreateICmpSGE(a, b);
      case Op::kAnd: return b_.CreateAnd(a, b);
      case Op::kOr: return b_.CreateOr(a, b);
    }
    fail("unknown binary operator");
  }

  // Floor division and modulo, the loop IR's integer semantics (the remainder takes the divisor's sign).
  llvm::Value* floor_div(llvm::Value* a, llvm::Value* b) {
    llvm::Value* q = b_.CreateSDiv(a, b);
    llvm::Value* r = b_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
    return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
  }
  llvm::Value* floor_mod(llvm::Value* a, llvm::Value* b) {
    llvm::Value* r = b_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
    return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
  }
  llvm::Value* float_floor_mod(llvm::Value* a, llvm::Value* b) {
    llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
    return b_.CreateFSub(a, b_.CreateFMul(q, b));
  }

  llvm::Value* call(const ir::Call& n) {
    // Dependence tokens between an accelerator's queues (inject_virtual_thread): one CPU thread
    // runs the queues' work in program order, so every token is already satisfied.
    if (n.name == "dep_push" || n.name == "dep_pop") return llvm::Constant::getNullValue(scalar_type(n.dtype));
    // prefetch(address_of(B[i])) (inject_prefetch): a read hint into the L2 cache (locality 2 is
    // prefetcht1 on x86): the line is needed a block of work later, not by the next instructions.
    if (n.name == "prefetch" && n.args.size() == 1) {
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
    if (n.name.rfind("tessel_intrin_", 0) == 0) {
      std::vector<llvm::Value*> cargs;
      std::vector<llvm::Type*> types;
      for (const auto& a : n.args) {
        auto* addr = ir::as<ir::Call>(a);
        auto* l = addr && addr->name == "address_of" && addr->args.size() == 1 ? ir::as<ir::Load>(addr->args[0]) : nullptr;
        if (addr && addr->name == "address_of" && !l) fail(n.name + ": address_of takes one buffer access");
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
  bool vnni_dot(const ir::Call& n) {
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
  llvm::Value* operand_address(const ir::Call& n, const ir::Expr& arg) {
    auto* addr = ir::as<ir::Call>(arg);
    auto* l = addr && addr->name == "address_of" && addr->args.size() == 1 ? ir::as<ir::Load>(addr->args[0]) : nullptr;
    if (!l) fail(n.name + ": an operand is not address_of(BUFFER[index])");
    return b_.CreateGEP(memory_type(l->buffer->dtype), slot(l->buffer).ptr, flat_index(l->buffer, l->indices));
  }

  // A libm function without an LLVM intrinsic, applied lane by lane to vectors.
  llvm::Value* libm_call(const std::string& name, llvm::Value* x, DataType t) {
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

  // ------------------------------------------------------------------ memory

  const BufferSlot& slot(const ir::Buffer& b) {
    auto it = buffers_.find(b->name);
    if (it == buffers_.end()) fail("buffer '" + b->name + "' is not a parameter and not allocated here");
    return it->second;
  }

  // The flat element offset (i64, scalar or vector) of an access.
  llvm::Value* flat_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
    std::vector<int64_t> strides = strides_of(*b);
    if (idx.size() == 1 && b->shape.size() != 1) strides = {1};
    if (idx.size() != strides.size())
      fail("access to '" + b->name + "' has " + std::to_string(idx.size()) + " indices for a rank-" + std::to_string(b->shape.size()) + " buffer");
    llvm::Value* total = nullptr;
    for (size_t k = 0; k < idx.size(); ++k) {
      llvm::Value* i = convert(expr(idx[k]), idx[k]->dtype, DataType::kInt64);
      if (strides[k] != 1) i = b_.CreateMul(i, splat_to(b_.getInt64(static_cast<uint64_t>(strides[k])), i));
      if (!total) total = i;
      else {
        total = splat_to(total, i);
        total = b_.CreateAdd(total, splat_to(i, total));
      }
    }
    return total ? total : b_.getInt64(0);
  }

  // In a widened loop, an access whose index moves by one element per lane is one vector access;
  // evaluate its index with the loop variable at its first lane.
  llvm::Value* first_lane_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
    llvm::Value* ramp = vars_[vector_var_];
    vars_[vector_var_] = vector_base_;
    llvm::Value* i = flat_index(b, idx);
    vars_[vector_var_] = ramp;
    return i;
  }

  llvm::Value* load(const ir::Load& n) {
    const BufferSlot& s = slot(n.buffer);
    llvm::Type* elem = memory_type(n.buffer->dtype);
    llvm::Value* value;
    llvm::Align align(elem->getPrimitiveSizeInBits() / 8);
    if (vector_var_) {
      auto coeff = access_coefficient(n.buffer, n.indices, vector_var_);
      auto* vty = llvm::FixedVectorType::get(elem, static_cast<unsigned>(lanes_));
      if (coeff && *coeff == 1) {
        llvm::Value* first = first_lane_index(n.buffer, n.indices);
        if (load_guard_ && is_vector(load_guard_)) {
          // Lanes differ in whether they may read: a masked load touches only the allowed ones.
          llvm::Value* ptr = b_.CreateGEP(elem, s.ptr, first);
          value = b_.CreateMaskedLoad(vty, ptr, align, load_guard_, llvm::Constant::getNullValue(vty));
        } else {
          value = b_.CreateAlignedLoad(vty, b_.CreateGEP(elem, s.ptr, guarded_index(first)), align);
        }
      } else if (coeff && *coeff == 0) {
        value = b_.CreateLoad(elem, b_.CreateGEP(elem, s.ptr, guarded_index(first_lane_index(n.buffer, n.indices))));
      } else if (coeff && *coeff >= 2 && *coeff <= kMaxStrideForWideLoad && lanes_ * *coeff <= kMaxVectorLanes) {
        value = strided_load(elem, s.ptr, first_lane_index(n.buffer, n.indices), *coeff);
      } else {
        llvm::Value* ptrs = b_.CreateGEP(elem, s.ptr, guarded_index(flat_index(n.buffer, n.indices)));
        value = b_.CreateMaskedGather(vty, ptrs, align);
      }
    } else {
      value = b_.CreateLoad(elem, b_.CreateGEP(elem, s.ptr, guarded_index(flat_index(n.buffer, n.indices))));
    }
    if (n.buffer->dtype == DataType::kBool) value = b_.CreateTrunc(value, with_lanes(b_.getInt1Ty(), value));
    return value;
  }

  // A load whose index moves by `stride` (2..4) elements per lane, such as a stride-2 conv's
  // input row: one masked wide load of lanes * stride elements, then a shuffle that keeps every
  // stride-th. The mask enables only the kept elements (and only lanes whose select guard holds),
  // so nothing past the last one is touched; far cheaper than a gather of single elements.
  //
  //   wide:  [x0 . x1 . x2 . x3 .]   (stride 2, '.' not loaded)   ->   <x0 x1 x2 x3>
  llvm::Value* strided_load(llvm::Type* elem, llvm::Value* base, llvm::Value* first, int64_t stride) {
    const unsigned lanes = static_cast<unsigned>(lanes_), wide = static_cast<unsigned>(lanes_ * stride);
    auto* wide_ty = llvm::FixedVectorType::get(elem, wide);
    std::vector<llvm::Constant*> kept;
    for (unsigned p = 0; p < wide; ++p) kept.push_back(b_.getInt1(p % stride == 0));
    llvm::Value* mask = llvm::ConstantVector::get(kept);
    if (load_guard_) {
      llvm::Value* guard = is_vector(load_guard_) ? load_guard_ : b_.CreateVectorSplat(lanes, load_guard_);
      llvm::SmallVector<int, 64> spread;  // wide position p takes the guard of lane p / stride
      for (unsigned p = 0; p < wide; ++p) spread.push_back(static_cast<int>(p / stride));
      mask = b_.CreateAnd(mask, b_.CreateShuffleVector(guard, spread));
    }
    llvm::Value* ptr = b_.CreateGEP(elem, base, first);
    llvm::Value* all = b_.CreateMaskedLoad(wide_ty, ptr, llvm::Align(elem->getPrimitiveSizeInBits() / 8), mask,
                                           llvm::Constant::getNullValue(wide_ty));
    llvm::SmallVector<int, 64> pick;
    for (unsigned l = 0; l < lanes; ++l) pick.push_back(static_cast<int>(l * stride));
    return b_.CreateShuffleVector(all, pick);
  }

  void store(const ir::Store& n) {
    const BufferSlot& s = slot(n.buffer);
    llvm::Type* elem = memory_type(n.buffer->dtype);
    llvm::Value* value = convert(expr(n.value), n.value->dtype, n.buffer->dtype);
    if (n.buffer->dtype == DataType::kBool) value = b_.CreateZExt(value, with_lanes(b_.getInt8Ty(), value));
    llvm::Align align(elem->getPrimitiveSizeInBits() / 8);
    if (vector_var_) {
      if (!is_vector(value)) value = b_.CreateVectorSplat(static_cast<unsigned>(lanes_), value);
      auto coeff = access_coefficient(n.buffer, n.indices, vector_var_);
      if (coeff && *coeff == 1) {
        b_.CreateAlignedStore(value, b_.CreateGEP(elem, s.ptr, first_lane_index(n.buffer, n.indices)), align);
      } else {
        b_.CreateMaskedScatter(value, b_.CreateGEP(elem, s.ptr, flat_index(n.buffer, n.indices)), align);
      }
      return;
    }
    b_.CreateStore(value, b_.CreateGEP(elem, s.ptr, flat_index(n.buffer, n.indices)));
  }

  void allocate(const ir::Allocate& n) {
    int64_t bytes = ir::buffer_span(*n.buffer) * static_cast<int64_t>(dtype_size(n.buffer->dtype));
    llvm::Type* elem = memory_type(n.buffer->dtype);
    llvm::Value* ptr;
    bool heap = bytes > kMaxStackAllocationBytes;
    if (!heap) {
      // Allocas live in the entry block so loops do not grow the stack.
      llvm::IRBuilderBase::InsertPointGuard guard(b_);
      b_.SetInsertPoint(entry_block_, entry_block_->getFirstInsertionPt());
      auto* a = b_.CreateAlloca(elem, b_.getInt64(static_cast<uint64_t>(std::max<int64_t>(ir::buffer_span(*n.buffer), 1))), n.buffer->name);
      a->setAlignment(llvm::Align(kBufferAlignment));
      ptr = a;
    } else {
      llvm::FunctionCallee aligned_alloc = module_.getOrInsertFunction("aligned_alloc", b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty());
      int64_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
      ptr = b_.CreateCall(aligned_alloc, {b_.getInt64(kBufferAlignment), b_.getInt64(static_cast<uint64_t>(rounded))}, n.buffer->name);
    }
    // An inner allocation may shadow an outer buffer of the same name; restore it afterwards.
    auto outer = buffers_.find(n.buffer->name);
    bool shadows = outer != buffers_.end();
    BufferSlot saved = shadows ? outer->second : BufferSlot{};
    buffers_[n.buffer->name] = {ptr, n.buffer};
    stmt(n.body);
    if (shadows) buffers_[n.buffer->name] = saved;
    else buffers_.erase(n.buffer->name);
    if (heap) b_.CreateCall(module_.getOrInsertFunction("free", b_.getVoidTy(), b_.getPtrTy()), {ptr});
  }

  // ------------------------------------------------------------------ statements

  void stmt(const ir::Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case ir::NodeKind::kFor: return for_loop(*ir::as<ir::For>(s));
      case ir::NodeKind::kStore: return store(*ir::as<ir::Store>(s));
      case ir::NodeKind::kAllocate: return allocate(*ir::as<ir::Allocate>(s));
      case ir::NodeKind::kLetStmt: {
        auto* n = ir::as<ir::LetStmt>(s);
        vars_[n->var.get()] = convert(expr(n->value), n->value->dtype, n->var->dtype);
        stmt(n->body);
        vars_.erase(n->var.get());
        return;
      }
      case ir::NodeKind::kIfThenElse: return if_then_else(*ir::as<ir::IfThenElse>(s));
      case ir::NodeKind::kSeq:
        for (const auto& x : ir::as<ir::Seq>(s)->stmts) stmt(x);
        return;
      case ir::NodeKind::kEvaluate: expr(ir::as<ir::Evaluate>(s)->value); return;
      case ir::NodeKind::kBarrier: return;  // one thread per group on the CPU: nothing to wait for
      default: break;
    }
    fail("unexpected statement node " + std::string(ir::node_kind_name(s->kind)));
  }

  void if_then_else(const ir::IfThenElse& n) {
    llvm::Value* c = convert(expr(n.cond), n.cond->dtype, DataType::kBool);
    if (is_vector(c)) fail("a condition that differs between vector lanes (if inside a vectorized loop)");
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", function_);
    auto* else_bb = n.else_case ? llvm::BasicBlock::Create(ctx_, "else", function_) : nullptr;
    auto* done_bb = llvm::BasicBlock::Create(ctx_, "endif", function_);
    b_.CreateCondBr(c, then_bb, else_bb ? else_bb : done_bb);
    b_.SetInsertPoint(then_bb);
    stmt(n.then_case);
    b_.CreateBr(done_bb);
    if (else_bb) {
      b_.SetInsertPoint(else_bb);
      stmt(n.else_case);
      b_.CreateBr(done_bb);
    }
    b_.SetInsertPoint(done_bb);
  }

  llvm::MDNode* loop_metadata(const char* key, bool with_value) {
    llvm::SmallVector<llvm::Metadata*, 2> inner{llvm::MDString::get(ctx_, key)};
    if (with_value) inner.push_back(llvm::ConstantAsMetadata::get(b_.getTrue()));
    llvm::MDNode* property = llvm::MDNode::get(ctx_, inner);
    llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, {nullptr, property});
    loop->replaceOperandWith(0, loop);
    return loop;
  }

  // for (var = lo; var < lo + extent; ++var) body   — `md` annotates the back edge.
  void serial_loop(const ir::Var* var, llvm::Value* lo, llvm::Value* extent, const ir::Stmt& body, llvm::MDNode* md) {
    llvm::Value* hi = b_.CreateAdd(lo, extent);
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, var->name + ".header", function_);
    auto* body_bb = llvm::BasicBlock::Create(ctx_, var->name + ".body", function_);
    auto* exit = llvm::BasicBlock::Create(ctx_, var->name + ".exit", function_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, var->name);
    i->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(i, hi), body_bb, exit);
    b_.SetInsertPoint(body_bb);
    vars_[var] = convert(i, DataType::kInt64, var->dtype);
    stmt(body);
    vars_.erase(var);
    llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    llvm::BranchInst* back = b_.CreateBr(header);
    if (md) back->setMetadata(llvm::LLVMContext::MD_loop, md);
    i->addIncoming(next, latch);
    b_.SetInsertPoint(exit);
  }

  void for_loop(const ir::For& n) {
    llvm::Value* lo = convert(expr(n.min), n.min->dtype, DataType::kInt64);
    llvm::Value* extent = convert(expr(n.extent), n.extent->dtype, DataType::kInt64);
    if (is_vector(lo) || is_vector(extent)) fail("loop '" + n.var->name + "' has bounds that differ between vector lanes");
    switch (n.for_kind) {
      case ir::ForKind::kThreadBound:
        fail("loop '" + n.var->name + "' is bound to " + n.thread_tag + ": GPU thread bindings cannot run on the CPU target");
      case ir::ForKind::kParallel:
        if (!vector_var_ && !inside_parallel_) return parallel_loop(n, lo, extent);
        return serial_loop(n.var.get(), lo, extent, n.body, nullptr);
      case ir::ForKind::kVectorized:
        if (!vector_var_ && can_widen(n)) return widened_loop(n, lo);
        return serial_loop(n.var.get(), lo, extent, n.body, loop_metadata("llvm.loop.vectorize.enable", true));
      case ir::ForKind::kUnrolled: return serial_loop(n.var.get(), lo, extent, n.body, loop_metadata("llvm.loop.unroll.full", false));
      default: return serial_loop(n.var.get(), lo, extent, n.body, nullptr);
    }
  }

  // ------------------------------------------------------------------ vectorization
  //
  //   for (i, 0, 16) vectorized            %i = <0, 1, ..., 15> + min
  //     C[i] = A[i] * 2 + B[j]      ──▶     store <16 x float> (load <16 x float> A[min]) * 2 + splat(B[j])
  //
  // Every expression is widened to 16 lanes; an access whose flat index moves by one element per
  // lane becomes a vector load/store at the first lane's address, one that does not depend on the
  // variable a scalar (splatted when needed), anything else a gather/scatter. Loops whose body
  // has inner loops, conditions, allocations, or a buffer both read and written at different
  // indices (a cross-lane dependence) stay scalar loops with vectorize metadata instead.

  bool can_widen(const ir::For& n) {
    int64_t extent;
    if (!ir::is_const_int(n.extent, &extent) || extent < 2 || extent > kMaxVectorLanes) return false;
    bool ok = true;
    std::vector<const ir::Var*> lets;
    std::function<void(const ir::Stmt&)> check = [&](const ir::Stmt& s) {
      if (!s || !ok) return;
      if (auto* seq = ir::as<ir::Seq>(s)) {
        for (const auto& x : seq->stmts) check(x);
      } else if (auto* let = ir::as<ir::LetStmt>(s)) {
        lets.push_back(let->var.get());
        check(let->body);
      } else if (!ir::as<ir::Store>(s)) {
        ok = false;
      }
    };
    check(n.body);
    if (!ok) return false;
    const ir::Var* v = n.var.get();
    std::vector<std::pair<ir::Buffer, std::vector<ir::Expr>>> stores, loads;
    ir::for_each_access(n.body, [&](const ir::Buffer& b, const std::vector<ir::Expr>& idx, bool is_store) {
      (is_store ? stores : loads).emplace_back(b, idx);
      // Indices must not read let variables bound inside the loop (their lanes are unknown here).
      for (const auto& e : idx)
        if (ir::uses_var(e, [&](const ir::Var* x) { return std::find(lets.begin(), lets.end(), x) != lets.end(); })) ok = false;
    });
    for (const auto& [sb, sidx] : stores) {
      auto c = access_coefficient(sb, sidx, v);
      if (!c || *c == 0) return false;  // every lane writing one place is a reduction, not a vector
      for (const auto& [lb, lidx] : loads) {
        if (lb->name != sb->name) continue;
        if (lidx.size() != sidx.size()) return false;
        for (size_t k = 0; k < lidx.size(); ++k)
          if (!ir::structural_equal(lidx[k], sidx[k])) return false;
      }
    }
    return ok;
  }

  void widened_loop(const ir::For& n, llvm::Value* lo) {
    int64_t lanes;
    ir::is_const_int(n.extent, &lanes);
    lanes_ = lanes;
    vector_var_ = n.var.get();
    vector_base_ = convert(lo, DataType::kInt64, n.var->dtype);
    std::vector<llvm::Constant*> steps;
    for (int64_t k = 0; k < lanes; ++k) steps.push_back(llvm::ConstantInt::get(scalar_type(n.var->dtype), static_cast<uint64_t>(k)));
    llvm::Value* ramp = b_.CreateAdd(b_.CreateVectorSplat(static_cast<unsigned>(lanes), vector_base_), llvm::ConstantVector::get(steps));
    vars_[vector_var_] = ramp;
    stmt(n.body);
    vars_.erase(vector_var_);
    vector_var_ = nullptr;
    lanes_ = 0;
  }

  // ------------------------------------------------------------------ parallel loops
  //
  //   for (i, lo, n) parallel { body }   ──▶   env = {every variable and buffer in scope}
  //                                             tessel_parallel_for(n, chunk, &env)
  //   chunk(begin, end, env): unpack env; chunk.body(lo + begin, end - begin, variables, buffers)
  //   chunk.body(first, count, ...): for (i = first; i < first + count; ++i) body
  //
  // chunk.body takes the buffers as noalias, aligned parameters, as the kernel's body function
  // does (it is inlined into chunk, keeping that as alias scopes). Pointers loaded from env carry
  // no such facts: LLVM would assume that a store to a register tile's accumulators may change
  // the operands it loaded, and keep the tile in memory, reloading every operand per row.

  void parallel_loop(const ir::For& n, llvm::Value* lo, llvm::Value* extent) {
    std::vector<const ir::Var*> var_keys;
    std::vector<std::string> buffer_keys;
    std::vector<llvm::Type*> fields;
    for (const auto& [var, value] : vars_) {
      var_keys.push_back(var);
      fields.push_back(value->getType());
    }
    for (const auto& [name, slot] : buffers_) {
      buffer_keys.push_back(name);
      fields.push_back(b_.getPtrTy());
    }
    fields.push_back(b_.getPtrTy());    // the check record
    fields.push_back(b_.getInt64Ty());  // lo
    auto* env_ty = llvm::StructType::get(ctx_, fields);

    auto* chunk_ty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy()}, false);
    auto* chunk = llvm::Function::Create(chunk_ty, llvm::Function::InternalLinkage,
                                         kernel_ + "." + n.var->name + ".parallel", module_);
    chunk->addFnAttr(llvm::Attribute::NoUnwind);

    // Caller side: fill the environment and hand the loop to the runtime's pool.
    llvm::Value* env;
    {
      llvm::IRBuilderBase::InsertPointGuard guard(b_);
      b_.SetInsertPoint(entry_block_, entry_block_->getFirstInsertionPt());
      env = b_.CreateAlloca(env_ty);
    }
    unsigned f = 0;
    for (const ir::Var* var : var_keys) b_.CreateStore(vars_[var], b_.CreateStructGEP(env_ty, env, f++));
    for (const std::string& name : buffer_keys) b_.CreateStore(buffers_[name].ptr, b_.CreateStructGEP(env_ty, env, f++));
    b_.CreateStore(check_record_, b_.CreateStructGEP(env_ty, env, f++));
    b_.CreateStore(lo, b_.CreateStructGEP(env_ty, env, f));
    llvm::FunctionCallee runtime = module_.getOrInsertFunction(
        "tessel_parallel_for", b_.getVoidTy(), b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy());
    b_.CreateCall(runtime, {extent, chunk, env});

    // The body function: (first, count, variables..., buffers..., check record).
    std::vector<llvm::Type*> body_params{b_.getInt64Ty(), b_.getInt64Ty()};
    body_params.insert(body_params.end(), fields.begin(), fields.begin() + static_cast<long>(var_keys.size()));
    const unsigned first_buffer = static_cast<unsigned>(body_params.size());
    body_params.insert(body_params.end(), buffer_keys.size() + 1, b_.getPtrTy());
    auto* body = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), body_params, false),
                                        llvm::Function::InternalLinkage, chunk->getName() + ".body", module_);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    body->addFnAttr(llvm::Attribute::NoUnwind);
    for (unsigned k = 0; k < buffer_keys.size(); ++k) {
      body->addParamAttr(first_buffer + k, llvm::Attribute::NoAlias);
      body->addParamAttr(first_buffer + k, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(kBufferAlignment)));
    }

    // Chunk side: unpack the environment, call the body.
    auto saved_vars = vars_;
    auto saved_buffers = buffers_;
    llvm::Function* saved_function = function_;
    llvm::BasicBlock* saved_entry = entry_block_;
    llvm::IRBuilderBase::InsertPoint saved_ip = b_.saveIP();
    begin_function(chunk);
    llvm::Value* chunk_env = chunk->getArg(2);
    std::vector<llvm::Value*> args(2);
    for (f = 0; f < fields.size() - 1; ++f)
      args.push_back(b_.CreateLoad(fields[f], b_.CreateStructGEP(env_ty, chunk_env, f)));
    llvm::Value* chunk_lo = b_.CreateLoad(b_.getInt64Ty(), b_.CreateStructGEP(env_ty, chunk_env, f));
    args[0] = b_.CreateAdd(chunk_lo, chunk->getArg(0));
    args[1] = b_.CreateSub(chunk->getArg(1), chunk->getArg(0));
    b_.CreateCall(body, args);
    b_.CreateRetVoid();

    // Body side: a fresh function with the same names bound to its parameters.
    begin_function(body);
    unsigned a = 2;
    for (const ir::Var* var : var_keys) vars_[var] = body->getArg(a++);
    for (const std::string& name : buffer_keys) buffers_[name].ptr = body->getArg(a++);
    llvm::Value* saved_record = check_record_;
    check_record_ = body->getArg(a);
    inside_parallel_ = true;
    serial_loop(n.var.get(), body->getArg(0), body->getArg(1), n.body, nullptr);
    inside_parallel_ = false;
    b_.CreateRetVoid();
    function_ = saved_function;
    entry_block_ = saved_entry;
    b_.restoreIP(saved_ip);
    vars_ = std::move(saved_vars);
    buffers_ = std::move(saved_buffers);
    check_record_ = saved_record;
  }

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  CodegenOptions options_;
  std::string kernel_;
  llvm::Function* function_ = nullptr;
  llvm::BasicBlock* entry_block_ = nullptr;
  std::unordered_map<const ir::Var*, llvm::Value*> vars_;
  std::unordered_map<std::string, BufferSlot> buffers_;
  const ir::Var* vector_var_ = nullptr;
  llvm::Value* vector_base_ = nullptr;
  int64_t lanes_ = 0;
  bool inside_parallel_ = false;
  llvm::Value* check_record_ = nullptr;                 // the CheckRecord* of the function being emitted
  std::unordered_map<std::string, int64_t> check_ids_;  // check message → its number (1-based)
  llvm::Value* load_guard_ = nullptr;  // i1 or <lanes x i1>: where loads of the select side being emitted may read
};

}  // namespace

std::unique_ptr<llvm::Module> emit_llvm_module(llvm::LLVMContext& ctx, const std::vector<loopir::Func>& kernels,
                                               const CodegenOptions& options) {
  auto module = std::make_unique<llvm::Module>("tessel", ctx);
  for (const loopir::Func& f : kernels) {
    KernelEmitter emitter(*module, options);
    emitter.emit(f);
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) throw Error("llvm codegen produced invalid IR: " + os.str().substr(0, 400));
  return module;
}

}  // namespace tessel::llvm_cpu
