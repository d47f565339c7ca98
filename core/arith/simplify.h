#pragma once
// Arithmetic simplification of index expressions and statements: the small algebra every
// lowering pass leans on.
//
//   constant folding        3 + 4 -> 7,  2 < 5 -> true
//   identities              x*1 -> x,  x + 0 -> x,  x*0 -> 0 (integers),  select(true, a, b) -> a
//   linear canonical form   (x + 3) + 4 -> x + 7,  (i*8 + j) - i*8 -> j,  x*2*4 -> x*8
//   split/fuse algebra      (o*8 + i) / 8 -> o  and  (o*8 + i) % 8 -> i   when i is in [0, 8)
//   range facts             min(i, 64) -> i  when i is in [0, 63];  i < 64 -> true
//
// Integer division/modulo are floor division/modulo (see loopir/ir.h). The result is returned as
// the same node when nothing simplifies.
#include "core/arith/bounds.h"
#include "core/loopir/ir.h"

namespace tessel::arith {

loopir::Expr simplify(const loopir::Expr& e, const RangeMap& ranges = {});
// Simplifies every expression; knows loop variables' ranges inside their loops; removes branches
// decided by range facts, loops of extent 0 and loops of extent 1 (their variable becomes `min`).
loopir::Stmt simplify(const loopir::Stmt& s, const RangeMap& ranges = {});

// True when `cond` is provably true (false) for every value of the ranged variables.
bool can_prove(const loopir::Expr& cond, const RangeMap& ranges = {});

}  // namespace tessel::arith
