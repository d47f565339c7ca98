#pragma once
// Integer ranges of index expressions.
//
// `constant_bounds` gives [lo, hi] as numbers when every variable involved has a known range.
// `symbolic_bounds` relaxes only the variables in `ranges` and keeps the others as symbols: for
//
//     e = i.outer*8 + i.inner       with i.inner in [0, 7]
//
// it returns [i.outer*8, i.outer*8 + 7], whose extent (hi - lo + 1 = 8) is a constant. Bound
// inference uses it to find the region of a producer that one iteration of a consumer loop reads.
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "core/loopir/ir.h"

namespace tessel::arith {

struct Interval {
  int64_t lo = 0, hi = 0;  // inclusive
};
using RangeMap = std::unordered_map<const loopir::Var*, Interval>;

std::optional<Interval> constant_bounds(const loopir::Expr& e, const RangeMap& ranges);

struct SymbolicInterval {
  loopir::Expr lo, hi;  // inclusive, simplified
};
std::optional<SymbolicInterval> symbolic_bounds(const loopir::Expr& e, const RangeMap& ranges);
// True when `e` mentions a variable that has a range in `ranges`.
bool uses_var_in(const loopir::Expr& e, const RangeMap& ranges);

}  // namespace tessel::arith
