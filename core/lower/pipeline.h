#pragma once
// Lowering: a scheduled tensor computation -> a loop program, through the passes listed in
// pipeline.cpp (read it top to bottom to see what the compiler does to a kernel). Every pass runs
// through the instrumentation (core/pass/instrument.h) like a graph pass: recorded, timed, and
// seen by the caller's instruments (`tessel lower --dump-after` adds a TextDumper).
#include <memory>
#include <vector>

#include "core/loopir/ir.h"
#include "core/pass/instrument.h"
#include "core/schedule/schedule.h"

namespace tessel::lower {

struct LowerResult {
  loopir::Func func;
  std::vector<StepRecordPtr> passes;  // one per pass, in order; the program is each record's `after`
  double total_ms = 0.0;
};

// Checks the loop program after build_loop_nests and after every lowering pass that changed it
// (loopir::verify_or_throw, core/loopir/verify.h). A malformed program fails the pass that made it,
// like any failing pass: "lowering pass tensorize: loop program 'matmul' after tensorize: variable
// 'k' is used outside its loop or let (...)". lower() runs one ahead of the caller's instruments
// when verifies_programs_by_default(); a caller that passes its own (`tessel lower --verify-each`)
// gets that one instead.
class ProgramVerifier final : public Instrument {
 public:
  void after_step(const StepRecord& record) override;
};
// True in debug builds (NDEBUG not defined) and when TESSEL_VERIFY_LOOPIR=1 (ctest sets it for
// every test, tests/CMakeLists.txt), as the graph's verifier is on in tests and debug builds.
bool verifies_programs_by_default();

// Throws Error (a StepFailure naming the pass) when the schedule cannot be lowered.
LowerResult lower(const schedule::ScheduleState& state, const std::vector<Instrument*>& instruments = {});
// Replays the whole schedule on the DAG, then lowers.
LowerResult lower(const te::ComputeDag& dag, const schedule::Schedule& s,
                  const std::vector<Instrument*>& instruments = {});

// The names of the lowering passes, in order.
std::vector<std::string> lowering_pass_names();

// A loop program as a step record holds it (printed by loopir::to_string), and back.
IrSnapshotPtr program_snapshot(loopir::Func f);
std::shared_ptr<const loopir::Func> program_of(const IrSnapshotPtr& snapshot);

}  // namespace tessel::lower
