// The lowering pipeline, in order. Each pass is a function from loop program to loop program
// (see its header for a before/after example); every pass runs through the instrumentation
// (core/pass/instrument.h), which times and records it like any graph pass or schedule step and,
// in tests and debug builds, verifies the program it leaves (ProgramVerifier, pipeline.h).
#include "core/lower/pipeline.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/arith/simplify.h"
#include "core/loopir/printer.h"
#include "core/loopir/verify.h"
#include "core/lower/build_loops.h"
#include "core/lower/inject_double_buffer.h"
#include "core/lower/inject_prefetch.h"
#include "core/lower/inject_virtual_thread.h"
#include "core/lower/insert_barriers.h"
#include "core/lower/loop_partition.h"
#include "core/lower/lower_thread_allreduce.h"
#include "core/lower/storage_flatten.h"
#include "core/lower/storage_rewrite.h"
#include "core/lower/store_from_thread_zero.h"
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
    {"lower_thread_allreduce", lower_thread_allreduce},  // a block's threads reduce: a tree of barriers
    {"store_from_thread_zero", store_from_thread_zero},  // a store all the block would make: thread 0's
    {"simplify", simplify_program},                      // fold index arithmetic, drop proven guards
    {"tensorize", tensorize_loops},                      // marked nests -> tensor intrinsic calls
    {"double_buffer", inject_double_buffer},             // fetch tile k+1 while computing on tile k
    {"loop_partition", partition_loops},                 // split tails: guard-free main bodies
    {"storage_flatten", flatten_storage},                // N-d accesses -> 1-d offsets, aligned strides
    {"storage_rewrite", rewrite_storage},                // dead intermediates hand their storage on
    {"inject_virtual_thread", inject_virtual_threads},   // interleave vthreads into one stream
    {"insert_barriers", insert_barriers},                // shared buffers: writes visible before reads
    {"vectorize", vectorize_loops},                      // keep only vectorizable vectorized loops
    {"prefetch", inject_prefetch},                       // cache hints for what a later iteration reads
    {"unroll", unroll_loops},                            // unrolled loops and auto_unroll_max_step
    {"simplify", simplify_program},                      // clean up after the rewrites
};

// Runs one pass on the program a snapshot holds. A pass that changes nothing returns the very
// body it received, and then the step keeps the snapshot it received: that is what "unchanged" means.
IrSnapshotPtr run_pass(const Pass& pass, const IrSnapshotPtr& program) {
  const Func& f = *program_of(program);
  Func next = pass.run(f);
  return next.body == f.body ? program : program_snapshot(std::move(next));
}

}  // namespace

std::vector<std::string> lowering_pass_names() {
  std::vector<std::string> names = {"build_loop_nests"};
  for (auto& p : kPasses) names.emplace_back(p.name);
  return names;
}

IrSnapshotPtr program_snapshot(Func f) {
  return std::make_shared<const Snapshot<Func>>(std::make_shared<const Func>(std::move(f)),
                                                [](const Func& program) { return loopir::to_string(program); });
}

std::shared_ptr<const Func> program_of(const IrSnapshotPtr& snapshot) { return snapshot_ir<Func>(snapshot); }

void ProgramVerifier::after_step(const StepRecord& record) {
  if (!record.changed || !record.after) return;  // an unchanged program was checked when it was made
  std::shared_ptr<const Func> program = program_of(record.after);
  if (!program) throw Error("the loop-program verifier was given a program that is not a loop program");
  loopir::verify_or_throw(*program, record.name);
}

bool verifies_programs_by_default() {
#ifndef NDEBUG
  return true;
#else
  const char* env = std::getenv("TESSEL_VERIFY_LOOPIR");
  return env && std::strcmp(env, "1") == 0;
#endif
}

LowerResult lower(const schedule::ScheduleState& state, const std::vector<Instrument*>& instruments) {
  const auto start = std::chrono::steady_clock::now();
  StepRecorder recorder;
  ProgramVerifier verifier;
  Instrumentation steps;
  bool caller_verifies = false;
  for (Instrument* i : instruments) caller_verifies = caller_verifies || dynamic_cast<ProgramVerifier*>(i);
  if (!caller_verifies && verifies_programs_by_default()) steps.add(&verifier);  // first: it may reject a result
  for (Instrument* i : instruments) steps.add(i);
  steps.add(&recorder);
  IrSnapshotPtr program = steps
                              .run(StepKind::kLoweringPass, "build_loop_nests", nullptr,
                                   [&] { return program_snapshot(build_loop_nests(state)); })
                              ->after;
  for (const Pass& p : kPasses)
    program = steps.run(StepKind::kLoweringPass, p.name, program, [&] { return run_pass(p, program); })->after;

  LowerResult result;
  result.func = *program_of(program);
  result.passes = recorder.records();
  result.total_ms = ms_since(start);
  return result;
}

LowerResult lower(const te::ComputeDag& dag, const schedule::Schedule& s, const std::vector<Instrument*>& instruments) {
  return lower(schedule::replay(dag, s), instruments);
}

}  // namespace tessel::lower
