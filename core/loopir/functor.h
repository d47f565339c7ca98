#pragma once
// Walking and rewriting loop programs.
//
// IRVisitor visits every node (children after the node's own hook returns true).
// IRMutator rebuilds bottom-up; a node whose children all come back as the same handles is
// returned as itself, so `mutated == original` means "this pass changed nothing here".
#include <functional>
#include <unordered_map>

#include "core/loopir/ir.h"

namespace tessel::loopir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  void visit(const Expr& e);
  void visit(const Stmt& s);

 protected:
  // Return false to skip the node's children.
#define TESSEL_EXPR(Name) \
  virtual bool enter(const Name&) { return true; }
#define TESSEL_STMT(Name) \
  virtual bool enter(const Name&) { return true; }
#include "core/loopir/node_kinds.def"
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
  // Each hook receives the node and its handle; the default rebuilds from mutated children.
#define TESSEL_EXPR(Name) virtual Expr mutate_##Name(const Name& node, const Expr& self);
#define TESSEL_STMT(Name) virtual Stmt mutate_##Name(const Name& node, const Stmt& self);
#include "core/loopir/node_kinds.def"
  std::vector<Expr> mutate_all(const std::vector<Expr>& v, bool* changed);
};

// Replaces variables (by node identity) with expressions.
using VarMap = std::unordered_map<const Var*, Expr>;
Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);

// True when `e` mentions a variable for which `pred` holds.
bool uses_var(const Expr& e, const std::function<bool(const Var*)>& pred);
bool uses_var(const Stmt& s, const std::function<bool(const Var*)>& pred);
// Calls f on every Load / Store of the statement.
void for_each_access(const Stmt& s,
                     const std::function<void(const Buffer&, const std::vector<Expr>&, bool is_store)>& f);
void for_each_access(const Expr& e,
                     const std::function<void(const Buffer&, const std::vector<Expr>&, bool is_store)>& f);

}  // namespace tessel::loopir
