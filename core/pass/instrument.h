#pragma once
// Instrumentation: observers called around every step of compilation (graph pass, schedule step,
// lowering pass alike), as MLIR's pass instrumentation treats every pass alike. Recording, timing,
// printing the IR after a step and verifying it are all instruments; a step knows nothing of them.
//
//   StepRecorder recorder;
//   TextDumper dump(std::cerr, TextDumper::When::kChanged);
//   Instrumentation steps({&recorder, &dump});
//   StepRecordPtr r = steps.run(StepKind::kLoweringPass, "unroll", before, [&] { return unrolled(before); });
//   recorder.records()   one StepRecord per step run, the failed one included
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/pass/step_record.h"
#include "core/support/error.h"

namespace tessel {

class Instrument {
 public:
  virtual ~Instrument() = default;
  virtual void before_step(std::string_view /*name*/, StepKind /*kind*/, const IrSnapshotPtr& /*before*/) {}
  // The step succeeded. Throwing Error here rejects its result (a verifier does): the step then
  // counts as failed and every instrument sees step_failed.
  virtual void after_step(const StepRecord& /*record*/) {}
  // The step threw or an instrument rejected it; the IR stays `record.before`.
  virtual void step_failed(const StepRecord& /*record*/) {}
};

// Thrown by Instrumentation::run when a step fails; carries the failed step's record.
class StepFailure : public Error {
 public:
  StepFailure(StepRecordPtr record, std::string reason)
      : Error(record->error), record_(std::move(record)), reason_(std::move(reason)) {}
  const StepRecord& record() const { return *record_; }
  const StepRecordPtr& record_ptr() const { return record_; }
  const std::string& reason() const { return reason_; }  // what the step threw, without the step's name

 private:
  StepRecordPtr record_;
  std::string reason_;
};

// Runs steps between the instruments. Instruments are called in the order added; put the ones that
// may reject a result (verifiers) first.
class Instrumentation {
 public:
  Instrumentation() = default;
  explicit Instrumentation(std::vector<Instrument*> instruments) : instruments_(std::move(instruments)) {}
  void add(Instrument* instrument) { instruments_.push_back(instrument); }
  const std::vector<Instrument*>& instruments() const { return instruments_; }

  // Runs `step`, which returns the IR after it: `before` itself when it changed nothing (that is
  // how "changed" is told). Times it and returns its record, which every instrument has seen.
  // Throws StepFailure when the step throws or an instrument rejects its result.
  StepRecordPtr run(StepKind kind, std::string name, const IrSnapshotPtr& before,
                    const std::function<IrSnapshotPtr()>& step) const;

 private:
  std::vector<Instrument*> instruments_;
};

// Keeps one record per step (including the failed one). What the studio and the CLI read.
class StepRecorder final : public Instrument {
 public:
  void after_step(const StepRecord& record) override;
  void step_failed(const StepRecord& record) override;
  const std::vector<StepRecordPtr>& records() const { return records_; }

 private:
  std::vector<StepRecordPtr> records_;
};

// Sums wall time per step name (a pass may run more than once in a pipeline).
class StepTimer final : public Instrument {
 public:
  void after_step(const StepRecord& record) override { add(record.name, record.wall_ms); }
  void step_failed(const StepRecord& record) override { add(record.name, record.wall_ms); }
  struct Entry {
    std::string step;
    double total_ms = 0.0;
    int runs = 0;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  double total_ms() const;
  std::string table() const;  // "step  runs  ms" lines, in first-run order

 private:
  void add(std::string_view step, double ms);
  std::vector<Entry> entries_;
};

// Prints the IR (its snapshot's text) after steps: all of them, only those that changed it, or
// the named one — MLIR's print-ir-after, as an instrument. A name also selects the steps it starts
// followed by a space: "step 3" selects "step 3 split(C.i, 8)".
class TextDumper final : public Instrument {
 public:
  enum class When { kAll, kChanged, kNamed };
  TextDumper(std::ostream& out, When when, std::string step_name = {});
  // "all", "changed" or a step's name, as `--dump-after` takes it.
  static TextDumper from_option(std::ostream& out, const std::string& which);
  void after_step(const StepRecord& record) override;
  void step_failed(const StepRecord& record) override;

  // Whether `when`/`name` select the step named `step`.
  static bool selects(When when, std::string_view name, std::string_view step, bool changed);

 private:
  std::ostream& out_;
  When when_;
  std::string step_name_;
};

// Checks the IR after every step that changed it; `check` throws Error with the first problem,
// which rejects the step ("verifier after 'X': problem"). What checking means belongs to the IR:
// core/graph/passes/verify_graph.h makes the graph's.
class Verifier final : public Instrument {
 public:
  explicit Verifier(std::function<void(const IrSnapshot& after)> check) : check_(std::move(check)) {}
  void after_step(const StepRecord& record) override;

 private:
  std::function<void(const IrSnapshot&)> check_;
};

}  // namespace tessel
