// Loop IR -> LLVM IR (codegen_llvm.h): the module, each kernel's entry and body functions, and its
// statements and loops: serial, widened into vector code, or outlined into chunk functions that
// the runtime's thread pool runs. KernelEmitter (codegen_llvm_emitter.h) emits expressions, loads,
// stores and allocations in codegen_llvm_expressions.cpp, and calls in codegen_llvm_calls.cpp.
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "core/loopir/equal.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"
#include "plugins/llvm_cpu/codegen_llvm.h"
#include "plugins/llvm_cpu/codegen_llvm_emitter.h"

namespace tessel::llvm_cpu {

KernelEmitter::KernelEmitter(llvm::Module& m, const CodegenOptions& options)
    : module_(m), ctx_(m.getContext()), b_(ctx_), options_(options) {
  llvm::FastMathFlags fmf;
  if (options.fast_math) fmf.setFast();
  else fmf.setAllowContract(true);
  b_.setFastMathFlags(fmf);
}

void KernelEmitter::emit(const ir::Func& f) {
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

void KernelEmitter::fail(const std::string& why) const {
  throw Error("kernel '" + kernel_ + "': llvm codegen: " + why);
}

void KernelEmitter::begin_function(llvm::Function* fn) {
  function_ = fn;
  entry_block_ = llvm::BasicBlock::Create(ctx_, "entry", fn);
  b_.SetInsertPoint(entry_block_);
}

// ------------------------------------------------------------------ statements

void KernelEmitter::stmt(const ir::Stmt& s) {
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

void KernelEmitter::if_then_else(const ir::IfThenElse& n) {
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

llvm::MDNode* KernelEmitter::loop_metadata(const char* key, bool with_value) {
  llvm::SmallVector<llvm::Metadata*, 2> inner{llvm::MDString::get(ctx_, key)};
  if (with_value) inner.push_back(llvm::ConstantAsMetadata::get(b_.getTrue()));
  llvm::MDNode* property = llvm::MDNode::get(ctx_, inner);
  llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, {nullptr, property});
  loop->replaceOperandWith(0, loop);
  return loop;
}

// for (var = lo; var < lo + extent; ++var) body   — `md` annotates the back edge.
void KernelEmitter::serial_loop(const ir::Var* var, llvm::Value* lo, llvm::Value* extent, const ir::Stmt& body,
                                llvm::MDNode* md) {
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

void KernelEmitter::for_loop(const ir::For& n) {
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

bool KernelEmitter::can_widen(const ir::For& n) {
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

void KernelEmitter::widened_loop(const ir::For& n, llvm::Value* lo) {
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

void KernelEmitter::parallel_loop(const ir::For& n, llvm::Value* lo, llvm::Value* extent) {
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
