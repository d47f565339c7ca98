#include "core/support/run_limits.h"

#include <atomic>
#include <string>

#include "core/support/error.h"

namespace tessel {

namespace {
std::atomic<int64_t> g_max_loop_iterations{kDefaultMaxLoopIterations};
}  // namespace

int64_t max_loop_iterations() { return g_max_loop_iterations.load(std::memory_order_relaxed); }

void set_max_loop_iterations(int64_t n) {
  if (n < 1) throw Error("the loop iteration limit must be at least 1, got " + std::to_string(n));
  g_max_loop_iterations.store(n, std::memory_order_relaxed);
}

}  // namespace tessel
