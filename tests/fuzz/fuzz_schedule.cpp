// Hand schedules (core/schedule): parsed, printed back, then applied to a few small fixed kernels
// and lowered, which is what the studio's schedule editor and `tessel lower --schedule` do with a
// schedule from a session file. Steps that do not fit a kernel are refused (tessel::Error); a
// schedule for one kernel simply fails on the others. The kernels are small so that even a fully
// unrolled program stays cheap.
#include "core/lower/pipeline.h"
#include "core/schedule/schedule.h"
#include "core/te/op_spec.h"
#include "tests/fuzz/fuzz_common.h"

using namespace tessel;

namespace {

const std::vector<te::ComputeDag>& kernels() {
  static const std::vector<te::ComputeDag> dags = [] {
    std::vector<te::ComputeDag> v;
    for (const char* spec : {"matmul M=16 N=16 K=16", "conv2d_bias_relu N=1 C=2 H=6 W=6 K=2 R=3 S=3 stride=1 pad=1",
                             "softmax M=4 N=16", "conv2d_nchwc N=1 C=8 H=4 W=4 K=8 R=3 S=3 stride=1 pad=1 block=4"})
      v.push_back(te::dag_from_spec(spec));
    return v;
  }();
  return dags;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text = fuzz::as_text(data, size);
  schedule::Schedule s;
  try {
    s = schedule::parse_schedule(text);
  } catch (const Error&) {
    return 0;
  }
  std::string printed = schedule::to_text(s);
  fuzz::must_accept("the printed schedule is refused", printed, [&] {
    fuzz::fuzz_check(schedule::parse_schedule(printed) == s, "parse(to_text(s)) != s", printed);
    fuzz::fuzz_check(schedule::schedule_from_json(schedule::to_json(s)) == s, "schedule JSON round trip differs",
                     printed);
  });
  for (const te::ComputeDag& dag : kernels()) fuzz::expect_refusal_only([&] { (void)lower::lower(dag, s); });
  return 0;
}
