#pragma once
// Floor division and modulo on integers: the loop IR's `/` and `%` (core/loopir/ir.h), which
// round toward negative infinity where C++ truncates toward zero.
//
//   floor_div(-7, 2) = -4   (C++: -3)      floor_mod(-7, 2) = 1   (C++: -1)
#include <cstdint>

namespace tessel {

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

inline int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace tessel
