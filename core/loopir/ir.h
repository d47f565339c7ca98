#pragma once
// The loop IR: an immutable loop program (docs/architecture.md, "Loop IR and lowering").
//
// Nodes are small structs with public fields held by shared_ptr<const T>. Nothing mutates a node
// after construction; passes build new nodes and reuse the old ones where nothing changed, so
// `a == b` on handles ("same node") tells whether a pass changed a subtree. The kinds are listed
// once in node_kinds.def.
//
// Index arithmetic is int64. Integer division and modulo are *floor* division and modulo (the
// result of `%` has the sign of the divisor), which keeps split/fuse index algebra exact for
// negative offsets too.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/support/dtype.h"
#include "core/support/shape.h"

namespace tessel::loopir {

enum class NodeKind : uint8_t {
#define TESSEL_EXPR(Name) k##Name,
#define TESSEL_STMT(Name) k##Name,
#include "core/loopir/node_kinds.def"
};
std::string_view node_kind_name(NodeKind k);

enum class BinaryOp : uint8_t {
#define TESSEL_BINARY(Name, symbol) k##Name,
#include "core/loopir/node_kinds.def"
};
std::string_view binary_op_symbol(BinaryOp op);
bool is_comparison(BinaryOp op);  // ==, !=, <, <=, >, >=
// The value of a comparison operator on two numbers (the interpreter and the simplifier share it);
// nullopt for operators that are not comparisons.
template <class T> std::optional<bool> eval_comparison(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::kEQ: return x == y;
    case BinaryOp::kNE: return x != y;
    case BinaryOp::kLT: return x < y;
    case BinaryOp::kLE: return x <= y;
    case BinaryOp::kGT: return x > y;
    case BinaryOp::kGE: return x >= y;
    default: return std::nullopt;
  }
}
bool is_logical(BinaryOp op);     // &&, ||

struct ExprNode {
  ExprNode(NodeKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
  const NodeKind kind;
  const DataType dtype;
};
using Expr = std::shared_ptr<const ExprNode>;

struct StmtNode {
  explicit StmtNode(NodeKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const NodeKind kind;
};
using Stmt = std::shared_ptr<const StmtNode>;

// Downcast by kind; nullptr when the node is of another kind.
template <class T>
const T* as(const Expr& e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e.get()) : nullptr;
}
template <class T>
const T* as(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

// ---------------------------------------------------------------- expressions

struct IntImm : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kIntImm;
  IntImm(int64_t v, DataType t) : ExprNode(kKind, t), value(v) {}
  const int64_t value;
};

struct FloatImm : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kFloatImm;
  FloatImm(double v, DataType t) : ExprNode(kKind, t), value(v) {}
  const double value;
};

// A variable is identified by its node (two Vars with the same name are different variables);
// the printer and structural equality use the name.
struct Var : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kVar;
  Var(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};
using VarRef = std::shared_ptr<const Var>;

struct Binary : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kBinary;
  Binary(BinaryOp o, Expr x, Expr y, DataType t) : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOp op;
  const Expr a, b;
};

struct Not : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kNot;
  explicit Not(Expr x) : ExprNode(kKind, DataType::kBool), a(std::move(x)) {}
  const Expr a;
};

struct Select : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kSelect;
  Select(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t->dtype), cond(std::move(c)), true_value(std::move(t)), false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};

struct Cast : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kCast;
  Cast(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  const Expr value;
};

// A buffer: a named, typed N-d array in a memory scope ("global", "shared", "local", or a scope a
// target declares). `strides` is empty for a contiguous row-major layout.
struct BufferNode {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Shape shape;
  std::string scope = "global";
  Shape strides;
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer make_buffer(std::string name, DataType dtype, Shape shape, std::string scope = "global", Shape strides = {});
// Elements the buffer spans (respecting strides).
int64_t buffer_span(const BufferNode& b);

struct Load : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kLoad;
  Load(Buffer buf, std::vector<Expr> idx)
      : ExprNode(kKind, buf->dtype), buffer(std::move(buf)), indices(std::move(idx)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
};

// The calls that lowering passes insert and every code generator must recognise, as a kind the
// Call carries (set from its name when it is made), so no backend matches names of its own:
//   address_of(B[i])            the address of one buffer element: a tensor intrinsic's operand,
//                               a prefetch's target (make_address_of; read with address_of_load)
//   prefetch(address_of(B[i]))  a cache hint (inject_prefetch); it changes no value
//   dep_push(from, to)          counted tokens between an accelerator's decoupled queues
//   dep_pop(from, to)           (inject_virtual_thread); satisfied by running in program order
//   tessel_intrin_NAME(...)     a tensor intrinsic's update (tensorize; core/te/tensor_intrinsic.h)
// Any other call (kNone) is a math intrinsic: exp, log, sqrt, tanh, erf, sigmoid, pow, fma, ...
enum class Builtin : uint8_t { kNone, kAddressOf, kPrefetch, kDepPush, kDepPop, kTensorIntrinsic };
inline constexpr std::string_view kTensorIntrinsicPrefix = "tessel_intrin_";
Builtin builtin_of(std::string_view call_name);

struct Call : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kCall;
  Call(std::string n, std::vector<Expr> a, DataType t)
      : ExprNode(kKind, t), name(std::move(n)), args(std::move(a)), builtin(builtin_of(name)) {}
  const std::string name;
  const std::vector<Expr> args;
  const Builtin builtin;
  bool is_dependence_token() const { return builtin == Builtin::kDepPush || builtin == Builtin::kDepPop; }
};

// address_of(load), typed `t` (the pointer's element type for a prefetch, int64 for an operand).
Expr make_address_of(Expr load, DataType t);
// The buffer access `e` takes the address of when it is address_of(one load); nullptr otherwise
// (another expression, or an address_of that does not hold exactly one load).
const Load* address_of_load(const Expr& e);
Expr make_prefetch(Expr address);
Expr make_dependence_token(Builtin push_or_pop, int64_t from_queue, int64_t to_queue);

// A commutative, associative combiner: `combine` is written in terms of `lhs` (the accumulator)
// and `rhs` (the new value); `identity` is its neutral element.
struct CommReducer {
  std::string name;
  VarRef lhs, rhs;
  Expr combine;
  Expr identity;
};
using Reducer = std::shared_ptr<const CommReducer>;

struct IterVar {
  VarRef var;
  int64_t extent = 0;
};

// A reduction over `axes` (only inside tensor expressions; lowering turns it into loops).
struct Reduce : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kReduce;
  Reduce(Reducer r, Expr s, std::vector<IterVar> ax)
      : ExprNode(kKind, s->dtype), combiner(std::move(r)), source(std::move(s)), axes(std::move(ax)) {}
  const Reducer combiner;
  const Expr source;
  const std::vector<IterVar> axes;
};

// A value guarded by a check that the kernel makes at run time (TVM's AssertStmt, Halide's
// require, as an expression so that a tensor expression can carry it): `value` where `condition`
// holds. Where it does not, the kernel records the failure in its check record (CheckRecord) and
// goes on with 0 in place of `value` (an index that stays inside its buffer), and its caller
// raises Error with `message`, "{}" in it standing for `reported`. The TE builders guard every
// data-dependent index with one (printed as below; `q` is int64(indices[i])):
//
//   data[check(w in [0, 5), "node 'Gather_3' (Gather): index {q} out of range [-5, 5) on axis 0")]
//       where w = select(q < 0, q + 5, q); the condition is w >= 0 && w < 5
struct Check : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kCheck;
  Check(Expr c, Expr v, Expr r, std::string m)
      : ExprNode(kKind, v->dtype),
        condition(std::move(c)),
        value(std::move(v)),
        reported(std::move(r)),
        message(std::move(m)) {}
  const Expr condition, value;
  const Expr reported;  // int64
  const std::string message;
};

// ---------------------------------------------------------------- statements

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBound, kVirtualThread };
std::string_view for_kind_name(ForKind k);  // "serial", "parallel", "vectorized", "unrolled", "thread", "vthread"

using Pragmas = std::vector<std::pair<std::string, int64_t>>;

struct For : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kFor;
  For(VarRef v, Expr mn, Expr ext, ForKind k, std::string tag, Pragmas p, Stmt b)
      : StmtNode(kKind),
        var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        thread_tag(std::move(tag)),
        pragmas(std::move(p)),
        body(std::move(b)) {}
  const VarRef var;
  const Expr min, extent;
  const ForKind for_kind;
  const std::string thread_tag;  // "blockIdx.x", "threadIdx.y", "vthread" ... ; empty otherwise
  const Pragmas pragmas;
  const Stmt body;
};

struct Store : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kStore;
  Store(Buffer buf, std::vector<Expr> idx, Expr v)
      : StmtNode(kKind), buffer(std::move(buf)), indices(std::move(idx)), value(std::move(v)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
  const Expr value;
};

struct Allocate : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kAllocate;
  Allocate(Buffer buf, Stmt b) : StmtNode(kKind), buffer(std::move(buf)), body(std::move(b)) {}
  const Buffer buffer;
  const Stmt body;
};

struct LetStmt : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kLetStmt;
  LetStmt(VarRef v, Expr val, Stmt b) : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  const VarRef var;
  const Expr value;
  const Stmt body;
};

struct IfThenElse : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kIfThenElse;
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // may be null
};

struct Seq : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kSeq;
  explicit Seq(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  const std::vector<Stmt> stmts;
};

struct Evaluate : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kEvaluate;
  explicit Evaluate(Expr v) : StmtNode(kKind), value(std::move(v)) {}
  const Expr value;
};

// Makes writes to buffers of `scope` by one thread of a group visible to the others.
struct Barrier : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kBarrier;
  explicit Barrier(std::string s) : StmtNode(kKind), scope(std::move(s)) {}
  const std::string scope;
};

// A lowered kernel: its parameters (inputs, then outputs) and body.
struct Func {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
};

// Where a kernel reports a failed Check. Every kernel entry point takes one after its buffers:
// `void kernel(void** args)` with args[params.size()] a CheckRecord* whose fields start at 0. A
// failing check stores its number (1 + its index in check_messages(f)) and its reported value;
// when several fail (parallel chunks), the first to store its number wins.
struct CheckRecord {
  int64_t check = 0;
  int64_t value = 0;
};
// The distinct messages of f's checks, in the order they first appear in its body.
std::vector<std::string> check_messages(const Func& f);
// Check `check`'s message with the reported value in place of "{}"; "check N failed" for a number
// that is not f's.
std::string check_failure_text(const std::vector<std::string>& messages, const CheckRecord& record);

// The memory f allocates for itself (its Allocate buffers, all of them counted as if alive at
// once: an upper bound) and the largest of them, so a caller can refuse a kernel whose scratch
// cannot fit before it runs (a fused broadcast-then-reduce can need gigabytes).
struct ScratchNeed {
  int64_t bytes = 0;
  std::string largest_buffer;
  int64_t largest_bytes = 0;
};
ScratchNeed scratch_need(const Func& f);

// ---------------------------------------------------------------- constructors

Expr make_int(int64_t v, DataType t = DataType::kInt64);
Expr make_float(double v, DataType t = DataType::kFloat32);
Expr make_const(DataType t, double v);  // an immediate of type t (int or float)
VarRef make_var(std::string name, DataType t = DataType::kInt64);
Expr make_binary(BinaryOp op, Expr a, Expr b);  // result dtype: bool for comparisons and logic, else a's (float wins)
Expr make_not(Expr a);
Expr make_select(Expr c, Expr t, Expr f);
Expr make_cast(DataType t, Expr v);
Expr make_load(Buffer b, std::vector<Expr> indices);
Expr make_call(std::string name, std::vector<Expr> args, DataType t);
Expr make_reduce(Reducer r, Expr source, std::vector<IterVar> axes);
Expr make_check(Expr condition, Expr value, Expr reported, std::string message);

Stmt make_for(VarRef v, Expr min, Expr extent, Stmt body, ForKind k = ForKind::kSerial, std::string tag = {},
              Pragmas p = {});
Stmt make_store(Buffer b, std::vector<Expr> indices, Expr value);
Stmt make_allocate(Buffer b, Stmt body);
Stmt make_let(VarRef v, Expr value, Stmt body);
Stmt make_if(Expr cond, Stmt then_case, Stmt else_case = nullptr);
// Flattens nested Seqs and drops nulls; one statement comes back as itself.
Stmt make_seq(std::vector<Stmt> stmts);
Stmt make_evaluate(Expr v);
Stmt make_barrier(std::string scope);

// Builders that read like math.
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator+(Expr a, int64_t b);
Expr operator-(Expr a, int64_t b);
Expr operator*(Expr a, int64_t b);
Expr operator/(Expr a, int64_t b);
Expr operator%(Expr a, int64_t b);

// The constant value when `e` is an integer immediate.
bool is_const_int(const Expr& e, int64_t* value = nullptr);
bool is_const_int_value(const Expr& e, int64_t value);

// True when a float → integer Cast of `value` can meet neither NaN nor a number outside `to`'s
// range: `value` is min(max(x, lo), hi) (either nesting) with immediate bounds inside that range,
// and float min/max return the other operand for NaN on every backend. Code generators then
// convert directly instead of through the saturating rule (float_to_int64, core/support/dtype.h),
// which costs a few instructions per element in QuantizeLinear's inner loop.
bool float_cast_is_in_range(const Expr& value, DataType to);

}  // namespace tessel::loopir
