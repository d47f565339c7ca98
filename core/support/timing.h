#pragma once
// Wall time for records and reports: every pass record, lowering record, compile and kernel time
// in Tessel is measured on the steady clock in milliseconds.
//
//   const auto start = std::chrono::steady_clock::now();
//   ... work ...
//   record.wall_ms = ms_since(start);
#include <chrono>

namespace tessel {

// Milliseconds from `start` to now (fractional).
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Milliseconds from `a` to `b` (fractional; negative when b is earlier).
inline double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace tessel
