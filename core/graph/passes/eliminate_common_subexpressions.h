#pragma once
// Common subexpression elimination: two nodes with the same op, equal attributes and the same
// inputs compute the same thing; the later one's uses are redirected to the earlier one. Equal
// small constants (up to 64 elements) are merged first so shape computations written twice meet.
//
//   %a = Relu(%x)                      %a = Relu(%x)
//   %b = Relu(%x)             →        %c = Add(%a, %a)
//   %c = Add(%a, %b)
#include "core/graph/passes/pass_context.h"

namespace tessel {

bool eliminate_common_subexpressions(Graph& g, PassContext& ctx);

}  // namespace tessel
