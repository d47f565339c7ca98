#include "core/loopir/interpreter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/loopir/printer.h"
#include "core/support/error.h"
#include "core/support/int_math.h"

namespace tessel::loopir {
namespace {

struct CallEvaluators {
  std::mutex mutex;
  std::unordered_map<std::string, CallEvaluator> by_name;
};

CallEvaluators& call_evaluators() {
  static CallEvaluators registry;
  return registry;
}

CallEvaluator find_call_evaluator(const std::string& name) {
  CallEvaluators& r = call_evaluators();
  std::lock_guard lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? CallEvaluator() : it->second;
}

struct Value {
  double f = 0;
  int64_t i = 0;
  bool is_float = false;
  double as_double() const { return is_float ? f : static_cast<double>(i); }
  int64_t as_int() const { return is_float ? float_to_int64(f) : i; }
};

Value int_value(int64_t v) { return Value{0, v, false}; }
Value float_value(double v) { return Value{v, 0, true}; }

// Integer elements move between tensors and Values as exact 64-bit patterns, never through double
// (an int64 or u64 beyond 2^53 would lose its low bits); a u64 above 2^63 is held as the int64 of
// the same bits, and the operations whose meaning depends on the sign read it back as unsigned.
int64_t load_integer(const Tensor& t, int64_t flat) {
  return dispatch_dtype(t.dtype(), [&]<class T>() -> int64_t {
    if constexpr (std::is_integral_v<T>)
      return static_cast<int64_t>(reinterpret_cast<const T*>(t.raw_data())[flat]);
    else
      return static_cast<int64_t>(to_double(reinterpret_cast<const T*>(t.raw_data())[flat]));
  });
}
void store_integer(Tensor& t, int64_t flat, int64_t v) {
  dispatch_dtype(t.dtype(), [&]<class T>() {
    T* data = reinterpret_cast<T*>(t.raw_data());
    if constexpr (std::is_same_v<T, bool>)
      data[flat] = v != 0;
    else if constexpr (std::is_integral_v<T>)
      data[flat] = static_cast<T>(v);
    else
      data[flat] = from_double<T>(static_cast<double>(v));
  });
}
// An integer converted to a narrower type keeps its low bits, as compiled code's truncation does.
int64_t narrowed_to(DataType t, int64_t v) {
  return dispatch_dtype(t, [&]<class T>() -> int64_t {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return static_cast<int64_t>(static_cast<T>(v));
    else
      return v;
  });
}
double unsigned_as_double(int64_t bits) { return static_cast<double>(static_cast<uint64_t>(bits)); }

double round_to(DataType t, double v) {
  switch (t) {
    case DataType::kFloat32:
      return static_cast<double>(static_cast<float>(v));
    case DataType::kFloat16:
      return static_cast<double>(to_float(to_float16(static_cast<float>(v))));
    case DataType::kBFloat16:
      return static_cast<double>(to_float(to_bfloat16(static_cast<float>(v))));
    default:
      return v;
  }
}

class Interpreter {
 public:
  void bind(const std::string& name, Tensor t) { buffers_[name] = std::move(t); }

  void exec(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case NodeKind::kFor: {
        auto* n = as<For>(s);
        int64_t mn = eval(n->min).as_int(), ext = eval(n->extent).as_int();
        const Var* v = n->var.get();
        for (int64_t k = mn; k < mn + ext; ++k) {
          vars_[v] = int_value(k);
          exec(n->body);
        }
        vars_.erase(v);
        return;
      }
      case NodeKind::kStore: {
        auto* n = as<Store>(s);
        Value val = eval(n->value);
        Tensor& t = tensor_of(*n->buffer);
        int64_t flat = flat_index(*n->buffer, n->indices, t);
        if (!val.is_float && !dtype_is_float(t.dtype()))
          store_integer(t, flat, val.i);
        else if (!val.is_float && n->value->dtype == DataType::kUInt64)
          t.set_double(flat, unsigned_as_double(val.i));
        else
          t.set_double(flat, val.as_double());
        return;
      }
      case NodeKind::kAllocate: {
        auto* n = as<Allocate>(s);
        auto it = buffers_.find(n->buffer->name);
        std::optional<Tensor> saved;
        if (it != buffers_.end()) saved = it->second;
        buffers_[n->buffer->name] = Tensor(n->buffer->dtype, Shape{buffer_span(*n->buffer)});
        exec(n->body);
        if (saved)
          buffers_[n->buffer->name] = *saved;
        else
          buffers_.erase(n->buffer->name);
        return;
      }
      case NodeKind::kLetStmt: {
        auto* n = as<LetStmt>(s);
        vars_[n->var.get()] = eval(n->value);
        exec(n->body);
        vars_.erase(n->var.get());
        return;
      }
      case NodeKind::kIfThenElse: {
        auto* n = as<IfThenElse>(s);
        if (eval(n->cond).as_int())
          exec(n->then_case);
        else
          exec(n->else_case);
        return;
      }
      case NodeKind::kSeq:
        for (auto& c : as<Seq>(s)->stmts) exec(c);
        return;
      case NodeKind::kEvaluate: {
        const Expr& v = as<Evaluate>(s)->value;
        if (auto* c = as<Call>(v); c && (run_registered_call(*c) || run_dependence_token(*c))) return;
        if (auto* c = as<Call>(v); c && c->builtin == Builtin::kPrefetch) return;  // a cache hint changes no value
        eval(v);
        return;
      }
      case NodeKind::kBarrier:
        return;  // serial execution: writes are already visible
      default:
        throw Error("interpreter: unknown statement kind " + std::string(node_kind_name(s->kind)));
    }
  }

  Value eval(const Expr& e) {
    switch (e->kind) {
      case NodeKind::kIntImm:
        return int_value(as<IntImm>(e)->value);
      case NodeKind::kFloatImm:
        return float_value(as<FloatImm>(e)->value);
      case NodeKind::kVar: {
        auto it = vars_.find(static_cast<const Var*>(e.get()));
        if (it == vars_.end()) throw Error("interpreter: variable '" + as<Var>(e)->name + "' is not bound");
        return it->second;
      }
      case NodeKind::kBinary:
        return eval_binary(*as<Binary>(e));
      case NodeKind::kNot:
        return int_value(eval(as<Not>(e)->a).as_int() == 0);
      case NodeKind::kSelect: {
        auto* n = as<Select>(e);
        return eval(n->cond).as_int() ? eval(n->true_value) : eval(n->false_value);
      }
      case NodeKind::kCast: {
        auto* n = as<Cast>(e);
        Value v = eval(n->value);
        const bool from_u64 = !v.is_float && n->value->dtype == DataType::kUInt64;
        if (dtype_is_float(n->dtype))
          return float_value(round_to(n->dtype, from_u64 ? unsigned_as_double(v.i) : v.as_double()));
        if (n->dtype == DataType::kBool) return int_value(v.is_float ? v.f != 0 : v.i != 0);
        if (v.is_float && n->dtype == DataType::kUInt64) return int_value(static_cast<int64_t>(float_to_uint64(v.f)));
        return int_value(narrowed_to(n->dtype, v.is_float ? float_to_int64(v.f) : v.i));
      }
      case NodeKind::kLoad: {
        auto* n = as<Load>(e);
        Tensor& t = tensor_of(*n->buffer);
        const int64_t flat = flat_index(*n->buffer, n->indices, t);
        if (dtype_is_float(n->dtype)) return float_value(t.get_double(flat));
        return int_value(load_integer(t, flat));
      }
      case NodeKind::kCall:
        return eval_call(*as<Call>(e));
      case NodeKind::kReduce:
        throw Error("interpreter: a reduction must be lowered to loops before it runs");
      case NodeKind::kCheck:
        return eval_check(*as<Check>(e));
      default:
        throw Error("interpreter: unknown expression kind " + std::string(node_kind_name(e->kind)));
    }
  }

 private:
  // A failed check is recorded (the first one) and the program goes on with 0, as compiled code
  // does; without a record it throws at once.
  Value eval_check(const Check& n) {
    if (eval(n.condition).as_int()) return eval(n.value);
    const int64_t reported = eval(n.reported).as_int();
    if (!record_) {
      CheckRecord failed{1, reported};
      throw Error(check_failure_text({n.message}, failed));
    }
    if (record_->check == 0) {
      const std::vector<std::string>& messages = *messages_;
      auto it = std::find(messages.begin(), messages.end(), n.message);
      record_->check = static_cast<int64_t>(it - messages.begin()) + 1;
      record_->value = reported;
    }
    return dtype_is_float(n.dtype) ? float_value(0) : int_value(0);
  }

 public:
  void set_check_record(CheckRecord* record, const std::vector<std::string>* messages) {
    record_ = record;
    messages_ = messages;
  }

 private:
  Tensor& tensor_of(const BufferNode& b) {
    auto it = buffers_.find(b.name);
    if (it == buffers_.end()) throw Error("interpreter: buffer '" + b.name + "' is neither a parameter nor allocated");
    return it->second;
  }

  int64_t flat_index(const BufferNode& b, const std::vector<Expr>& indices, const Tensor& t) {
    int64_t flat = 0;
    if (indices.size() == 1) {
      flat = eval(indices[0]).as_int();
    } else {
      if (indices.size() != b.shape.size())
        throw Error("interpreter: buffer '" + b.name + "' has rank " + std::to_string(b.shape.size()) +
                    " but is indexed with " + std::to_string(indices.size()) + " indices");
      Shape strides = b.strides.empty() ? contiguous_strides(b.shape) : b.strides;
      for (size_t d = 0; d < indices.size(); ++d) {
        int64_t v = eval(indices[d]).as_int();
        if (v < 0 || v >= b.shape[d])
          throw Error("interpreter: out-of-bounds access " + b.name + " index " + std::to_string(v) + " on axis " +
                      std::to_string(d) + " of extent " + std::to_string(b.shape[d]));
        flat += v * strides[d];
      }
    }
    if (flat < 0 || flat >= t.numel())
      throw Error("interpreter: out-of-bounds access " + b.name + "[" + std::to_string(flat) + "] of " +
                  std::to_string(t.numel()) + " elements");
    return flat;
  }

  Value eval_binary(const Binary& n) {
    if (n.op == BinaryOp::kAnd) return int_value(eval(n.a).as_int() && eval(n.b).as_int());
    if (n.op == BinaryOp::kOr) return int_value(eval(n.a).as_int() || eval(n.b).as_int());
    Value a = eval(n.a), b = eval(n.b);
    if (a.is_float || b.is_float) {
      double x = a.as_double(), y = b.as_double();
      if (auto c = eval_comparison(n.op, x, y)) return int_value(*c);
      switch (n.op) {
        case BinaryOp::kAdd:
          return float_value(round_to(n.dtype, x + y));
        case BinaryOp::kSub:
          return float_value(round_to(n.dtype, x - y));
        case BinaryOp::kMul:
          return float_value(round_to(n.dtype, x * y));
        case BinaryOp::kDiv:
          return float_value(round_to(n.dtype, x / y));
        case BinaryOp::kMod:
          return float_value(round_to(n.dtype, x - std::floor(x / y) * y));
        // Float min/max drop a NaN operand, as compiled code's minnum/fmin do (std::min would keep
        // whichever operand comes first).
        case BinaryOp::kMin:
          return float_value(std::fmin(x, y));
        case BinaryOp::kMax:
          return float_value(std::fmax(x, y));
        default:
          break;
      }
    }
    int64_t x = a.i, y = b.i;
    if (n.a->dtype == DataType::kUInt64 || n.b->dtype == DataType::kUInt64) {
      if (auto r = eval_unsigned(n, static_cast<uint64_t>(x), static_cast<uint64_t>(y))) return *r;
    }
    if (auto c = eval_comparison(n.op, x, y)) return int_value(*c);
    // + - * wrap modulo 2^64 as compiled code does (signed overflow would be undefined here).
    auto wrap = [](uint64_t v) { return int_value(static_cast<int64_t>(v)); };
    switch (n.op) {
      case BinaryOp::kAdd:
        return wrap(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
      case BinaryOp::kSub:
        return wrap(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
      case BinaryOp::kMul:
        return wrap(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
      case BinaryOp::kDiv:
        if (y == 0) throw Error("interpreter: integer division by zero in " + to_string(n.a) + " / " + to_string(n.b));
        return int_value(floor_div(x, y));
      case BinaryOp::kMod:
        if (y == 0) throw Error("interpreter: integer modulo by zero in " + to_string(n.a) + " % " + to_string(n.b));
        return int_value(floor_mod(x, y));
      case BinaryOp::kMin:
        return int_value(std::min(x, y));
      case BinaryOp::kMax:
        return int_value(std::max(x, y));
      default:
        break;
    }
    throw Error("interpreter: unsupported operator " + std::string(binary_op_symbol(n.op)));
  }

  // The u64 operations whose result differs from int64's on the same bits: order, division and
  // remainder (floor and truncation agree for unsigned values). + - * wrap alike.
  std::optional<Value> eval_unsigned(const Binary& n, uint64_t x, uint64_t y) {
    if (auto c = eval_comparison(n.op, x, y)) return int_value(*c);
    auto bits = [](uint64_t v) { return int_value(static_cast<int64_t>(v)); };
    switch (n.op) {
      case BinaryOp::kDiv:
        if (y == 0) throw Error("interpreter: integer division by zero in " + to_string(n.a) + " / " + to_string(n.b));
        return bits(x / y);
      case BinaryOp::kMod:
        if (y == 0) throw Error("interpreter: integer modulo by zero in " + to_string(n.a) + " % " + to_string(n.b));
        return bits(x % y);
      case BinaryOp::kMin:
        return bits(std::min(x, y));
      case BinaryOp::kMax:
        return bits(std::max(x, y));
      default:
        return std::nullopt;
    }
  }

  // A call with a registered evaluator (a tensor intrinsic) runs the statement the evaluator
  // makes of it.
  bool run_registered_call(const Call& n) {
    CallEvaluator evaluator = find_call_evaluator(n.name);
    if (!evaluator) return false;
    Site site(*this);
    exec(evaluator(n, site));
    return true;
  }

  class Site final : public CallSite {
   public:
    explicit Site(Interpreter& in) : in_(in) {}
    int64_t integer(const Expr& argument) override { return in_.eval(argument).as_int(); }
    int64_t element_offset(const Load& element) override {
      return in_.flat_index(*element.buffer, element.indices, in_.tensor_of(*element.buffer));
    }

   private:
    Interpreter& in_;
  };

  // dep_push(from, to) / dep_pop(from, to): counted tokens between decoupled queues
  // (inject_virtual_thread). Run in program order, a pop must find a token, or the queues would
  // wait for each other forever.
  bool run_dependence_token(const Call& n) {
    if (!n.is_dependence_token()) return false;
    const bool push = n.builtin == Builtin::kDepPush;
    if (n.args.size() != 2) throw Error("interpreter: " + n.name + " takes 2 arguments (from, to)");
    auto key = std::make_pair(eval(n.args[0]).as_int(), eval(n.args[1]).as_int());
    int64_t& count = tokens_[key];
    if (push) {
      ++count;
    } else if (count-- == 0) {
      throw Error("interpreter: dep_pop(" + std::to_string(key.first) + ", " + std::to_string(key.second) +
                  ") finds no token: the queues would deadlock");
    }
    return true;
  }

 public:
  // Tokens still pushed at the end mean a consumer never waited for them: a broken pipeline.
  void check_tokens_balanced() const {
    for (auto& [key, count] : tokens_)
      if (count != 0)
        throw Error("interpreter: " + std::to_string(count) + " dependence token(s) from queue " +
                    std::to_string(key.first) + " to " + std::to_string(key.second) + " are never popped");
  }

 private:
  // sin, cos, tan, their inverses and the hyperbolic ones; nullptr for other names.
  static double (*trigonometric(const std::string& name))(double) {
    static const std::map<std::string, double (*)(double)> fns = {
        {"sin", [](double x) { return std::sin(x); }},     {"cos", [](double x) { return std::cos(x); }},
        {"tan", [](double x) { return std::tan(x); }},     {"asin", [](double x) { return std::asin(x); }},
        {"acos", [](double x) { return std::acos(x); }},   {"atan", [](double x) { return std::atan(x); }},
        {"sinh", [](double x) { return std::sinh(x); }},   {"cosh", [](double x) { return std::cosh(x); }},
        {"asinh", [](double x) { return std::asinh(x); }}, {"acosh", [](double x) { return std::acosh(x); }},
        {"atanh", [](double x) { return std::atanh(x); }}};
    auto it = fns.find(name);
    return it == fns.end() ? nullptr : it->second;
  }

  Value eval_call(const Call& n) {
    std::vector<double> a;
    for (auto& x : n.args) a.push_back(eval(x).as_double());
    auto need = [&](size_t k) {
      if (a.size() != k)
        throw Error("interpreter: intrinsic '" + n.name + "' takes " + std::to_string(k) + " arguments");
    };
    double r = 0;
    if (n.name == "exp") {
      need(1);
      r = std::exp(a[0]);
    } else if (n.name == "log") {
      need(1);
      r = std::log(a[0]);
    } else if (n.name == "sqrt") {
      need(1);
      r = std::sqrt(a[0]);
    } else if (n.name == "rsqrt") {
      need(1);
      r = 1.0 / std::sqrt(a[0]);
    } else if (n.name == "tanh") {
      need(1);
      r = std::tanh(a[0]);
    } else if (n.name == "erf") {
      need(1);
      r = std::erf(a[0]);
    } else if (n.name == "sigmoid") {
      need(1);
      r = 1.0 / (1.0 + std::exp(-a[0]));
    } else if (n.name == "abs") {
      need(1);
      r = std::fabs(a[0]);
    } else if (n.name == "pow") {
      need(2);
      r = std::pow(a[0], a[1]);
    } else if (n.name == "fma") {
      need(3);
      r = a[0] * a[1] + a[2];
    } else if (n.name == "fmod") {
      need(2);
      r = std::fmod(a[0], a[1]);
    } else if (double (*f)(double) = trigonometric(n.name)) {
      need(1);
      r = f(a[0]);
    } else
      throw Error("interpreter: unknown intrinsic '" + n.name + "'");
    if (dtype_is_float(n.dtype)) return float_value(round_to(n.dtype, r));
    return int_value(static_cast<int64_t>(r));
  }

  std::unordered_map<std::string, Tensor> buffers_;
  std::map<std::pair<int64_t, int64_t>, int64_t> tokens_;
  std::unordered_map<const Var*, Value> vars_;
  CheckRecord* record_ = nullptr;
  const std::vector<std::string>* messages_ = nullptr;
};

}  // namespace

void register_call_evaluator(const std::string& call_name, CallEvaluator evaluator) {
  if (!evaluator) throw Error("interpreter: no evaluator given for call '" + call_name + "'");
  CallEvaluators& r = call_evaluators();
  std::lock_guard lock(r.mutex);
  if (!r.by_name.emplace(call_name, std::move(evaluator)).second)
    throw Error("interpreter: call '" + call_name + "' already has an evaluator");
}

void interpret(const Func& f, const std::vector<Tensor>& args, CheckRecord* record) {
  if (args.size() != f.params.size())
    throw Error("interpreter: " + f.name + " takes " + std::to_string(f.params.size()) + " buffers, got " +
                std::to_string(args.size()));
  Interpreter in;
  const std::vector<std::string> messages = record ? check_messages(f) : std::vector<std::string>{};
  in.set_check_record(record, &messages);
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& p = *f.params[i];
    if (args[i].numel() < buffer_span(p))
      throw Error("interpreter: argument " + p.name + " has " + std::to_string(args[i].numel()) + " elements, " +
                  f.name + " needs " + std::to_string(buffer_span(p)));
    in.bind(p.name, args[i]);
  }
  in.exec(f.body);
  in.check_tokens_balanced();
}

double evaluate_constant(const Expr& e) {
  Interpreter in;
  return in.eval(e).as_double();
}

}  // namespace tessel::loopir
