#include "core/schedule/parallel_work.h"

#include <limits>

namespace tessel::schedule {

namespace {
// a · b, saturating: a kernel's work only has to compare with a threshold.
int64_t times(int64_t a, int64_t b) {
  if (a > 0 && b > std::numeric_limits<int64_t>::max() / a) return std::numeric_limits<int64_t>::max();
  return a * b;
}

int64_t plus(int64_t a, int64_t b) {
  return b > std::numeric_limits<int64_t>::max() - a ? std::numeric_limits<int64_t>::max() : a + b;
}

int64_t elements(const te::Tensor& t) {
  int64_t n = 1;
  for (int64_t extent : t->shape) n = times(n, extent);
  return n;
}
}  // namespace

int64_t kernel_work(const te::ComputeDag& dag) {
  int64_t work = 0;
  for (const te::Tensor& t : dag.ops) {
    if (t->is_placeholder) {
      work = plus(work, times(elements(t), kWorkPerElementMoved));
      continue;
    }
    int64_t stage = elements(t);
    if (const loopir::Reduce* red = t->reduction())
      for (const auto& axis : red->axes) stage = times(stage, axis.extent);
    work = plus(work, stage);
  }
  for (const te::Tensor& t : dag.outputs) work = plus(work, times(elements(t), kWorkPerElementMoved));
  return work;
}

}  // namespace tessel::schedule
