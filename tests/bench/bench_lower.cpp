// Re-lowering speed: the studio re-lowers on every schedule edit. Measures, for a conv2d with a
// 10-step schedule, (1) replaying the schedule and lowering it, (2) the whole "program after every
// step" list (11 lowerings, printed and diffed). Goals (issue 4): under 20 ms and 100 ms.
// Each figure is the median of repeats, printed beside the same run's reference: lowering the
// unscheduled kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/lower/pipeline.h"
#include "core/lower/step_views.h"
#include "core/te/op_spec.h"

using namespace tessel;

namespace {

template <class F>
double median_ms(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 21;
  if (repeats < 1) repeats = 1;
  const char* spec = "conv2d N=1 C=64 H=56 W=56 K=64 R=3 S=3 stride=1 pad=1";
  te::ComputeDag dag = te::dag_from_spec(spec);
  schedule::Schedule s = schedule::parse_schedule(
      "cache_write(conv, local)\n"
      "tile(conv.y, conv.x, 4, 8)\n"
      "split(conv.f, 16)\n"
      "reorder(conv.n, conv.f.outer, conv.y.outer, conv.x.outer, conv.f.inner, conv.y.inner, conv.x.inner)\n"
      "vectorize(conv.x.inner)\n"
      "parallel(conv.f.outer)\n"
      "compute_at(conv_local, conv.x.outer)\n"
      "split(conv_local.rc, 8)\n"
      "compute_inline(pad)\n"
      "unroll(conv_local.rx)\n");
  double reference = median_ms(repeats, [&] { lower::lower(dag, schedule::Schedule{}); });
  double relower = median_ms(repeats, [&] { lower::lower(dag, s); });
  double per_step = median_ms(repeats, [&] {
    auto v = lower::program_after_each_step(dag, s);
    if (v.size() != s.steps.size() + 1 || v.back().record.failed()) std::fprintf(stderr, "step list failed\n");
  });
  std::printf("kernel: %s, %zu steps, median of %d\n", spec, s.steps.size(), repeats);
  std::printf("lower unscheduled (reference)   %8.3f ms\n", reference);
  std::printf("replay + lower 10 steps         %8.3f ms   x%.1f reference   goal < 20 ms\n", relower,
              relower / reference);
  std::printf("program after every step (11)   %8.3f ms   x%.1f reference   goal < 100 ms\n", per_step,
              per_step / reference);
  return 0;
}
