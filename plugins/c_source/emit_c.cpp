#include "plugins/c_source/emit_c.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/support/error.h"

namespace tessel::c_source {

namespace {

namespace ir = tessel::loopir;

constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;

const char* kPrelude = R"(#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Integer division and modulo of the loop IR round towards negative infinity. */
static inline int64_t tessel_floordiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
static inline int64_t tessel_floormod(int64_t a, int64_t b) { int64_t r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
static inline int64_t tessel_min_i(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t tessel_max_i(int64_t a, int64_t b) { return a > b ? a : b; }
static inline double tessel_fmod_floor(double a, double b) { return a - floor(a / b) * b; }

/* Float -> integer, the rule of every Tessel backend (a bare C cast is undefined for NaN and out of
   range): truncate, NaN -> 0, saturate at int64, then the cast to a narrower type keeps the low
   bits; uint64 keeps [2^63, 2^64) exactly and saturates above. */
static inline int64_t tessel_float_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}
static inline uint64_t tessel_float_to_uint64(double v) {
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  if (v >= 9223372036854775808.0) return (uint64_t)v;
  return (uint64_t)tessel_float_to_int64(v);
}

/* bfloat16 values are their raw bits (uint16_t); arithmetic goes through float, rounding to nearest
   even and keeping NaNs quiet, as core/support's to_bfloat16 does. */
static inline float tessel_bf16_to_float(uint16_t h) { union { uint32_t u; float f; } x; x.u = (uint32_t)h << 16; return x.f; }
static inline uint16_t tessel_float_to_bf16(float f) {
  union { float f; uint32_t u; } x; x.f = f;
  if ((x.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x.u >> 16) | 0x40u);
  return (uint16_t)((x.u + 0x7fffu + ((x.u >> 16) & 1u)) >> 16);
}

/* A failed run-time check (loopir::Check): the first one is recorded, and the kernel goes on with 0
   in place of the checked value. The C backend runs parallel loops serially: no race. */
typedef struct { int64_t check, value; } tessel_check_record;
static int64_t tessel_check_failed(tessel_check_record* record, int64_t check, int64_t value) {
  if (record->check == 0) { record->check = check; record->value = value; }
  return 0;
}

)";

const char* c_type(DataType t) {
  switch (t) {
    case DataType::kFloat32: return "float";
    case DataType::kFloat64: return "double";
    case DataType::kFloat16: return "_Float16";  // GCC and Clang on x86-64: IEEE half, arithmetic through float
    case DataType::kBFloat16:
      return "uint16_t";  // the raw bits; every use converts through float
    case DataType::kInt8: return "int8_t";
    case DataType::kInt16: return "int16_t";
    case DataType::kInt32: return "int32_t";
    case DataType::kInt64: return "int64_t";
    case DataType::kUInt8: return "uint8_t";
    case DataType::kUInt16: return "uint16_t";
    case DataType::kUInt32: return "uint32_t";
    case DataType::kUInt64: return "uint64_t";
    case DataType::kBool: return "uint8_t";
    default: return nullptr;
  }
}

class Emitter {
 public:
  std::string kernel(const ir::Func& f) {
    kernel_ = f.name;
    names_.clear();
    used_.clear();
    out_.str("");
    check_ids_.clear();
    for (const std::string& message : ir::check_messages(f))
      check_ids_[message] = static_cast<int64_t>(check_ids_.size()) + 1;
    out_ << "void " << identifier(f.name) << "(void** args) {\n";
    for (size_t k = 0; k < f.params.size(); ++k) {
      const auto& b = *f.params[k];
      out_ << "  " << type(b.dtype) << "* restrict " << buffer_name(b.name) << " = (" << type(b.dtype) << "*)args[" << k << "];\n";
    }
    check_record_ = fresh("check_record");
    out_ << "  tessel_check_record* " << check_record_ << " = (tessel_check_record*)args[" << f.params.size() << "];\n";
    if (check_ids_.empty()) out_ << "  (void)" << check_record_ << ";\n";
    stmt(f.body, 1);
    out_ << "}\n\n";
    // Tensor intrinsics the kernel calls, declared in front of it (libtessel_core defines them).
    std::string decls;
    for (auto& d : extern_decls_) decls += d + "\n";
    return decls + out_.str();
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw Error("kernel '" + kernel_ + "': c codegen: " + why); }

  const char* type(DataType t) const {
    const char* c = c_type(t);
    if (!c) fail(std::string(dtype_name(t)) + " is not supported by the C backend");
    return c;
  }

  static std::string identifier(const std::string& name) {
    std::string s;
    for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
    return s;
  }
  std::string fresh(const std::string& base) {
    std::string name = identifier(base);
    while (used_.count(name)) name += "_";
    used_.insert(name);
    return name;
  }
  std::string buffer_name(const std::string& name) {
    auto it = buffer_names_.find(name);
    if (it != buffer_names_.end()) return it->second;
    return buffer_names_[name] = fresh("b_" + name);
  }
  std::string var_name(const ir::Var* v) {
    auto it = names_.find(v);
    if (it == names_.end()) fail("variable '" + v->name + "' is used outside its loop or let");
    return it->second;
  }
  std::string bind(const ir::Var* v) { return names_[v] = fresh("v_" + v->name); }

  std::string number(double v, DataType t) {
    char buf[64];
    if (t == DataType::kBFloat16) return "((uint16_t)" + std::to_string(to_bfloat16(static_cast<float>(v)).bits) + "u)";
    if (dtype_is_float(t)) {
      if (std::isnan(v)) return t == DataType::kFloat32 ? "NAN" : "(double)NAN";
      if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
      std::snprintf(buf, sizeof buf, t == DataType::kFloat32 ? "%.9gf" : "%.17g", v);
      std::string s = buf;
      if (s.find_first_of(".eEn") == std::string::npos) s.insert(s.size() - (t == DataType::kFloat32 ? 1 : 0), ".0");
      return "(" + s + ")";
    }
    std::snprintf(buf, sizeof buf, "((%s)%lldLL)", type(t), static_cast<long long>(v));
    return buf;
  }

  // `in_range`: a float value that is neither NaN nor outside `to` (loopir::float_cast_is_in_range)
  // converts with a plain cast; any other float goes through the prelude's saturating rule.
  std::string cast(const std::string& e, DataType from, DataType to, bool in_range = false) {
    if (from == to) return e;
    if (from == DataType::kBFloat16) return cast("tessel_bf16_to_float(" + e + ")", DataType::kFloat32, to);
    if (to == DataType::kBFloat16) return "tessel_float_to_bf16(" + cast(e, from, DataType::kFloat32) + ")";
    if (to == DataType::kBool) return "((uint8_t)((" + e + ") != 0))";
    if (dtype_is_float(from) && !dtype_is_float(to) && !in_range)
      return to == DataType::kUInt64 ? "tessel_float_to_uint64(" + e + ")"
                                     : "((" + std::string(type(to)) + ")tessel_float_to_int64(" + e + "))";
    return "((" + std::string(type(to)) + ")(" + e + "))";
  }

  std::string expr(const ir::Expr& e) {
    if (auto* n = ir::as<ir::IntImm>(e)) return number(static_cast<double>(n->value), n->dtype);
    if (auto* n = ir::as<ir::FloatImm>(e)) return number(n->value, n->dtype);
    if (auto* n = ir::as<ir::Var>(e)) return var_name(n);
    if (auto* n = ir::as<ir::Binary>(e)) return binary(*n);
    if (auto* n = ir::as<ir::Not>(e)) return "(!(" + expr(n->a) + "))";
    if (auto* n = ir::as<ir::Select>(e))
      return "((" + expr(n->cond) + ") ? " + cast(expr(n->true_value), n->true_value->dtype, n->dtype) + " : " +
             cast(expr(n->false_value), n->false_value->dtype, n->dtype) + ")";
    if (auto* n = ir::as<ir::Cast>(e))
      return cast(expr(n->value), n->value->dtype, n->dtype, ir::float_cast_is_in_range(n->value, n->dtype));
    if (auto* n = ir::as<ir::Load>(e)) {
      std::string v = buffer_name(n->buffer->name) + "[" + flat_index(n->buffer, n->indices) + "]";
      return n->buffer->dtype == DataType::kBool ? "(" + v + " != 0)" : v;
    }
    if (auto* n = ir::as<ir::Call>(e)) return call(*n);
    if (auto* n = ir::as<ir::Check>(e)) {
      auto id = check_ids_.find(n->message);
      if (id == check_ids_.end()) fail("a check that check_messages does not list: " + n->message);
      return "((" + expr(n->condition) + ") ? " + expr(n->value) + " : " +
             cast("tessel_check_failed(" + check_record_ + ", " + std::to_string(id->second) + "LL, " +
                      cast(expr(n->reported), n->reported->dtype, DataType::kInt64) + ")",
                  DataType::kInt64, n->dtype) +
             ")";
    }
    fail("unexpected expression node " + std::string(ir::node_kind_name(e->kind)));
  }

  std::string binary(const ir::Binary& n) {
    using Op = ir::BinaryOp;
    bool fp = dtype_is_float(n.a->dtype) || dtype_is_float(n.b->dtype);
    // Integers meet in int64, which holds every narrower type exactly; a u64 operand needs uint64_t
    // for its order, division and remainder (the loop IR's floor and truncation agree there).
    const bool wide_unsigned = n.a->dtype == DataType::kUInt64 || n.b->dtype == DataType::kUInt64;
    DataType operand = fp ? (n.a->dtype == DataType::kFloat64 || n.b->dtype == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32)
                          : wide_unsigned ? DataType::kUInt64 : DataType::kInt64;
    std::string a = cast(expr(n.a), n.a->dtype, operand), b = cast(expr(n.b), n.b->dtype, operand);
    std::string r;
    bool single = operand == DataType::kFloat32;
    if (wide_unsigned && !fp) {
      switch (n.op) {
        case Op::kDiv: return cast("(" + a + " / " + b + ")", operand, n.dtype);
        case Op::kMod: return cast("(" + a + " % " + b + ")", operand, n.dtype);
        case Op::kMin: return cast("(" + a + " < " + b + " ? " + a + " : " + b + ")", operand, n.dtype);
        case Op::kMax: return cast("(" + a + " > " + b + " ? " + a + " : " + b + ")", operand, n.dtype);
        default: break;  // + - * wrap alike; comparisons below compare uint64_t
      }
    }
    switch (n.op) {
      case Op::kAdd: r = "(" + a + " + " + b + ")"; break;
      case Op::kSub: r = "(" + a + " - " + b + ")"; break;
      case Op::kMul: r = "(" + a + " * " + b + ")"; break;
      case Op::kDiv: r = fp ? "(" + a + " / " + b + ")" : "tessel_floordiv(" + a + ", " + b + ")"; break;
      case Op::kMod: r = fp ? "tessel_fmod_floor(" + a + ", " + b + ")" : "tessel_floormod(" + a + ", " + b + ")"; break;
      case Op::kMin: r = fp ? std::string(single ? "fminf(" : "fmin(") + a + ", " + b + ")" : "tessel_min_i(" + a + ", " + b + ")"; break;
      case Op::kMax: r = fp ? std::string(single ? "fmaxf(" : "fmax(") + a + ", " + b + ")" : "tessel_max_i(" + a + ", " + b + ")"; break;
      case Op::kEQ: return "(" + a + " == " + b + ")";
      case Op::kNE: return "(" + a + " != " + b + ")";
      case Op::kLT: return "(" + a + " < " + b + ")";
      case Op::kLE: return "(" + a + " <= " + b + ")";
      case Op::kGT: return "(" + a + " > " + b + ")";
      case Op::kGE: return "(" + a + " >= " + b + ")";
      case Op::kAnd: return "(" + a + " && " + b + ")";
      case Op::kOr: return "(" + a + " || " + b + ")";
    }
    return cast(r, operand, n.dtype);
  }

  // A tensor intrinsic call (tessel_intrin_*): pointers to operand regions (address_of, the last
  // one is the output) and int64 strides, to a C function of libtessel_core (core/runtime).
  std::string extern_call(const ir::Call& n) {
    std::vector<std::string> a, params;
    size_t last_pointer = 0;
    for (size_t k = 0; k < n.args.size(); ++k)
      if (auto* c = ir::as<ir::Call>(n.args[k]); c && c->builtin == ir::Builtin::kAddressOf) last_pointer = k;
    for (size_t k = 0; k < n.args.size(); ++k) {
      auto* c = ir::as<ir::Call>(n.args[k]);
      const ir::Load* l = ir::address_of_load(n.args[k]);
      if (c && c->builtin == ir::Builtin::kAddressOf && !l) fail(n.name + ": address_of takes one buffer access");
      if (l) {
        a.push_back("(&" + buffer_name(l->buffer->name) + "[" + flat_index(l->buffer, l->indices) + "])");
        params.push_back(std::string(k == last_pointer ? "" : "const ") + type(l->buffer->dtype) + "*");
      } else {
        a.push_back(cast(expr(n.args[k]), n.args[k]->dtype, DataType::kInt64));
        params.push_back("int64_t");
      }
    }
    std::string decl = "void " + n.name + "(", text = n.name + "(";
    for (size_t k = 0; k < a.size(); ++k) {
      decl += (k ? ", " : "") + params[k];
      text += (k ? ", " : "") + a[k];
    }
    extern_decls_.insert(decl + ");");
    return text + ")";
  }

  std::string call(const ir::Call& n) {
    if (n.builtin == ir::Builtin::kTensorIntrinsic) return extern_call(n);
    // Dependence tokens between an accelerator's queues: satisfied by running in program order.
    if (n.is_dependence_token()) return "0";
    // prefetch(address_of(B[i])) (inject_prefetch): a read hint into the L2 cache (GCC and Clang).
    if (n.builtin == ir::Builtin::kPrefetch && n.args.size() == 1) {
      const ir::Load* l = ir::address_of_load(n.args[0]);
      if (!l) fail("prefetch takes address_of(BUFFER[index])");
      return "(__builtin_prefetch(&" + buffer_name(l->buffer->name) + "[" + flat_index(l->buffer, l->indices) +
             "], 0, 2), 0)";
    }
    if (n.dtype == DataType::kBFloat16) {  // computed in float
      std::vector<ir::Expr> args;
      for (const auto& x : n.args) args.push_back(ir::make_cast(DataType::kFloat32, x));
      return cast(call(ir::Call(n.name, std::move(args), DataType::kFloat32)), DataType::kFloat32, n.dtype);
    }
    std::vector<std::string> a;
    for (const auto& x : n.args) a.push_back(cast(expr(x), x->dtype, n.dtype));
    bool single = n.dtype == DataType::kFloat32;
    auto f = [&](const char* base) { return std::string(base) + (single ? "f" : ""); };
    auto need = [&](size_t k) {
      if (a.size() != k) fail("intrinsic '" + n.name + "' takes " + std::to_string(k) + " arguments");
    };
    if (!dtype_is_float(n.dtype) && n.name != "abs") fail("intrinsic '" + n.name + "' on " + std::string(dtype_name(n.dtype)));
    static const std::set<std::string> libm_unary = {"exp",  "log",  "sqrt", "tanh", "erf",  "sin",   "cos",   "tan",
                                                     "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"};
    if (libm_unary.count(n.name)) {
      need(1);
      return f(n.name.c_str()) + "(" + a[0] + ")";
    }
    if (n.name == "rsqrt") { need(1); return "(1 / " + f("sqrt") + "(" + a[0] + "))"; }
    if (n.name == "sigmoid") { need(1); return "(1 / (1 + " + f("exp") + "(-(" + a[0] + "))))"; }
    if (n.name == "abs") {
      need(1);
      return dtype_is_float(n.dtype) ? f("fabs") + "(" + a[0] + ")" : cast("llabs(" + a[0] + ")", DataType::kInt64, n.dtype);
    }
    if (n.name == "pow") { need(2); return f("pow") + "(" + a[0] + ", " + a[1] + ")"; }
    if (n.name == "fmod") { need(2); return f("fmod") + "(" + a[0] + ", " + a[1] + ")"; }
    if (n.name == "fma") { need(3); return f("fma") + "(" + a[0] + ", " + a[1] + ", " + a[2] + ")"; }
    fail("unknown intrinsic '" + n.name + "'");
  }

  std::string flat_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
    std::vector<int64_t> strides = b->strides.empty() ? contiguous_strides(b->shape) : b->strides;
    if (idx.size() == 1 && b->shape.size() != 1) strides = {1};
    if (idx.size() != strides.size()) fail("access to '" + b->name + "' has the wrong number of indices");
    std::string s;
    for (size_t k = 0; k < idx.size(); ++k) {
      std::string term = cast(expr(idx[k]), idx[k]->dtype, DataType::kInt64);
      if (strides[k] != 1) term = "(" + term + " * " + std::to_string(strides[k]) + "LL)";
      s += (s.empty() ? "" : " + ") + term;
    }
    return s.empty() ? "0" : s;
  }

  void line(int indent, const std::string& text) { out_ << std::string(static_cast<size_t>(indent) * 2, ' ') << text << "\n"; }

  void stmt(const ir::Stmt& s, int indent) {
    if (!s) return;
    if (auto* n = ir::as<ir::Seq>(s)) {
      for (const auto& x : n->stmts) stmt(x, indent);
    } else if (auto* n = ir::as<ir::For>(s)) {
      if (n->for_kind == ir::ForKind::kThreadBound)
        fail("loop '" + n->var->name + "' is bound to " + n->thread_tag + ": GPU thread bindings cannot run on the CPU");
      std::string lo = cast(expr(n->min), n->min->dtype, DataType::kInt64);
      std::string ext = cast(expr(n->extent), n->extent->dtype, DataType::kInt64);
      std::string v = bind(n->var.get());
      if (n->for_kind == ir::ForKind::kVectorized) line(indent, "#pragma GCC ivdep");
      if (n->for_kind == ir::ForKind::kUnrolled) {
        int64_t e;
        if (ir::is_const_int(n->extent, &e)) line(indent, "#pragma GCC unroll " + std::to_string(std::min<int64_t>(e, 64)));
      }
      if (n->for_kind == ir::ForKind::kParallel) line(indent, "/* parallel loop: run serially by the C backend */");
      std::string end = fresh(v + "_end");
      line(indent, "for (int64_t " + v + " = " + lo + ", " + end + " = " + v + " + " + ext + "; " + v + " < " + end + "; ++" + v + ") {");
      stmt(n->body, indent + 1);
      line(indent, "}");
      names_.erase(n->var.get());
    } else if (auto* n = ir::as<ir::Store>(s)) {
      line(indent, buffer_name(n->buffer->name) + "[" + flat_index(n->buffer, n->indices) + "] = " +
                       cast(expr(n->value), n->value->dtype, n->buffer->dtype) + ";");
    } else if (auto* n = ir::as<ir::Allocate>(s)) {
      int64_t count = std::max<int64_t>(ir::buffer_span(*n->buffer), 1);
      const char* t = type(n->buffer->dtype);
      std::string saved = buffer_names_.count(n->buffer->name) ? buffer_names_[n->buffer->name] : "";
      buffer_names_.erase(n->buffer->name);
      std::string name = buffer_name(n->buffer->name);
      bool heap = count * static_cast<int64_t>(dtype_size(n->buffer->dtype)) > kMaxStackAllocationBytes;
      line(indent, "{");
      if (heap) line(indent + 1, std::string(t) + "* restrict " + name + " = (" + t + "*)aligned_alloc(64, " + std::to_string((count * static_cast<int64_t>(dtype_size(n->buffer->dtype)) + 63) / 64 * 64) + ");");
      else line(indent + 1, std::string(t) + " " + name + "[" + std::to_string(count) + "] __attribute__((aligned(64)));");
      stmt(n->body, indent + 1);
      if (heap) line(indent + 1, "free(" + name + ");");
      line(indent, "}");
      if (saved.empty()) buffer_names_.erase(n->buffer->name);
      else buffer_names_[n->buffer->name] = saved;
    } else if (auto* n = ir::as<ir::LetStmt>(s)) {
      std::string value = cast(expr(n->value), n->value->dtype, n->var->dtype);
      line(indent, "{");
      line(indent + 1, std::string(type(n->var->dtype)) + " " + bind(n->var.get()) + " = " + value + ";");
      stmt(n->body, indent + 1);
      line(indent, "}");
      names_.erase(n->var.get());
    } else if (auto* n = ir::as<ir::IfThenElse>(s)) {
      line(indent, "if (" + expr(n->cond) + ") {");
      stmt(n->then_case, indent + 1);
      if (n->else_case) {
        line(indent, "} else {");
        stmt(n->else_case, indent + 1);
      }
      line(indent, "}");
    } else if (auto* n = ir::as<ir::Evaluate>(s)) {
      line(indent, "(void)(" + expr(n->value) + ");");
    } else if (auto* n = ir::as<ir::Barrier>(s)) {
      line(indent, "/* barrier(" + n->scope + "): one thread per group on the CPU */");
    } else {
      fail("unexpected statement node " + std::string(ir::node_kind_name(s->kind)));
    }
  }

  std::string kernel_;
  std::ostringstream out_;
  std::unordered_map<const ir::Var*, std::string> names_;
  std::unordered_map<std::string, std::string> buffer_names_;
  std::unordered_set<std::string> used_;
  std::set<std::string> extern_decls_;
  std::string check_record_;                            // the C name of the kernel's tessel_check_record*
  std::unordered_map<std::string, int64_t> check_ids_;  // check message → its number (1-based)
};

}  // namespace

std::string emit_c(const std::vector<loopir::Func>& kernels) {
  std::string out = kPrelude;
  for (const auto& f : kernels) {
    Emitter e;
    out += e.kernel(f);
  }
  return out;
}

}  // namespace tessel::c_source
