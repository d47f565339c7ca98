#pragma once
// Limits on the work a small model can ask for (issue 40): a 2 KB file may hold a Loop whose trip
// count is 2^62. The reference executor stops such a loop with an Error naming the limit, which
// the user can raise (`tessel run --max-loop-iterations N`); it never runs unbounded.
#include <cstdint>

namespace tessel {

// Far above what a model runs (a decoder's loop over tokens, an RNN's over steps: thousands), far
// below what hangs: a body of a few microseconds takes seconds at this count.
inline constexpr int64_t kDefaultMaxLoopIterations = 1'000'000;

// The most iterations one Loop node may run (process-wide; default kDefaultMaxLoopIterations).
int64_t max_loop_iterations();
// Sets it; n must be at least 1 (Error otherwise).
void set_max_loop_iterations(int64_t n);

}  // namespace tessel
