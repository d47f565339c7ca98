#include "core/loopir/ir.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/loopir/functor.h"
#include "core/support/error.h"

namespace tessel::loopir {

std::string_view node_kind_name(NodeKind k) {
  switch (k) {
#define TESSEL_EXPR(Name) \
  case NodeKind::k##Name: \
    return #Name;
#define TESSEL_STMT(Name) \
  case NodeKind::k##Name: \
    return #Name;
#include "core/loopir/node_kinds.def"
  }
  return "?";
}

std::string_view binary_op_symbol(BinaryOp op) {
  switch (op) {
#define TESSEL_BINARY(Name, symbol) \
  case BinaryOp::k##Name:           \
    return symbol;
#include "core/loopir/node_kinds.def"
  }
  return "?";
}

bool is_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEQ:
    case BinaryOp::kNE:
    case BinaryOp::kLT:
    case BinaryOp::kLE:
    case BinaryOp::kGT:
    case BinaryOp::kGE:
      return true;
    default:
      return false;
  }
}
bool is_logical(BinaryOp op) { return op == BinaryOp::kAnd || op == BinaryOp::kOr; }

std::string_view for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unrolled";
    case ForKind::kThreadBound:
      return "thread";
    case ForKind::kVirtualThread:
      return "vthread";
  }
  return "?";
}

Buffer make_buffer(std::string name, DataType dtype, Shape shape, std::string scope, Shape strides) {
  auto b = std::make_shared<BufferNode>();
  b->name = std::move(name);
  b->dtype = dtype;
  b->shape = std::move(shape);
  b->scope = std::move(scope);
  b->strides = std::move(strides);
  return b;
}

int64_t buffer_span(const BufferNode& b) {
  if (b.strides.empty()) return shape_numel(b.shape);
  int64_t last = 0;
  for (size_t d = 0; d < b.shape.size(); ++d) {
    if (b.shape[d] == 0) return 0;
    last += (b.shape[d] - 1) * b.strides[d];
  }
  return last + 1;
}

Expr make_int(int64_t v, DataType t) { return std::make_shared<IntImm>(v, t); }
Expr make_float(double v, DataType t) { return std::make_shared<FloatImm>(v, t); }
Expr make_const(DataType t, double v) {
  if (dtype_is_float(t)) return make_float(v, t);
  return make_int(static_cast<int64_t>(v), t);
}
VarRef make_var(std::string name, DataType t) { return std::make_shared<Var>(std::move(name), t); }

Expr make_binary(BinaryOp op, Expr a, Expr b) {
  if (!a || !b) throw Error("loop IR: binary '" + std::string(binary_op_symbol(op)) + "' with a missing operand");
  DataType t = a->dtype;
  if (is_comparison(op) || is_logical(op))
    t = DataType::kBool;
  else if (dtype_is_float(b->dtype) && !dtype_is_float(a->dtype))
    t = b->dtype;
  return std::make_shared<Binary>(op, std::move(a), std::move(b), t);
}
Expr make_not(Expr a) { return std::make_shared<Not>(std::move(a)); }
Expr make_select(Expr c, Expr t, Expr f) { return std::make_shared<Select>(std::move(c), std::move(t), std::move(f)); }
Expr make_cast(DataType t, Expr v) { return std::make_shared<Cast>(t, std::move(v)); }
Expr make_load(Buffer b, std::vector<Expr> indices) { return std::make_shared<Load>(std::move(b), std::move(indices)); }
Expr make_call(std::string name, std::vector<Expr> args, DataType t) {
  return std::make_shared<Call>(std::move(name), std::move(args), t);
}

Builtin builtin_of(std::string_view call_name) {
  if (call_name == "address_of") return Builtin::kAddressOf;
  if (call_name == "prefetch") return Builtin::kPrefetch;
  if (call_name == "dep_push") return Builtin::kDepPush;
  if (call_name == "dep_pop") return Builtin::kDepPop;
  if (call_name.starts_with(kTensorIntrinsicPrefix)) return Builtin::kTensorIntrinsic;
  return Builtin::kNone;
}
Expr make_address_of(Expr load, DataType t) { return make_call("address_of", {std::move(load)}, t); }
const Load* address_of_load(const Expr& e) {
  auto* c = as<Call>(e);
  if (!c || c->builtin != Builtin::kAddressOf || c->args.size() != 1) return nullptr;
  return as<Load>(c->args[0]);
}
Expr make_prefetch(Expr address) { return make_call("prefetch", {std::move(address)}, DataType::kInt32); }
Expr make_dependence_token(Builtin push_or_pop, int64_t from_queue, int64_t to_queue) {
  if (push_or_pop != Builtin::kDepPush && push_or_pop != Builtin::kDepPop)
    throw Error("make_dependence_token: a token is dep_push or dep_pop");
  return make_call(push_or_pop == Builtin::kDepPush ? "dep_push" : "dep_pop",
                   {make_int(from_queue), make_int(to_queue)}, DataType::kInt32);
}
Expr make_reduce(Reducer r, Expr source, std::vector<IterVar> axes) {
  return std::make_shared<Reduce>(std::move(r), std::move(source), std::move(axes));
}

Expr make_check(Expr condition, Expr value, Expr reported, std::string message) {
  return std::make_shared<Check>(std::move(condition), std::move(value), std::move(reported), std::move(message));
}

Stmt make_for(VarRef v, Expr min, Expr extent, Stmt body, ForKind k, std::string tag, Pragmas p) {
  return std::make_shared<For>(std::move(v), std::move(min), std::move(extent), k, std::move(tag), std::move(p),
                               std::move(body));
}
Stmt make_store(Buffer b, std::vector<Expr> indices, Expr value) {
  return std::make_shared<Store>(std::move(b), std::move(indices), std::move(value));
}
Stmt make_allocate(Buffer b, Stmt body) { return std::make_shared<Allocate>(std::move(b), std::move(body)); }
Stmt make_let(VarRef v, Expr value, Stmt body) {
  return std::make_shared<LetStmt>(std::move(v), std::move(value), std::move(body));
}
Stmt make_if(Expr cond, Stmt then_case, Stmt else_case) {
  return std::make_shared<IfThenElse>(std::move(cond), std::move(then_case), std::move(else_case));
}
Stmt make_seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (auto* seq = as<Seq>(s))
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1) return flat[0];
  return std::make_shared<Seq>(std::move(flat));
}
Stmt make_evaluate(Expr v) { return std::make_shared<Evaluate>(std::move(v)); }
Stmt make_barrier(std::string scope) { return std::make_shared<Barrier>(std::move(scope)); }

Expr min(Expr a, Expr b) { return make_binary(BinaryOp::kMin, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return make_binary(BinaryOp::kMax, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return make_binary(BinaryOp::kEQ, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return make_binary(BinaryOp::kNE, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return make_binary(BinaryOp::kLT, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return make_binary(BinaryOp::kLE, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return make_binary(BinaryOp::kGT, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return make_binary(BinaryOp::kGE, std::move(a), std::move(b)); }
Expr logical_and(Expr a, Expr b) { return make_binary(BinaryOp::kAnd, std::move(a), std::move(b)); }
Expr logical_or(Expr a, Expr b) { return make_binary(BinaryOp::kOr, std::move(a), std::move(b)); }
Expr operator+(Expr a, Expr b) { return make_binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_binary(BinaryOp::kSub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return make_binary(BinaryOp::kMul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return make_binary(BinaryOp::kDiv, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return make_binary(BinaryOp::kMod, std::move(a), std::move(b)); }
Expr operator-(Expr a) { return make_const(a->dtype, 0) - a; }
Expr operator+(Expr a, int64_t b) {
  DataType t = a->dtype;
  return std::move(a) + make_const(t, static_cast<double>(b));
}
Expr operator-(Expr a, int64_t b) {
  DataType t = a->dtype;
  return std::move(a) - make_const(t, static_cast<double>(b));
}
Expr operator*(Expr a, int64_t b) {
  DataType t = a->dtype;
  return std::move(a) * make_const(t, static_cast<double>(b));
}
Expr operator/(Expr a, int64_t b) {
  DataType t = a->dtype;
  return std::move(a) / make_const(t, static_cast<double>(b));
}
Expr operator%(Expr a, int64_t b) {
  DataType t = a->dtype;
  return std::move(a) % make_const(t, static_cast<double>(b));
}

bool is_const_int(const Expr& e, int64_t* value) {
  auto* imm = as<IntImm>(e);
  if (!imm) return false;
  if (value) *value = imm->value;
  return true;
}
bool is_const_int_value(const Expr& e, int64_t value) {
  int64_t v = 0;
  return is_const_int(e, &v) && v == value;
}

namespace {

// `e` as min(x, c) or max(x, c) with an immediate c on either side: the other operand and c.
bool clamp_by_immediate(const Expr& e, BinaryOp op, Expr* other, double* bound) {
  auto* b = as<Binary>(e);
  if (!b || b->op != op) return false;
  if (auto* imm = as<FloatImm>(b->b))
    *other = b->a, *bound = imm->value;
  else if (auto* imm_a = as<FloatImm>(b->a))
    *other = b->b, *bound = imm_a->value;
  else
    return false;
  return true;
}

// The values of integer type `t` as doubles (exact for the bounds of every width up to 32 bits;
// for 64 bits the largest double below 2^63 / 2^64 keeps the bound inside).
std::pair<double, double> integer_range(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return {-128.0, 127.0};
    case DataType::kInt16:
      return {-32768.0, 32767.0};
    case DataType::kInt32:
      return {-2147483648.0, 2147483647.0};
    case DataType::kInt64:
      return {-9223372036854775808.0, 9223372036854774784.0};
    case DataType::kUInt8:
      return {0.0, 255.0};
    case DataType::kUInt16:
      return {0.0, 65535.0};
    case DataType::kUInt32:
      return {0.0, 4294967295.0};
    case DataType::kUInt64:
      return {0.0, 18446744073709549568.0};
    default:
      return {0.0, -1.0};  // bool and floats: no range, nothing is inside
  }
}

}  // namespace

bool float_cast_is_in_range(const Expr& value, DataType to) {
  // f16 and bf16 round bounds such as 65535 to infinity: only f32 and f64 are recognised.
  if (!value || (value->dtype != DataType::kFloat32 && value->dtype != DataType::kFloat64)) return false;
  const std::pair<double, double> range = integer_range(to);
  const double low = range.first,
               high = range.second;  // not a structured binding: clang 14's lambdas cannot capture one
  // A bound as the kernel holds it: an f32 immediate 2147483647 is 2^31, outside int32.
  auto inside = [&](double bound) {
    if (!(bound >= low && bound <= high)) return false;  // also NaN, and before narrowing to f32
    if (value->dtype == DataType::kFloat32) bound = static_cast<double>(static_cast<float>(bound));
    return bound >= low && bound <= high;
  };
  // min(max(x, a), b) and max(min(x, a), b) both lie between a and b (or equal b).
  Expr inner, x;
  double outer_bound = 0, inner_bound = 0;
  const bool clamped = (clamp_by_immediate(value, BinaryOp::kMin, &inner, &outer_bound) &&
                        clamp_by_immediate(inner, BinaryOp::kMax, &x, &inner_bound)) ||
                       (clamp_by_immediate(value, BinaryOp::kMax, &inner, &outer_bound) &&
                        clamp_by_immediate(inner, BinaryOp::kMin, &x, &inner_bound));
  return clamped && inside(inner_bound) && inside(outer_bound);
}

namespace {

class CheckCollector : public IRVisitor {
 public:
  std::vector<std::string> messages;

 protected:
  bool enter(const Check& c) override {
    if (std::find(messages.begin(), messages.end(), c.message) == messages.end()) messages.push_back(c.message);
    return true;
  }
};

class ScratchCollector : public IRVisitor {
 public:
  ScratchNeed need;

 protected:
  bool enter(const Allocate& a) override {
    // Saturating: an overflowing size is simply more than any limit.
    int64_t bytes = 0;
    if (__builtin_mul_overflow(buffer_span(*a.buffer), static_cast<int64_t>(dtype_size(a.buffer->dtype)), &bytes))
      bytes = INT64_MAX;
    if (__builtin_add_overflow(need.bytes, bytes, &need.bytes)) need.bytes = INT64_MAX;
    if (bytes > need.largest_bytes) {
      need.largest_bytes = bytes;
      need.largest_buffer = a.buffer->name;
    }
    return true;
  }
};

}  // namespace

ScratchNeed scratch_need(const Func& f) {
  ScratchCollector c;
  c.visit(f.body);
  return c.need;
}

std::vector<std::string> check_messages(const Func& f) {
  CheckCollector c;
  c.visit(f.body);
  return std::move(c.messages);
}

std::string check_failure_text(const std::vector<std::string>& messages, const CheckRecord& record) {
  if (record.check < 1 || record.check > static_cast<int64_t>(messages.size()))
    return "check " + std::to_string(record.check) + " failed (value " + std::to_string(record.value) + ")";
  std::string text = messages[static_cast<size_t>(record.check - 1)];
  if (size_t at = text.find("{}"); at != std::string::npos) text.replace(at, 2, std::to_string(record.value));
  return text;
}

}  // namespace tessel::loopir
