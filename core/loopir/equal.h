#pragma once
// Structural equality of loop programs: same shape of tree, same operators, same constants,
// variables and buffers matched by name (and dtype/shape/scope for buffers).
#include "core/loopir/ir.h"

namespace tessel::loopir {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Stmt& a, const Stmt& b);
// Like structural_equal, but variables must be the same node: two different loop variables that
// happen to share a name are different values (what the simplifier needs).
bool same_value(const Expr& a, const Expr& b);

}  // namespace tessel::loopir
