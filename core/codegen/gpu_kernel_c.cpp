// Loop IR -> C-family GPU kernels (gpu_kernel_c.h): each root loop nest's text in the dialect,
// statements, expressions and vector types, with the launch gpu_launch_plan.h chose for it.
#include "core/codegen/gpu_kernel_c.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/arith/simplify.h"
#include "core/codegen/gpu_launch_plan.h"
#include "core/loopir/equal.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"

namespace tessel::codegen {

namespace {

namespace ir = tessel::loopir;

// The C type a value of `t` is computed in (f16 in float, bf16 as its raw bits).
const char* value_type(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "float";
    case DataType::kFloat64:
      return "double";
    case DataType::kFloat16:
      return "float";
    case DataType::kBFloat16:
      return "ushort";
    case DataType::kInt8:
      return "char";
    case DataType::kInt16:
      return "short";
    case DataType::kInt32:
      return "int";
    case DataType::kInt64:
      return "long";
    case DataType::kUInt8:
      return "uchar";
    case DataType::kUInt16:
      return "ushort";
    case DataType::kUInt32:
      return "uint";
    case DataType::kUInt64:
      return "ulong";
    case DataType::kBool:
      return "uchar";
    case DataType::kString:
      break;  // never compiled (te_from_graph declines string values)
  }
  return "float";
}

// The element type of a buffer of `t` in memory.
const char* storage_type(DataType t) { return t == DataType::kFloat16 ? "half" : value_type(t); }

std::string identifier(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  return s;
}

class Emitter {
 public:
  Emitter(const ir::Func& f, const GpuDialect& dialect, const GpuLimits& limits)
      : f_(f), dialect_(dialect), limits_(limits) {}

  // The function's kernels; fills `launch`.
  std::string kernels(GpuFunction& launch) {
    for (const std::string& message : ir::check_messages(f_))
      check_ids_[message] = static_cast<int64_t>(check_ids_.size()) + 1;
    launch.params = f_.params.size();
    launch.written = written_params(f_);
    std::vector<std::string> params;
    for (const auto& b : f_.params) {
      const std::string name = fresh("b_" + b->name);
      buffer_names_[b->name] = name;
      params.push_back(pointer_param(b->dtype, name));
    }
    check_record_ = fresh("check_record");

    // Root nests under global allocations: one kernel each, the allocations shared workspaces.
    std::vector<ir::Stmt> roots{f_.body};
    ir::Stmt s = f_.body;
    std::vector<const ir::Allocate*> shared_allocations;
    while (auto* a = ir::as<ir::Allocate>(s)) {
      if (a->buffer->scope != "global") break;
      shared_allocations.push_back(a);
      s = a->body;
    }
    if (auto* q = ir::as<ir::Seq>(s); q && q->stmts.size() >= 2) {
      roots = q->stmts;
      for (const ir::Allocate* a : shared_allocations) buffer_names_[a->buffer->name] = workspace(a->buffer);
    }

    struct Text {
      std::vector<std::string> local_decls;
      std::string body;
    };
    std::vector<Text> texts;
    for (size_t k = 0; k < roots.size(); ++k) {
      plan_ = plan_launch(roots[k], dialect_, limits_);
      GpuLaunch l;
      l.symbol = fresh(identifier(f_.name) + (roots.size() > 1 ? "_" + std::to_string(k) : ""));
      if (plan_.grid)
        for (int d = 0; d < 3; ++d) {
          l.blocks[d] = std::max<int64_t>(plan_.extent[d], 1);
          l.threads[d] = std::max<int64_t>(plan_.extent[d + 3], 1);
        }
      l.note = launch_note(plan_, l, dialect_);
      body_.str("");
      local_decls_.clear();
      stmt(roots[k], 1);
      texts.push_back({local_decls_, body_.str()});
      launch.launches.push_back(std::move(l));
    }
    for (size_t k = 0; k < workspaces_.size(); ++k) {
      params.push_back(pointer_param(workspaces_[k].second, workspace_names_[k]));
      launch.workspace_bytes.push_back(workspaces_[k].first);
    }
    params.push_back(dialect_.check_record_type + " " + check_record_);

    std::ostringstream out;
    for (size_t k = 0; k < texts.size(); ++k) {
      const GpuLaunch& l = launch.launches[k];
      out << "/* " << f_.name;
      if (texts.size() > 1) out << ", root nest " << k + 1 << " of " << texts.size();
      out << ": " << l.note << " */\n";
      out << dialect_.kernel_signature << " " << l.symbol << "(";
      for (size_t p = 0; p < params.size(); ++p) out << (p ? ",\n    " : "") << params[p];
      out << ") {\n";
      for (const auto& d : texts[k].local_decls) out << "  " << d << "\n";
      out << texts[k].body << "}\n\n";
    }
    return out.str();
  }

 private:
  std::string pointer_param(DataType t, const std::string& name) const {
    return dialect_.global_pointer + storage_type(t) + "* " + dialect_.restrict_pointer + " " + name;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw Error("kernel '" + f_.name + "': " + dialect_.codegen + " codegen: " + why);
  }

  std::string fresh(const std::string& base) {
    std::string name = identifier(base);
    while (used_.count(name)) name += "_";
    used_.insert(name);
    return name;
  }
  std::string buffer_name(const ir::Buffer& b) {
    auto it = buffer_names_.find(b->name);
    if (it == buffer_names_.end()) fail("buffer '" + b->name + "' is neither a parameter nor allocated");
    return it->second;
  }
  std::string var_name(const ir::Var* v) {
    auto it = names_.find(v);
    if (it == names_.end()) fail("variable '" + v->name + "' is used outside its loop or let");
    return it->second;
  }
  std::string bind(const ir::Var* v) { return names_[v] = fresh("v_" + v->name); }

  std::string number(double v, DataType t) {
    char buf[64];
    if (t == DataType::kBFloat16) return "((ushort)" + std::to_string(to_bfloat16(static_cast<float>(v)).bits) + "u)";
    if (dtype_is_float(t)) {
      const bool single = t != DataType::kFloat64;
      if (std::isnan(v)) return single ? "NAN" : "((double)NAN)";
      if (std::isinf(v)) return std::string(v > 0 ? "" : "-") + (single ? "INFINITY" : "((double)INFINITY)");
      std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", v);
      std::string s = buf;
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return "(" + s + (single ? "f" : "") + ")";
    }
    const auto i = static_cast<int64_t>(v);
    if (i == INT64_MIN) return "((long)(-9223372036854775807L - 1))";
    std::snprintf(buf, sizeof buf, "((%s)%lldL)", value_type(t), static_cast<long long>(i));
    return buf;
  }

  // `in_range`: a float value that is neither NaN nor outside `to` (loopir::float_cast_is_in_range)
  // converts with a plain cast; any other float goes through the prelude's saturating rule.
  std::string cast(const std::string& e, DataType from, DataType to, bool in_range = false) {
    if (from == to) return e;
    if (from == DataType::kBFloat16) return cast("tessel_bf16_to_float(" + e + ")", DataType::kFloat32, to);
    if (to == DataType::kBFloat16) return "tessel_float_to_bf16(" + cast(e, from, DataType::kFloat32) + ")";
    if (to == DataType::kFloat16) return "tessel_round_half((float)(" + e + "))";
    if (to == DataType::kBool) return "((uchar)((" + e + ") != 0))";
    if (dtype_is_float(from) && !dtype_is_float(to) && !in_range)
      return to == DataType::kUInt64 ? "tessel_float_to_uint64(" + e + ")"
                                     : "((" + std::string(value_type(to)) + ")tessel_float_to_int64(" + e + "))";
    return "((" + std::string(value_type(to)) + ")(" + e + "))";
  }

  std::string load(const ir::Buffer& b, const std::vector<ir::Expr>& indices) {
    const std::string index = flat_index(b, indices);
    if (b->dtype == DataType::kFloat16) return "vload_half(" + index + ", " + buffer_name(b) + ")";
    std::string v = buffer_name(b) + "[" + index + "]";
    return b->dtype == DataType::kBool ? "(" + v + " != 0)" : v;
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
    if (auto* n = ir::as<ir::Load>(e)) return load(n->buffer, n->indices);
    if (auto* n = ir::as<ir::Call>(e)) return call(*n);
    if (auto* n = ir::as<ir::Check>(e)) {
      auto id = check_ids_.find(n->message);
      if (id == check_ids_.end()) fail("a check that check_messages does not list: " + n->message);
      return "((" + expr(n->condition) + ") ? " + expr(n->value) + " : " +
             cast("tessel_check_failed(" + check_record_ + ", " + std::to_string(id->second) + ", " +
                      cast(expr(n->reported), n->reported->dtype, DataType::kInt64) + ")",
                  DataType::kInt64, n->dtype) +
             ")";
    }
    fail("unexpected expression node " + std::string(ir::node_kind_name(e->kind)));
  }

  std::string binary(const ir::Binary& n) {
    using Op = ir::BinaryOp;
    const bool fp = dtype_is_float(n.a->dtype) || dtype_is_float(n.b->dtype);
    // Integers meet in long, which holds every narrower type exactly; a u64 operand needs ulong for
    // its order, division and remainder (min, max and the comparisons are overloaded for ulong).
    const bool wide_unsigned = n.a->dtype == DataType::kUInt64 || n.b->dtype == DataType::kUInt64;
    const DataType operand =
        fp              ? (n.a->dtype == DataType::kFloat64 || n.b->dtype == DataType::kFloat64 ? DataType::kFloat64
                                                                                                : DataType::kFloat32)
        : wide_unsigned ? DataType::kUInt64
                        : DataType::kInt64;
    const std::string a = cast(expr(n.a), n.a->dtype, operand), b = cast(expr(n.b), n.b->dtype, operand);
    std::string r;
    if (wide_unsigned && !fp && (n.op == Op::kDiv || n.op == Op::kMod))  // floor and truncation agree
      return cast("(" + a + (n.op == Op::kDiv ? " / " : " % ") + b + ")", operand, n.dtype);
    switch (n.op) {
      case Op::kAdd:
        r = "(" + a + " + " + b + ")";
        break;
      case Op::kSub:
        r = "(" + a + " - " + b + ")";
        break;
      case Op::kMul:
        r = "(" + a + " * " + b + ")";
        break;
      case Op::kDiv:
        r = fp ? "(" + a + " / " + b + ")" : "tessel_floordiv(" + a + ", " + b + ")";
        break;
      case Op::kMod:
        r = fp ? cast("tessel_fmod_floor((double)" + a + ", (double)" + b + ")", DataType::kFloat64, operand)
               : "tessel_floormod(" + a + ", " + b + ")";
        break;
      case Op::kMin:
        r = (fp ? "fmin(" : "min(") + a + ", " + b + ")";
        break;
      case Op::kMax:
        r = (fp ? "fmax(" : "max(") + a + ", " + b + ")";
        break;
      case Op::kEQ:
        return "(" + a + " == " + b + ")";
      case Op::kNE:
        return "(" + a + " != " + b + ")";
      case Op::kLT:
        return "(" + a + " < " + b + ")";
      case Op::kLE:
        return "(" + a + " <= " + b + ")";
      case Op::kGT:
        return "(" + a + " > " + b + ")";
      case Op::kGE:
        return "(" + a + " >= " + b + ")";
      case Op::kAnd:
        return "(" + a + " && " + b + ")";
      case Op::kOr:
        return "(" + a + " || " + b + ")";
    }
    return cast(r, operand, n.dtype);
  }

  std::string call(const ir::Call& n) {
    if (n.builtin == ir::Builtin::kTensorIntrinsic)
      fail("tensor intrinsic '" + n.name + "' has no " + dialect_.language + " implementation");
    // Dependence tokens between an accelerator's queues: satisfied by running in program order.
    if (n.is_dependence_token()) return "0";
    // A CPU cache hint (inject_prefetch): GPU kernels stage data through shared memory instead.
    if (n.builtin == ir::Builtin::kPrefetch) return "0";
    // f16 and bf16 are computed in float, f64 in double.
    const DataType compute = n.dtype == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32;
    if (!dtype_is_float(n.dtype) && n.name != "abs")
      fail("intrinsic '" + n.name + "' on " + std::string(dtype_name(n.dtype)));
    if (!dtype_is_float(n.dtype)) {  // integer abs
      if (n.args.size() != 1) fail("intrinsic 'abs' takes 1 argument");
      return cast("abs(" + cast(expr(n.args[0]), n.args[0]->dtype, DataType::kInt64) + ")", DataType::kInt64, n.dtype);
    }
    std::vector<std::string> a;
    for (const auto& x : n.args) a.push_back(cast(expr(x), x->dtype, compute));
    auto need = [&](size_t k) {
      if (a.size() != k) fail("intrinsic '" + n.name + "' takes " + std::to_string(k) + " arguments");
    };
    const std::string one = compute == DataType::kFloat64 ? "1.0" : "1.0f";
    std::string r;
    // The built-in math functions of OpenCL C and CUDA C take the loop IR's names as they are.
    static const std::set<std::string> builtin_unary = {"exp",  "log",   "sqrt",  "tanh", "erf",  "sin",
                                                        "cos",  "tan",   "asin",  "acos", "atan", "sinh",
                                                        "cosh", "asinh", "acosh", "atanh"};
    if (builtin_unary.count(n.name)) {
      need(1);
      r = n.name + "(" + a[0] + ")";
    } else if (n.name == "fmod") {
      need(2);
      r = "fmod(" + a[0] + ", " + a[1] + ")";
    } else if (n.name == "rsqrt") {
      need(1);
      r = "(" + one + " / sqrt(" + a[0] + "))";
    } else if (n.name == "sigmoid") {
      need(1);
      r = "(" + one + " / (" + one + " + exp(-(" + a[0] + "))))";
    } else if (n.name == "abs") {
      need(1);
      r = "fabs(" + a[0] + ")";
    } else if (n.name == "pow") {
      need(2);
      r = "pow(" + a[0] + ", " + a[1] + ")";
    } else if (n.name == "fma") {
      need(3);
      r = "fma(" + a[0] + ", " + a[1] + ", " + a[2] + ")";
    } else {
      fail("unknown intrinsic '" + n.name + "'");
    }
    return cast(r, compute, n.dtype);
  }

  // ── Vector types ──────────────────────────────────────────────────────────────────────────
  // A vectorized loop of f32 stores as floatN statements (see the header); false, having emitted
  // nothing, when the loop has anything else. Every statement is computed for all lanes before the
  // next, as the llvm backend's vector code does; a buffer both stored and loaded in the loop at
  // different addresses is left to the loop.
  bool vector_loop(const ir::For& n, int indent) {
    int64_t lanes = 0, lo = -1;
    if (!dialect_.vector_types || !ir::is_const_int(n.extent, &lanes) || !ir::is_const_int(n.min, &lo) || lo != 0 ||
        lanes > limits_.vector_width || (lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16))
      return false;
    std::vector<const ir::Store*> stores;
    if (auto* one = ir::as<ir::Store>(n.body)) {
      stores.push_back(one);
    } else if (auto* seq = ir::as<ir::Seq>(n.body)) {
      for (const auto& x : seq->stmts) {
        auto* st = ir::as<ir::Store>(x);
        if (!st) return false;
        stores.push_back(st);
      }
    } else {
      return false;
    }
    const ir::VarRef& lane = n.var;
    const std::string type = "float" + std::to_string(lanes), width = std::to_string(lanes);
    std::vector<std::string> lines;
    for (const ir::Store* st : stores) {
      if (st->buffer->dtype != DataType::kFloat32) return false;
      bool aliased = false;
      ir::for_each_access(n.body, [&](const ir::Buffer& b, const std::vector<ir::Expr>& idx, bool) {
        if (b->name != st->buffer->name || idx.size() != st->indices.size()) return;
        for (size_t d = 0; d < idx.size(); ++d) aliased = aliased || !ir::same_value(idx[d], st->indices[d]);
      });
      std::optional<std::string> base = unit_stride_base(st->buffer, st->indices, lane);
      std::optional<std::string> value = aliased || !base ? std::nullopt : vector_value(st->value, lane, type, width);
      if (!value) return false;
      lines.push_back("vstore" + width + "(" + *value + ", 0, " + buffer_name(st->buffer) + " + " + *base + ");");
    }
    line(indent, "/* " + n.var->name + ": " + width + " lanes */");
    for (const std::string& l : lines) line(indent, l);
    return true;
  }

  // The flat index at lane 0 when consecutive lanes address consecutive elements.
  std::optional<std::string> unit_stride_base(const ir::Buffer& b, const std::vector<ir::Expr>& idx,
                                              const ir::VarRef& lane) {
    std::vector<int64_t> strides = b->strides.empty() ? contiguous_strides(b->shape) : b->strides;
    if (idx.size() == 1 && b->shape.size() != 1) strides = {1};
    if (idx.size() != strides.size()) return std::nullopt;
    ir::VarMap next{{lane.get(), ir::Expr(lane) + 1}};
    ir::VarMap first{{lane.get(), ir::make_int(0, lane->dtype)}};
    int64_t step = 0;
    std::vector<ir::Expr> at_zero;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t delta = 0;
      if (!ir::is_const_int(arith::simplify(ir::substitute(idx[d], next) - idx[d]), &delta)) return std::nullopt;
      step += delta * strides[d];
      at_zero.push_back(arith::simplify(ir::substitute(idx[d], first)));
    }
    if (step != 1) return std::nullopt;
    return flat_index(b, at_zero);
  }

  // `e` for all lanes as a `type` (floatN) expression, or nothing when it has a part that is not
  // an f32 vector operation. Loop-invariant parts are computed once and broadcast.
  std::optional<std::string> vector_value(const ir::Expr& e, const ir::VarRef& lane, const std::string& type,
                                          const std::string& width) {
    if (!ir::uses_var(e, [&](const ir::Var* v) { return v == lane.get(); }))
      return "((" + type + ")(" + cast(expr(e), e->dtype, DataType::kFloat32) + "))";
    if (e->dtype != DataType::kFloat32) return std::nullopt;
    auto sub = [&](const ir::Expr& x) { return vector_value(x, lane, type, width); };
    if (auto* n = ir::as<ir::Load>(e)) {
      if (n->buffer->dtype != DataType::kFloat32) return std::nullopt;
      std::optional<std::string> base = unit_stride_base(n->buffer, n->indices, lane);
      if (!base) return std::nullopt;
      return "vload" + width + "(0, " + buffer_name(n->buffer) + " + " + *base + ")";
    }
    if (auto* n = ir::as<ir::Cast>(e)) return n->value->dtype == DataType::kFloat32 ? sub(n->value) : std::nullopt;
    if (auto* n = ir::as<ir::Binary>(e)) {
      std::optional<std::string> a = sub(n->a), b = sub(n->b);
      if (!a || !b) return std::nullopt;
      switch (n->op) {
        case ir::BinaryOp::kAdd:
          return "(" + *a + " + " + *b + ")";
        case ir::BinaryOp::kSub:
          return "(" + *a + " - " + *b + ")";
        case ir::BinaryOp::kMul:
          return "(" + *a + " * " + *b + ")";
        case ir::BinaryOp::kDiv:
          return "(" + *a + " / " + *b + ")";
        case ir::BinaryOp::kMin:
          return "fmin(" + *a + ", " + *b + ")";
        case ir::BinaryOp::kMax:
          return "fmax(" + *a + ", " + *b + ")";
        default:
          return std::nullopt;
      }
    }
    if (auto* n = ir::as<ir::Call>(e)) {
      std::vector<std::string> a;
      for (const auto& x : n->args) {
        std::optional<std::string> v = sub(x);
        if (!v) return std::nullopt;
        a.push_back(*v);
      }
      static const std::set<std::string> unary = {"exp",  "log",   "sqrt",  "tanh",  "erf",  "sin",
                                                  "cos",  "tan",   "asin",  "acos",  "atan", "sinh",
                                                  "cosh", "asinh", "acosh", "atanh", "rsqrt"};
      if (unary.count(n->name) && a.size() == 1) return n->name + "(" + a[0] + ")";
      if (n->name == "abs" && a.size() == 1) return "fabs(" + a[0] + ")";
      if (n->name == "sigmoid" && a.size() == 1) return "(1.0f / (1.0f + exp(-(" + a[0] + "))))";
      if ((n->name == "pow" || n->name == "fmod") && a.size() == 2) return n->name + "(" + a[0] + ", " + a[1] + ")";
      if (n->name == "fma" && a.size() == 3) return "fma(" + a[0] + ", " + a[1] + ", " + a[2] + ")";
      return std::nullopt;
    }
    return std::nullopt;
  }

  std::string flat_index(const ir::Buffer& b, const std::vector<ir::Expr>& idx) {
    std::vector<int64_t> strides = b->strides.empty() ? contiguous_strides(b->shape) : b->strides;
    if (idx.size() == 1 && b->shape.size() != 1) strides = {1};
    if (idx.size() != strides.size()) fail("access to '" + b->name + "' has the wrong number of indices");
    std::string s;
    for (size_t k = 0; k < idx.size(); ++k) {
      std::string term = cast(expr(idx[k]), idx[k]->dtype, DataType::kInt64);
      if (strides[k] != 1) term = "(" + term + " * " + std::to_string(strides[k]) + "L)";
      s += (s.empty() ? "" : " + ") + term;
    }
    return s.empty() ? "0" : s;
  }

  void line(int indent, const std::string& text) {
    body_ << std::string(static_cast<size_t>(indent) * 2, ' ') << text << "\n";
  }

  // Where an allocation lives: a private array, a shared array (declared at the top of the
  // kernel, as OpenCL C requires), or a workspace buffer passed in by the module.
  std::string allocate(const ir::Buffer& b, int indent) {
    const int64_t count = std::max<int64_t>(ir::buffer_span(*b), 1);
    const int64_t bytes = count * static_cast<int64_t>(dtype_size(b->dtype));
    const std::string& scope = b->scope;
    if (scope != "global" && scope != "shared" && scope != "local")
      fail("buffer '" + b->name + "' is in scope '" + scope + "', which " + dialect_.language +
           " does not have (global, shared, local)");
    const std::string name = fresh("b_" + b->name);
    const bool f16 = b->dtype == DataType::kFloat16;
    // Raw 16-bit storage for f16 arrays (declaring `half` variables needs cl_khr_fp16).
    const std::string element = f16 ? "ushort" : storage_type(b->dtype);
    if (scope == "local" && bytes <= kMaxPrivateBytes) {
      line(indent, element + " " + name + (f16 ? "_bits" : "") + "[" + std::to_string(count) + "];");
      if (f16) line(indent, "half* " + name + " = (half*)" + name + "_bits;");
      return name;
    }
    if (scope == "shared" && plan_.grid) {
      local_decls_.push_back(dialect_.shared_array + element + " " + name + (f16 ? "_bits" : "") + "[" +
                             std::to_string(count) + "];");
      if (f16)
        local_decls_.push_back(dialect_.shared_pointer + "half* " + name + " = (" + dialect_.shared_pointer + "half*)" +
                               name + "_bits;");
      return name;
    }
    return workspace(b);
  }

  // A buffer passed in by the module, allocated once per module.
  std::string workspace(const ir::Buffer& b) {
    const int64_t bytes = std::max<int64_t>(ir::buffer_span(*b), 1) * static_cast<int64_t>(dtype_size(b->dtype));
    const std::string name = fresh("w_" + b->name);
    workspaces_.emplace_back(bytes, b->dtype);
    workspace_names_.push_back(name);
    return name;
  }

  void stmt(const ir::Stmt& s, int indent) {
    if (!s) return;
    if (auto* n = ir::as<ir::Seq>(s)) {
      for (const auto& x : n->stmts) stmt(x, indent);
    } else if (auto* n = ir::as<ir::For>(s); n && n->for_kind == ir::ForKind::kVectorized && vector_loop(*n, indent)) {
      return;
    } else if (auto* n = ir::as<ir::For>(s)) {
      const std::string lo = cast(expr(n->min), n->min->dtype, DataType::kInt64);
      const std::string v = bind(n->var.get());
      const int k = n->for_kind == ir::ForKind::kThreadBound ? tag_index(n->thread_tag) : -1;
      if (plan_.grid && k >= 0) {
        const std::string& id = k < 3 ? dialect_.block_index[k] : dialect_.thread_index[k - 3];
        line(indent, "{  /* " + n->thread_tag + " */");
        line(indent + 1, "long " + v + " = " + lo + " + (long)" + id + ";");
        stmt(n->body, indent + 1);
        line(indent, "}");
      } else {
        const std::string ext = cast(expr(n->extent), n->extent->dtype, DataType::kInt64);
        int64_t e = 0;
        if (n->for_kind == ir::ForKind::kUnrolled && ir::is_const_int(n->extent, &e) && e <= 64)
          line(indent, "#pragma unroll");
        if (!n->thread_tag.empty())
          line(indent, "/* " + n->thread_tag + ", run in order by one " + dialect_.thread + " */");
        const std::string end = fresh(v + "_end");
        line(indent, "for (long " + v + " = " + lo + ", " + end + " = " + v + " + " + ext + "; " + v + " < " + end +
                         "; ++" + v + ") {");
        stmt(n->body, indent + 1);
        line(indent, "}");
      }
      names_.erase(n->var.get());
    } else if (auto* n = ir::as<ir::Store>(s)) {
      const std::string index = flat_index(n->buffer, n->indices);
      if (n->buffer->dtype == DataType::kFloat16)
        line(indent, "vstore_half_rte(" + cast(expr(n->value), n->value->dtype, DataType::kFloat32) + ", " + index +
                         ", " + buffer_name(n->buffer) + ");");
      else
        line(indent, buffer_name(n->buffer) + "[" + index +
                         "] = " + cast(expr(n->value), n->value->dtype, n->buffer->dtype) + ";");
    } else if (auto* n = ir::as<ir::Allocate>(s)) {
      auto saved = buffer_names_.find(n->buffer->name);
      const std::string outer = saved == buffer_names_.end() ? "" : saved->second;
      line(indent, "{");
      buffer_names_[n->buffer->name] = allocate(n->buffer, indent + 1);
      stmt(n->body, indent + 1);
      line(indent, "}");
      if (outer.empty())
        buffer_names_.erase(n->buffer->name);
      else
        buffer_names_[n->buffer->name] = outer;
    } else if (auto* n = ir::as<ir::LetStmt>(s)) {
      const std::string value = cast(expr(n->value), n->value->dtype, n->var->dtype);
      line(indent, "{");
      line(indent + 1, std::string(value_type(n->var->dtype)) + " " + bind(n->var.get()) + " = " + value + ";");
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
      if (plan_.grid)
        line(indent, dialect_.barrier + "  /* " + n->scope + " */");
      else
        line(indent, "/* barrier(" + n->scope + "): one " + dialect_.thread + " */");
    } else {
      fail("unexpected statement node " + std::string(ir::node_kind_name(s->kind)));
    }
  }

  const ir::Func& f_;
  const GpuDialect& dialect_;
  const GpuLimits& limits_;
  LaunchPlan plan_;
  std::ostringstream body_;
  std::unordered_map<const ir::Var*, std::string> names_;
  std::unordered_map<std::string, std::string> buffer_names_;
  std::unordered_set<std::string> used_;
  std::vector<std::string> local_decls_;
  std::vector<std::pair<int64_t, DataType>> workspaces_;  // bytes, element type
  std::vector<std::string> workspace_names_;
  std::string check_record_;
  std::unordered_map<std::string, int64_t> check_ids_;  // check message → its number (1-based)
};

}  // namespace

std::string GpuFunction::note() const {
  std::string text;
  for (const GpuLaunch& l : launches) text += (text.empty() ? "" : "; ") + l.note;
  return text;
}

GpuProgram emit_gpu_kernels(const std::vector<loopir::Func>& kernels, const GpuDialect& dialect,
                            const GpuLimits& limits) {
  GpuProgram program;
  program.source = dialect.prelude;
  std::unordered_set<std::string> symbols;
  for (const auto& f : kernels) {
    GpuFunction function;
    program.source += Emitter(f, dialect, limits).kernels(function);
    for (const GpuLaunch& l : function.launches)
      if (!symbols.insert(l.symbol).second)
        throw Error("kernel '" + f.name + "': " + dialect.codegen + " codegen: two kernels are both named " + l.symbol +
                    " in " + dialect.language + " C");
    program.functions.push_back(std::move(function));
  }
  return program;
}

}  // namespace tessel::codegen
