#pragma once
// Floor division and modulo on integers: the loop IR's `/` and `%` (core/loopir/ir.h), which
// round toward negative infinity where C++ truncates toward zero.
//
//   floor_div(-7, 2) = -4   (C++: -3)      floor_mod(-7, 2) = 1   (C++: -1)
#include <cstdint>

namespace tessel {

// b == -1 is answered without dividing: INT64_MIN / -1 traps (SIGFPE) on x86; its quotient wraps to
// INT64_MIN, as + - * wrap in the loop IR, and every remainder by -1 is 0.
inline int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// From C++'s remainder, which cannot overflow once b == -1 is out of the way; a - floor_div(a, b) * b
// overflows for a = INT64_MAX, b = -2 (UndefinedBehaviorSanitizer found it, test_integer_traps).
inline int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  const int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

}  // namespace tessel
