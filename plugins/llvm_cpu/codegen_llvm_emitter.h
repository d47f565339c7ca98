#pragma once
// KernelEmitter, which emit_llvm_module (codegen_llvm.h) runs once per kernel, for this plugin's
// codegen files only. Its member functions are defined by purpose in three files:
//
//   codegen_llvm.cpp               the entry and body functions; statements and loops (serial,
//                                  widened into vector code, parallel chunks)
//   codegen_llvm_expressions.cpp   types and conversions, expressions, checks; loads, stores and
//                                  allocations
//   codegen_llvm_calls.cpp         calls: math functions, tensor intrinsics (VNNI), prefetch hints
//
// It includes LLVM's IRBuilder: only those files include it.
#include <llvm/IR/IRBuilder.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/loopir/ir.h"
#include "plugins/llvm_cpu/codegen_llvm.h"

namespace tessel::llvm_cpu {

namespace ir = tessel::loopir;

constexpr unsigned kBufferAlignment = 64;  // Tensor and NDArray storage is 64-byte aligned
constexpr int64_t kMaxVectorLanes = 64;

// The elements an access moves by when loop variable `v` grows by one, or nothing when its index
// is not linear in `v` (codegen_llvm_expressions.cpp).
std::optional<int64_t> access_coefficient(const ir::Buffer& b, const std::vector<ir::Expr>& idx, const ir::Var* v);

class KernelEmitter {
 public:
  KernelEmitter(llvm::Module& m, const CodegenOptions& options);

  // Adds kernel `f` to the module: its body function and its entry point.
  void emit(const ir::Func& f);

 private:
  struct BufferSlot {
    llvm::Value* ptr = nullptr;
    ir::Buffer buffer;
  };

  // codegen_llvm.cpp: functions, statements, loops.
  [[noreturn]] void fail(const std::string& why) const;
  void begin_function(llvm::Function* fn);
  void stmt(const ir::Stmt& s);
  void if_then_else(const ir::IfThenElse& n);
  llvm::MDNode* loop_metadata(const char* key, bool with_value);
  void serial_loop(const ir::Var* var, llvm::Value* lo, llvm::Value* extent, const ir::Stmt& body, llvm::MDNode* md);
  void for_loop(const ir::For& n);
  bool can_widen(const ir::For& n);
  void widened_loop(const ir::For& n, llvm::Value* lo);
  void parallel_loop(const ir::For& n, llvm::Value* lo, llvm::Value* extent);

  // codegen_llvm_expressions.cpp: types and conversions.
  llvm::Type* scalar_type(DataType t);
  llvm::Type* memory_type(DataType t);
  llvm::Type* with_lanes(llvm::Type* scalar, llvm::Value* like);
  static bool is_vector(llvm::Value* v) { return v->getType()->isVectorTy(); }
  llvm::Value* splat_to(llvm::Value* v, llvm::Value* like);
  // Float → integer follows float_to_int64 (core/support/dtype.h) unless `in_range` says the
  // value can be neither NaN nor outside `to` (loopir::float_cast_is_in_range).
  llvm::Value* convert(llvm::Value* v, DataType from, DataType to, bool in_range = false);
  llvm::Value* float_to_integer(llvm::Value* v, DataType to);
  llvm::Value* bfloat16_to_float(llvm::Value* v);
  llvm::Value* float_to_bfloat16(llvm::Value* v);
  // Expressions.
  llvm::Value* expr(const ir::Expr& e);
  llvm::Value* select(const ir::Select& n);
  llvm::Value* check(const ir::Check& n);
  llvm::Function* check_failed_function();
  llvm::Value* guarded_index(llvm::Value* index);
  llvm::Value* binary(const ir::Binary& n);
  llvm::Value* floor_div(llvm::Value* a, llvm::Value* b);
  llvm::Value* floor_mod(llvm::Value* a, llvm::Value* b);
  llvm::Value* float_floor_mod(llvm::Value* a, llvm::Value* b);
  // Memory.
  const BufferSlot& slot(const ir::Buffer& b);
  llvm::Value* flat_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx);
  llvm::Value* first_lane_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx);
  llvm::Value* load(const ir::Load& n);
  llvm::Value* strided_load(llvm::Type* elem, llvm::Value* base, llvm::Value* first, int64_t stride);
  void store(const ir::Store& n);
  void allocate(const ir::Allocate& n);

  // codegen_llvm_calls.cpp: calls.
  llvm::Value* call(const ir::Call& n);
  bool vnni_dot(const ir::Call& n);
  llvm::Value* operand_address(const ir::Call& n, const ir::Expr& arg);
  llvm::Value* libm_call(const std::string& name, llvm::Value* x, DataType t);

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

}  // namespace tessel::llvm_cpu
