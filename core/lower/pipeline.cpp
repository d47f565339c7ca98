// The lowering pipeline, in order. Each pass is a function from loop program to loop program
// (see its header for a before/after example); every pass is timed and recorded.
#include "core/lower/pipeline.h"

#include <chrono>

#include "core/arith/simplify.h"
#include "core/loopir/printer.h"
#include "core/lower/build_loops.h"
#include "core/lower/inject_double_buffer.h"
#include "core/lower/inject_virtual_thread.h"
#include "core/lower/insert_barriers.h"
#include "core/lower/loop_partition.h"
#include "core/lower/storage_flatten.h"
#include "core/lower/storage_rewrite.h"
#include "core/lower/tensorize.h"
#include "core/lower/unroll_loops.h"
#include "core/lower/vectorize_loops.h"
#include "core/support/error.h"
#include "core/support/timing.h"

namespace tessel::lower {
using loopir::Func;

namespace {

Func simplify_program(const Func& f) {
  Func out = f;
  out.body = arith::simplify(f.body);
  return out;
}

struct Pass {
  const char* name;
  Func (*run)(const Func&);
};

// After build_loop_nests (schedule -> loop nests with bound inference, see build_loops.h):
const Pass kPasses[] = {
    {"simplify", simplify_program},                     // fold index arithmetic, drop proven guards
    {"tensorize", tensorize_loops},                     // marked nests -> tensor intrinsic calls
    {"double_buffer", inject_double_buffer},            // fetch tile k+1 while computing on tile k
    {"loop_partition", partition_loops},                // split tails: guard-free main bodies
    {"storage_flatten", flatten_storage},               // N-d accesses -> 1-d offsets, aligned strides
    {"storage_rewrite", rewrite_storage},               // dead intermediates hand their storage on
    {"inject_virtual_thread", inject_virtual_threads},  // interleave vthreads into one stream
    {"insert_barriers", insert_barriers},               // shared buffers: writes visible before reads
    {"vectorize", vectorize_loops},                     // keep only vectorizable vectorized loops
    {"unroll", unroll_loops},                           // unrolled loops and auto_unroll_max_step
    {"simplify", simplify_program},                     // clean up after the rewrites
};

LowerRecordPtr record(const char* name, const Func& f, bool changed, double ms, const LowerOptions& opt) {
  auto r = std::make_shared<LowerRecord>();
  r->name = name;
  r->program = std::make_shared<const Func>(f);
  if (opt.record_text) r->text = loopir::to_string(f);
  r->changed = changed;
  r->wall_ms = ms;
  return r;
}

}  // namespace

std::vector<std::string> lowering_pass_names() {
  std::vector<std::string> names = {"build_loop_nests"};
  for (auto& p : kPasses) names.emplace_back(p.name);
  return names;
}

LowerResult lower(const schedule::ScheduleState& state, const LowerOptions& options) {
  LowerResult result;
  auto start = std::chrono::steady_clock::now();
  auto t0 = start;
  Func f = build_loop_nests(state);
  result.passes.push_back(record("build_loop_nests", f, true, ms_since(t0), options));
  for (const Pass& p : kPasses) {
    t0 = std::chrono::steady_clock::now();
    Func next;
    try {
      next = p.run(f);
    } catch (const Error& e) {
      rethrow_with_context(e, std::string("lowering pass ") + p.name);
    }
    result.passes.push_back(record(p.name, next, next.body != f.body, ms_since(t0), options));
    f = std::move(next);
  }
  result.func = std::move(f);
  result.total_ms = ms_since(start);
  return result;
}

LowerResult lower(const te::ComputeDag& dag, const schedule::Schedule& s, const LowerOptions& options) {
  return lower(schedule::replay(dag, s), options);
}

}  // namespace tessel::lower
