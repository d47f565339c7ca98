// KernelEmitter's values (codegen_llvm_emitter.h): LLVM types and conversions between data types,
// expressions (arithmetic, selects whose loads are guarded, checks), and memory: each access as a
// scalar, a vector, a strided wide load or a gather/scatter, and allocations on the stack or heap.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "core/loopir/functor.h"
#include "plugins/llvm_cpu/codegen_llvm_emitter.h"

namespace tessel::llvm_cpu {

namespace {

constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;
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

}  // namespace

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

// ------------------------------------------------------------------ types and conversions

llvm::Type* KernelEmitter::scalar_type(DataType t) {
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
llvm::Type* KernelEmitter::memory_type(DataType t) { return t == DataType::kBool ? b_.getInt8Ty() : scalar_type(t); }

llvm::Type* KernelEmitter::with_lanes(llvm::Type* scalar, llvm::Value* like) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType())) return llvm::FixedVectorType::get(scalar, vt->getNumElements());
  return scalar;
}

llvm::Value* KernelEmitter::splat_to(llvm::Value* v, llvm::Value* like) {
  if (is_vector(v) || !is_vector(like)) return v;
  return b_.CreateVectorSplat(llvm::cast<llvm::FixedVectorType>(like->getType())->getNumElements(), v);
}

llvm::Value* KernelEmitter::convert(llvm::Value* v, DataType from, DataType to, bool in_range) {
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
  if (from_float && !in_range) return float_to_integer(v, to);
  if (from_float) return dtype_is_unsigned(to) ? b_.CreateFPToUI(v, dst) : b_.CreateFPToSI(v, dst);
  if (to_float) return from_unsigned ? b_.CreateUIToFP(v, dst) : b_.CreateSIToFP(v, dst);
  return b_.CreateIntCast(v, dst, !from_unsigned);
}

// fptosi/fptoui give poison for NaN and out-of-range values; the rule every backend shares is
// saturate to int64 (NaN → 0), then keep the low bits; uint64 keeps [2^63, 2^64) exactly.
//
//   v ──fptosi.sat.i64──► wide ──trunc──► i8/i16/i32/i64
//   v ──fptoui.sat.i64──► high ─┐
//   v >= 2^63 ? high : wide ────┴──► u64
llvm::Value* KernelEmitter::float_to_integer(llvm::Value* v, DataType to) {
  llvm::Type* i64 = with_lanes(b_.getInt64Ty(), v);
  llvm::Value* wide = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {i64, v->getType()}, {v});
  if (to == DataType::kUInt64) {
    llvm::Value* high = b_.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {i64, v->getType()}, {v});
    llvm::Value* two_to_63 = llvm::ConstantFP::get(v->getType(), 9223372036854775808.0);
    return b_.CreateSelect(b_.CreateFCmpOGE(v, two_to_63), high, wide);
  }
  return b_.CreateTrunc(wide, with_lanes(scalar_type(to), v));
}

// bfloat16 is the upper half of a float32: widening shifts its bits up.
llvm::Value* KernelEmitter::bfloat16_to_float(llvm::Value* v) {
  llvm::Value* bits =
      b_.CreateZExt(b_.CreateBitCast(v, with_lanes(b_.getInt16Ty(), v)), with_lanes(b_.getInt32Ty(), v));
  return b_.CreateBitCast(b_.CreateShl(bits, splat_to(b_.getInt32(16), bits)), with_lanes(b_.getFloatTy(), v));
}

// Round to nearest even: add 0x7fff plus the kept half's lowest bit, keep the upper half. A NaN
// keeps its upper half with the quiet bit set (adding could carry it into an infinity).
llvm::Value* KernelEmitter::float_to_bfloat16(llvm::Value* v) {
  llvm::Value* bits = b_.CreateBitCast(v, with_lanes(b_.getInt32Ty(), v));
  auto k = [&](uint32_t c) { return splat_to(b_.getInt32(c), bits); };
  llvm::Value* upper = b_.CreateLShr(bits, k(16));
  llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(k(0x7fff), b_.CreateAnd(upper, k(1)))), k(16));
  llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(bits, k(0x7fffffff)), k(0x7f800000));
  llvm::Value* half = b_.CreateSelect(is_nan, b_.CreateOr(upper, k(0x40)), rounded);
  return b_.CreateBitCast(b_.CreateTrunc(half, with_lanes(b_.getInt16Ty(), v)), with_lanes(b_.getBFloatTy(), v));
}

// ------------------------------------------------------------------ expressions

llvm::Value* KernelEmitter::expr(const ir::Expr& e) {
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
      return convert(expr(n->value), n->value->dtype, n->dtype, ir::float_cast_is_in_range(n->value, n->dtype));
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
llvm::Value* KernelEmitter::select(const ir::Select& n) {
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
llvm::Value* KernelEmitter::check(const ir::Check& n) {
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
llvm::Function* KernelEmitter::check_failed_function() {
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
llvm::Value* KernelEmitter::guarded_index(llvm::Value* index) {
  if (!load_guard_) return index;
  llvm::Value* guard = load_guard_;
  if (is_vector(guard) && !is_vector(index)) guard = b_.CreateOrReduce(guard);  // a lane needs it: the address is real
  return b_.CreateSelect(splat_to(guard, index), index, llvm::Constant::getNullValue(index->getType()));
}

llvm::Value* KernelEmitter::binary(const ir::Binary& n) {
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
llvm::Value* KernelEmitter::floor_div(llvm::Value* a, llvm::Value* b) {
  llvm::Value* q = b_.CreateSDiv(a, b);
  llvm::Value* r = b_.CreateSRem(a, b);
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
  return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
}

llvm::Value* KernelEmitter::floor_mod(llvm::Value* a, llvm::Value* b) {
  llvm::Value* r = b_.CreateSRem(a, b);
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
  return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
}

llvm::Value* KernelEmitter::float_floor_mod(llvm::Value* a, llvm::Value* b) {
  llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
  return b_.CreateFSub(a, b_.CreateFMul(q, b));
}

// ------------------------------------------------------------------ memory

const KernelEmitter::BufferSlot& KernelEmitter::slot(const ir::Buffer& b) {
  auto it = buffers_.find(b->name);
  if (it == buffers_.end()) fail("buffer '" + b->name + "' is not a parameter and not allocated here");
  return it->second;
}

// The flat element offset (i64, scalar or vector) of an access.
llvm::Value* KernelEmitter::flat_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
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
llvm::Value* KernelEmitter::first_lane_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
  llvm::Value* ramp = vars_[vector_var_];
  vars_[vector_var_] = vector_base_;
  llvm::Value* i = flat_index(b, idx);
  vars_[vector_var_] = ramp;
  return i;
}

llvm::Value* KernelEmitter::load(const ir::Load& n) {
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
llvm::Value* KernelEmitter::strided_load(llvm::Type* elem, llvm::Value* base, llvm::Value* first, int64_t stride) {
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

void KernelEmitter::store(const ir::Store& n) {
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

void KernelEmitter::allocate(const ir::Allocate& n) {
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

}  // namespace tessel::llvm_cpu
