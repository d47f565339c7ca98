#pragma once
// Pass instrumentation: observers the pass manager calls around every pass. Printing the graph
// after each pass, timing, verification and recording are all just instruments; a pass knows
// nothing of them.
//
//   PassManager pm(passes);
//   PassRecorder recorder;
//   pm.add_instrument(&recorder);
//   pm.run(graph, context);      // recorder.records() now holds one PassRecord per pass
#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/pass/pass_record.h"
#include "core/support/error.h"

namespace tessel {

class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  virtual void before_pass(std::string_view /*pass*/, const GraphPtr& /*before*/) {}
  // `after` is the same pointer as `before` when the pass changed nothing.
  virtual void after_pass(std::string_view /*pass*/, const GraphPtr& /*before*/, const GraphPtr& /*after*/,
                          bool /*changed*/, double /*wall_ms*/) {}
  // The pass threw; the pipeline keeps `before` and stops.
  virtual void after_pass_failed(std::string_view /*pass*/, const GraphPtr& /*before*/, const Error& /*error*/,
                                 double /*wall_ms*/) {}
};

// Keeps one PassRecord per pass (including the failed one). What the studio and the CLI read.
class PassRecorder final : public PassInstrument {
 public:
  void after_pass(std::string_view pass, const GraphPtr& before, const GraphPtr& after, bool changed,
                  double wall_ms) override;
  void after_pass_failed(std::string_view pass, const GraphPtr& before, const Error& error, double wall_ms) override;
  const std::vector<PassRecordPtr>& records() const { return records_; }

 private:
  std::vector<PassRecordPtr> records_;
};

// Sums wall time per pass name (a pass may run more than once in a pipeline).
class PassTimer final : public PassInstrument {
 public:
  void after_pass(std::string_view pass, const GraphPtr& before, const GraphPtr& after, bool changed,
                  double wall_ms) override;
  void after_pass_failed(std::string_view pass, const GraphPtr& before, const Error& error, double wall_ms) override;
  struct Entry {
    std::string pass;
    double total_ms = 0.0;
    int runs = 0;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  double total_ms() const;
  std::string table() const;  // "pass  runs  ms" lines, in first-run order

 private:
  void add(std::string_view pass, double ms);
  std::vector<Entry> entries_;
};

// Prints the graph (text format) after passes: all of them, only those that changed it, or one
// named pass — MLIR's print-ir-after, as an instrument.
class PassTextDumper final : public PassInstrument {
 public:
  enum class When { kAll, kChanged, kNamed };
  PassTextDumper(std::ostream& out, When when, std::string pass_name = {});
  void after_pass(std::string_view pass, const GraphPtr& before, const GraphPtr& after, bool changed,
                  double wall_ms) override;
  void after_pass_failed(std::string_view pass, const GraphPtr& before, const Error& error, double wall_ms) override;

 private:
  std::ostream& out_;
  When when_;
  std::string pass_name_;
};

// Re-runs type inference on a copy of every graph a pass produces and compares each value's
// dtype and shape with what the pass left there; a mismatch throws Error naming the pass and the
// value. Catches passes that rewrite nodes without keeping types right. On in tests and in
// debug builds (PipelineOptions::verify).
class PassVerifier final : public PassInstrument {
 public:
  void after_pass(std::string_view pass, const GraphPtr& before, const GraphPtr& after, bool changed,
                  double wall_ms) override;
};

// Checks `g` is well formed (inputs defined before use, ids in range, outputs produced) and that
// re-inferred types match the recorded ones; throws Error with the first problem.
void verify_graph(const Graph& g);

}  // namespace tessel
