#include "core/loopir/printer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/loopir/equal.h"

namespace tessel::loopir {
namespace {

int precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
      return 1;
    case BinaryOp::kAnd:
      return 2;
    case BinaryOp::kEQ:
    case BinaryOp::kNE:
    case BinaryOp::kLT:
    case BinaryOp::kLE:
    case BinaryOp::kGT:
    case BinaryOp::kGE:
      return 3;
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
      return 4;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
      return 5;
    case BinaryOp::kMin:
    case BinaryOp::kMax:
      return 10;  // printed as calls
  }
  return 10;
}

std::string float_text(double v, DataType t) {
  std::string s;
  if (std::isinf(v))
    s = v > 0 ? "inf" : "-inf";
  else if (std::isnan(v))
    s = "nan";
  else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    s = buf;
  }
  if (t == DataType::kFloat32)
    s += "f";
  else if (t != DataType::kFloat64)
    s = std::string(dtype_name(t)) + "(" + s + ")";
  return s;
}

void print_expr(std::ostream& os, const Expr& e);

void print_operand(std::ostream& os, const Expr& child, BinaryOp parent, bool right) {
  auto* b = as<Binary>(child);
  bool parens = false;
  if (b && precedence(b->op) < 10) {
    int pc = precedence(b->op), pp = precedence(parent);
    if (pc < pp)
      parens = true;
    else if (pc == pp && right) {
      bool assoc = (parent == BinaryOp::kAdd && b->op == BinaryOp::kAdd) ||
                   (parent == BinaryOp::kMul && b->op == BinaryOp::kMul) ||
                   (parent == BinaryOp::kAnd && b->op == BinaryOp::kAnd) ||
                   (parent == BinaryOp::kOr && b->op == BinaryOp::kOr);
      parens = !assoc;
    } else if (pc == pp && pp == 3) {
      parens = true;  // a < b < c reads wrong; always bracket chained comparisons
    }
  }
  if (parens) os << '(';
  print_expr(os, child);
  if (parens) os << ')';
}

void print_list(std::ostream& os, const std::vector<Expr>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) os << ", ";
    print_expr(os, v[i]);
  }
}

// Whether the check's condition is `value >= lo && value < hi` (or `lo <= value && ...`).
bool range_of_check(const Check& c, int64_t* lo, int64_t* hi) {
  auto* both = as<Binary>(c.condition);
  if (!both || both->op != BinaryOp::kAnd) return false;
  auto *low = as<Binary>(both->a), *high = as<Binary>(both->b);
  if (!low || !high || high->op != BinaryOp::kLT || !structural_equal(high->a, c.value) || !is_const_int(high->b, hi))
    return false;
  if (low->op == BinaryOp::kGE) return structural_equal(low->a, c.value) && is_const_int(low->b, lo);
  if (low->op == BinaryOp::kLE) return structural_equal(low->b, c.value) && is_const_int(low->a, lo);
  return false;
}

void print_expr(std::ostream& os, const Expr& e) {
  if (!e) {
    os << "<null>";
    return;
  }
  switch (e->kind) {
    case NodeKind::kIntImm: {
      auto* n = as<IntImm>(e);
      if (n->dtype == DataType::kInt64 || n->dtype == DataType::kInt32)
        os << n->value;
      else if (n->dtype == DataType::kBool)
        os << (n->value ? "true" : "false");
      else
        os << dtype_name(n->dtype) << '(' << n->value << ')';
      return;
    }
    case NodeKind::kFloatImm: {
      auto* n = as<FloatImm>(e);
      os << float_text(n->value, n->dtype);
      return;
    }
    case NodeKind::kVar:
      os << as<Var>(e)->name;
      return;
    case NodeKind::kBinary: {
      auto* n = as<Binary>(e);
      if (n->op == BinaryOp::kMin || n->op == BinaryOp::kMax) {
        os << binary_op_symbol(n->op) << '(';
        print_expr(os, n->a);
        os << ", ";
        print_expr(os, n->b);
        os << ')';
        return;
      }
      print_operand(os, n->a, n->op, false);
      os << ' ' << binary_op_symbol(n->op) << ' ';
      print_operand(os, n->b, n->op, true);
      return;
    }
    case NodeKind::kNot: {
      auto* n = as<Not>(e);
      os << "!(";
      print_expr(os, n->a);
      os << ')';
      return;
    }
    case NodeKind::kSelect: {
      auto* n = as<Select>(e);
      os << "select(";
      print_list(os, {n->cond, n->true_value, n->false_value});
      os << ')';
      return;
    }
    case NodeKind::kCast: {
      auto* n = as<Cast>(e);
      os << dtype_name(n->dtype) << '(';
      print_expr(os, n->value);
      os << ')';
      return;
    }
    case NodeKind::kLoad: {
      auto* n = as<Load>(e);
      os << n->buffer->name << '[';
      print_list(os, n->indices);
      os << ']';
      return;
    }
    case NodeKind::kCall: {
      auto* n = as<Call>(e);
      os << n->name << '(';
      print_list(os, n->args);
      os << ')';
      return;
    }
    case NodeKind::kReduce: {
      auto* n = as<Reduce>(e);
      os << n->combiner->name << '(';
      print_expr(os, n->source);
      os << ", axis=[";
      for (size_t i = 0; i < n->axes.size(); ++i)
        os << (i ? ", " : "") << n->axes[i].var->name << " in 0.." << n->axes[i].extent;
      os << "])";
      return;
    }
    case NodeKind::kCheck: {
      // check(condition, value, "message"), the reported expression written where the message
      // names it; a range check of the value itself reads check(value in [lo, hi), "message"):
      //   check(select(q[i] < 0, q[i] + 5, q[i]) in [0, 5), "index {q[i]} out of range [-5, 5) on axis 0")
      auto* n = as<Check>(e);
      os << "check(";
      int64_t lo = 0, hi = 0;
      if (range_of_check(*n, &lo, &hi)) {
        print_expr(os, n->value);
        os << " in [" << lo << ", " << hi << ')';
      } else {
        print_list(os, {n->condition, n->value});
      }
      std::ostringstream reported;
      print_expr(reported, n->reported);
      std::string message = n->message;
      if (size_t at = message.find("{}"); at != std::string::npos) message.replace(at, 2, "{" + reported.str() + "}");
      os << ", \"" << message << "\")";
      return;
    }
    default:
      os << '?';
      return;
  }
}

void print_stmt(std::ostream& os, const Stmt& s, int indent) {
  if (!s) return;
  std::string pad(static_cast<size_t>(indent) * 2, ' ');
  switch (s->kind) {
    case NodeKind::kFor: {
      auto* n = as<For>(s);
      os << pad << "for " << n->var->name << " in ";
      print_expr(os, n->min);
      os << "..";
      int64_t mn = 0, ext = 0;
      if (is_const_int(n->min, &mn) && is_const_int(n->extent, &ext))
        os << mn + ext;
      else if (is_const_int_value(n->min, 0))
        print_expr(os, n->extent);
      else {
        os << '(';
        print_expr(os, n->min + n->extent);
        os << ')';
      }
      switch (n->for_kind) {
        case ForKind::kSerial:
          break;
        case ForKind::kThreadBound:
          os << " bind(" << n->thread_tag << ')';
          break;
        case ForKind::kVirtualThread:
          os << " vthread";
          break;
        default:
          os << ' ' << for_kind_name(n->for_kind);
      }
      for (auto& [k, v] : n->pragmas) os << " pragma(" << k << '=' << v << ')';
      os << " {\n";
      print_stmt(os, n->body, indent + 1);
      os << pad << "}\n";
      return;
    }
    case NodeKind::kStore: {
      auto* n = as<Store>(s);
      os << pad << n->buffer->name << '[';
      print_list(os, n->indices);
      os << "] = ";
      print_expr(os, n->value);
      os << '\n';
      return;
    }
    case NodeKind::kAllocate: {
      auto* n = as<Allocate>(s);
      os << pad << "allocate " << n->buffer->name << ": " << buffer_type_string(*n->buffer) << ' ' << n->buffer->scope
         << '\n';
      print_stmt(os, n->body, indent);
      os << pad << "free " << n->buffer->name << '\n';
      return;
    }
    case NodeKind::kLetStmt: {
      auto* n = as<LetStmt>(s);
      os << pad << "let " << n->var->name << " = ";
      print_expr(os, n->value);
      os << '\n';
      print_stmt(os, n->body, indent);
      return;
    }
    case NodeKind::kIfThenElse: {
      auto* n = as<IfThenElse>(s);
      os << pad << "if (";
      print_expr(os, n->cond);
      os << ") {\n";
      print_stmt(os, n->then_case, indent + 1);
      if (n->else_case) {
        os << pad << "} else {\n";
        print_stmt(os, n->else_case, indent + 1);
      }
      os << pad << "}\n";
      return;
    }
    case NodeKind::kSeq:
      for (auto& c : as<Seq>(s)->stmts) print_stmt(os, c, indent);
      return;
    case NodeKind::kEvaluate:
      os << pad;
      print_expr(os, as<Evaluate>(s)->value);
      os << '\n';
      return;
    case NodeKind::kBarrier:
      os << pad << "barrier(" << as<Barrier>(s)->scope << ")\n";
      return;
    default:
      os << pad << "?\n";
      return;
  }
}

}  // namespace

std::string buffer_type_string(const BufferNode& b) {
  std::ostringstream os;
  os << dtype_name(b.dtype) << '[';
  for (size_t i = 0; i < b.shape.size(); ++i) os << (i ? ", " : "") << b.shape[i];
  os << ']';
  if (!b.strides.empty()) {
    os << " strides [";
    for (size_t i = 0; i < b.strides.size(); ++i) os << (i ? ", " : "") << b.strides[i];
    os << ']';
  }
  return os.str();
}

std::string to_string(const Expr& e) {
  std::ostringstream os;
  print_expr(os, e);
  return os.str();
}

std::string to_string(const Stmt& s, int indent) {
  std::ostringstream os;
  print_stmt(os, s, indent);
  return os.str();
}

std::string to_string(const Func& f) {
  std::ostringstream os;
  os << "func " << f.name << '(';
  for (size_t i = 0; i < f.params.size(); ++i) {
    os << (i ? ", " : "") << f.params[i]->name << ": " << buffer_type_string(*f.params[i]);
  }
  os << ") {\n";
  print_stmt(os, f.body, 1);
  os << "}\n";
  return os.str();
}

}  // namespace tessel::loopir
