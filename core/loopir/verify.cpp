#include "core/loopir/verify.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/loopir/functor.h"
#include "core/loopir/printer.h"
#include "core/support/error.h"

namespace tessel::loopir {

namespace {

std::string type_name(DataType t) { return std::string(dtype_name(t)); }

// An expression as a message quotes it: long ones are cut (an unrolled index can print for pages).
std::string quoted(const Expr& e) {
  constexpr size_t kMax = 60;
  std::string text = to_string(e);
  if (text.size() > kMax) text = text.substr(0, kMax - 3) + "...";
  return text;
}

// Every variable some For or LetStmt binds, so that a use outside that scope reads as "outside
// its loop" rather than "bound nowhere": the first is a pass that moved code, the second one that
// invented a variable.
class Binders : public IRVisitor {
 public:
  std::unordered_set<const Var*> vars;

 protected:
  bool enter(const For& n) override {
    vars.insert(n.var.get());
    return true;
  }
  bool enter(const LetStmt& n) override {
    vars.insert(n.var.get());
    return true;
  }
};

// The checks of verify.h, in one walk. Scoped statements (For, LetStmt, Allocate, IfThenElse)
// visit their own children so they can enter and leave their scope around the body; every other
// node's children are visited by IRVisitor.
class ProgramChecker : public IRVisitor {
 public:
  explicit ProgramChecker(const Func& f) {
    Binders binders;
    binders.visit(f.body);
    binders_ = std::move(binders.vars);
    for (const Buffer& p : f.params) {
      if (!p) {
        problem("a parameter of the function is null");
        continue;
      }
      std::vector<const BufferNode*>& declared = buffers_[p->name];
      if (!declared.empty()) problem("buffer '" + p->name + "' is a parameter twice");
      declared.push_back(p.get());
      params_.insert(p->name);
    }
    statement_ = {"the body", nullptr, ""};
  }

  std::vector<std::string> problems;

 protected:
  // ---------------------------------------------------------------- scoped statements

  bool enter(const For& n) override {
    if (!n.var || !n.min || !n.extent) return missing("a loop without a variable, start or extent");
    const std::string& name = n.var->name;
    statement_ = {"the bounds of loop ", &name, ""};
    if (!dtype_is_integer(n.var->dtype))
      problem("loop variable '" + name + "' is " + type_name(n.var->dtype) + ", not an integer");
    const bool shadows = bound_.count(n.var.get()) > 0;
    if (shadows) problem("loop " + name + " binds '" + name + "' again inside the scope that already binds it");
    expect_integer(n.min, [&] { return "the start of loop " + name; });
    expect_integer(n.extent, [&] { return "the extent of loop " + name; });
    if (n.for_kind == ForKind::kThreadBound && n.thread_tag.empty())
      problem("loop " + name + " is bound to a thread but names no thread tag");
    visit_defining(n.var.get(), shadows, {n.min, n.extent});

    // Bounds that differ between the threads of a block make every barrier inside divergent.
    const bool varying = depends_on_thread(n.min) || depends_on_thread(n.extent);
    const bool thread_index = n.for_kind == ForKind::kThreadBound && n.thread_tag.rfind("threadIdx", 0) == 0;
    frames_.push_back({"for ", &name});
    bind(n.var.get(), shadows, thread_index);
    divergent_ += varying;
    visit(n.body);
    divergent_ -= varying;
    unbind(n.var.get(), shadows);
    frames_.pop_back();
    return false;
  }

  bool enter(const LetStmt& n) override {
    if (!n.var || !n.value) return missing("a let without a variable or value");
    const std::string& name = n.var->name;
    statement_ = {"the value of let ", &name, ""};
    const bool shadows = bound_.count(n.var.get()) > 0;
    if (shadows) problem("let " + name + " binds '" + name + "' again inside the scope that already binds it");
    if (n.var->dtype != n.value->dtype)
      problem("let " + name + " is " + type_name(n.var->dtype) + " but its value is " + type_name(n.value->dtype));
    visit_defining(n.var.get(), shadows, {n.value});
    frames_.push_back({"let ", &name});
    bind(n.var.get(), shadows, depends_on_thread(n.value));
    visit(n.body);
    unbind(n.var.get(), shadows);
    frames_.pop_back();
    return false;
  }

  bool enter(const Allocate& n) override {
    if (!n.buffer) return missing("an allocation without a buffer");
    const std::string& name = n.buffer->name;
    statement_ = {"the allocation of ", &name, ""};
    std::vector<const BufferNode*>& declared = buffers_[name];  // stays valid: map nodes do not move
    if (!declared.empty())
      problem(declared.size() == 1 && params_.count(name)
                  ? "buffer '" + name + "' is allocated, but a parameter has that name"
                  : "buffer '" + name + "' is allocated again inside its own allocation");
    declared.push_back(n.buffer.get());
    ++allocated_scopes_[n.buffer->scope];
    visit(n.body);
    --allocated_scopes_[n.buffer->scope];
    declared.pop_back();
    return false;
  }

  bool enter(const IfThenElse& n) override {
    if (!n.cond) return missing("an if without a condition");
    statement_ = {"the condition of an if", nullptr, ""};
    expect_bool(n.cond, [] { return std::string("an if's condition"); });
    visit(n.cond);
    const bool varying = depends_on_thread(n.cond);
    divergent_ += varying;
    visit(n.then_case);
    visit(n.else_case);
    divergent_ -= varying;
    return false;
  }

  // ---------------------------------------------------------------- other statements

  bool enter(const Store& n) override {
    if (!n.buffer || !n.value) return missing("a store without a buffer or value");
    statement_ = {"the store to ", &n.buffer->name, ""};
    check_access(*n.buffer, n.indices, "store");
    if (n.value->dtype != n.buffer->dtype)
      problem("the value stored into " + n.buffer->name + " is " + type_name(n.value->dtype) + ", but " +
              n.buffer->name + " holds " + type_name(n.buffer->dtype));
    return true;
  }

  bool enter(const Evaluate& n) override {
    if (!n.value) return missing("an evaluate without a value");
    auto* call = as<Call>(n.value);
    statement_ = call ? Statement{"the call ", &call->name, ""} : Statement{"an evaluate", nullptr, ""};
    return true;
  }

  // The rule the passes that make barriers follow (insert_barriers, inject_double_buffer,
  // lower_thread_allreduce): a barrier orders the accesses to buffers of its scope, so it stands
  // where one is allocated. Deliberately not required, though it looks natural:
  //   - a threadIdx loop around it: lower_thread_allreduce puts its barriers between the thread
  //     loops, outside them, where every thread of the block runs the code (gpu_kernel_c.h);
  //   - a thread-bound loop anywhere in the function: a CPU schedule may cache a tile in `shared`
  //     memory (test_lower's double-buffer and shared-transpose cases) and keeps its barriers,
  //     which every CPU backend and the interpreter run as no-ops (a group of one thread).
  bool enter(const Barrier& n) override {
    statement_ = {"barrier(", &n.scope, ")"};
    auto allocated = allocated_scopes_.find(n.scope);
    if (allocated == allocated_scopes_.end() || allocated->second == 0)
      problem("barrier(" + n.scope + ") stands outside every allocation of a " + n.scope +
              " buffer: there is nothing for it to order");
    if (divergent_ > 0)
      problem("barrier(" + n.scope +
              ") is under a condition or loop bounds that depend on a threadIdx: some threads of the block would "
              "never reach it");
    return true;
  }

  // ---------------------------------------------------------------- expressions

  bool enter(const Var& v) override {
    if (&v == defining_)
      problem("'" + v.name + "' is used in its own definition");
    else if (!bound_.count(&v))
      problem("variable '" + v.name + "' is " +
              (binders_.count(&v) ? "used outside its loop or let" : "bound by no loop or let"));
    return true;
  }

  bool enter(const Load& n) override {
    if (!n.buffer) return missing("a load without a buffer");
    check_access(*n.buffer, n.indices, "load");
    return true;
  }

  bool enter(const Binary& n) override {
    if (!n.a || !n.b) return missing("a binary operator with a missing operand");
    auto op = [&] { return "'" + std::string(binary_op_symbol(n.op)) + "'"; };
    if (is_logical(n.op)) {
      expect_bool(n.a, [&] { return "the left operand of " + op(); });
      expect_bool(n.b, [&] { return "the right operand of " + op(); });
    } else if (n.a->dtype != n.b->dtype) {
      problem(op() + " has operands of two types, " + type_name(n.a->dtype) + " and " + type_name(n.b->dtype) + ": " +
              quoted(n.a) + " and " + quoted(n.b));
    }
    const bool boolean = is_comparison(n.op) || is_logical(n.op);
    if (boolean && n.dtype != DataType::kBool)
      problem(op() + " gives " + type_name(n.dtype) + ", not bool");
    else if (!boolean && n.a->dtype == n.b->dtype && n.dtype != n.a->dtype)
      problem(op() + " on " + type_name(n.a->dtype) + " operands gives " + type_name(n.dtype));
    return true;
  }

  bool enter(const Not& n) override {
    if (!n.a) return missing("a '!' without an operand");
    expect_bool(n.a, [] { return std::string("the operand of '!'"); });
    return true;
  }

  bool enter(const Select& n) override {
    if (!n.cond || !n.true_value || !n.false_value) return missing("a select with a missing operand");
    expect_bool(n.cond, [] { return std::string("a select's condition"); });
    if (n.true_value->dtype != n.false_value->dtype)
      problem("a select chooses between a " + type_name(n.true_value->dtype) + " and a " +
              type_name(n.false_value->dtype) + " value: " + quoted(n.true_value) + " and " + quoted(n.false_value));
    return true;
  }

  bool enter(const Check& n) override {
    if (!n.condition || !n.value || !n.reported) return missing("a check with a missing operand");
    expect_bool(n.condition, [] { return std::string("a check's condition"); });
    expect_integer(n.reported, [] { return std::string("the value a check reports"); });
    return true;
  }

  bool enter(const Cast& n) override {
    if (!n.value) return missing("a cast without an operand");
    return true;
  }

  bool enter(const Call& n) override {
    for (const Expr& a : n.args)
      if (!a) return missing("the call " + n.name + " has a missing argument");
    return true;
  }

  bool enter(const Reduce&) override {
    problem("a reduction is left in the loop program (build_loop_nests turns reductions into loops)");
    return false;  // its axes and combiner variables are bound by the reduction itself
  }

 private:
  // A node without a field it must have: nothing below it can be checked.
  bool missing(const std::string& what) {
    problem(what);
    return false;
  }

  void problem(const std::string& what) {
    std::string line = what + " (in " + statement_.text();
    for (size_t k = 0; k < frames_.size(); ++k)
      line += (k == 0 ? ", inside " : " > ") + std::string(frames_[k].first) + *frames_[k].second;
    line += ")";
    if (seen_.insert(line).second) problems.push_back(std::move(line));
  }

  // `what()` names the expression in the message; it is called only for a problem (the walk
  // meets millions of expressions in an unrolled kernel, and building their names would show).
  template <class What>
  void expect_bool(const Expr& e, const What& what) {
    if (e && e->dtype != DataType::kBool) problem(what() + " is " + type_name(e->dtype) + ", not bool: " + quoted(e));
  }
  template <class What>
  void expect_integer(const Expr& e, const What& what) {
    if (e && !dtype_is_integer(e->dtype))
      problem(what() + " is " + type_name(e->dtype) + ", not an integer: " + quoted(e));
  }

  void check_access(const BufferNode& b, const std::vector<Expr>& indices, const char* access) {
    auto declared = buffers_.find(b.name);
    if (declared == buffers_.end() || declared->second.empty())
      problem("buffer '" + b.name + "' is neither a parameter nor allocated around its " + access);
    else if (declared->second.back()->dtype != b.dtype)
      problem("buffer '" + b.name + "' is declared " + type_name(declared->second.back()->dtype) + " but its " +
              access + " uses it as " + type_name(b.dtype));
    // One flat index (after storage_flatten, or a cross-thread reduction's lanes) or one per
    // dimension: what the interpreter and every backend accept.
    if (indices.size() != 1 && indices.size() != b.shape.size())
      problem("the " + std::string(access) + " of " + b.name + " has " + std::to_string(indices.size()) +
              " indices for " + std::to_string(b.shape.size()) + " dimensions");
    for (size_t d = 0; d < indices.size(); ++d) {
      if (!indices[d]) {
        problem("the " + std::string(access) + " of " + b.name + " has a missing index");
        continue;
      }
      expect_integer(indices[d], [&] { return "index " + std::to_string(d) + " of the " + access + " of " + b.name; });
    }
  }

  // Visits a binder's own expressions (loop bounds, let value): a use of the variable being
  // defined there is reported as such, unless an outer binding of it (reported already) is meant.
  void visit_defining(const Var* v, bool shadows, std::initializer_list<Expr> exprs) {
    defining_ = shadows ? nullptr : v;
    for (const Expr& e : exprs) visit(e);
    defining_ = nullptr;
  }

  void bind(const Var* v, bool shadows, bool varies_by_thread) {
    if (shadows) return;  // already bound: leave the outer binding to remove it
    bound_.insert(v);
    if (varies_by_thread) thread_vars_.insert(v);
  }
  void unbind(const Var* v, bool shadows) {
    if (shadows) return;
    bound_.erase(v);
    thread_vars_.erase(v);
  }

  bool depends_on_thread(const Expr& e) const {
    return !thread_vars_.empty() && uses_var(e, [&](const Var* v) { return thread_vars_.count(v) > 0; });
  }

  std::unordered_set<const Var*> binders_;                                   // bound somewhere
  std::unordered_set<const Var*> bound_;                                     // bound around here
  std::unordered_set<const Var*> thread_vars_;                               // of those, per thread
  std::unordered_map<std::string, std::vector<const BufferNode*>> buffers_;  // by name, innermost last
  std::unordered_set<std::string> params_;
  std::map<std::string, int> allocated_scopes_;  // memory scope -> allocations around here
  const Var* defining_ = nullptr;                // the variable whose bounds or value are visited
  int divergent_ = 0;                            // conditions / loop bounds around here that vary by thread
  // What is being checked and the scopes around it ("for i", "let x"), for messages. Kept as
  // pieces of the program's own strings: the text is made only for a problem.
  struct Statement {
    const char* before;
    const std::string* name;  // may be null
    const char* after;
    std::string text() const { return before + (name ? *name : std::string()) + after; }
  };
  Statement statement_;
  std::vector<std::pair<const char*, const std::string*>> frames_;
  std::unordered_set<std::string> seen_;
};

}  // namespace

std::vector<std::string> verify(const Func& f) {
  ProgramChecker checker(f);
  checker.visit(f.body);
  return std::move(checker.problems);
}

void verify_or_throw(const Func& f, std::string_view after_what) {
  const std::vector<std::string> problems = verify(f);
  if (problems.empty()) return;
  std::string text = "loop program '" + f.name + "'";
  if (!after_what.empty()) text += " after " + std::string(after_what);
  text += ": " + problems.front();
  if (const size_t more = problems.size() - 1; more > 0)
    text += " (and " + std::to_string(more) + " more problem" + (more == 1 ? ")" : "s)");
  throw Error(text);
}

}  // namespace tessel::loopir
