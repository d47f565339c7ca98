#pragma once
// What Tessel remembers of one step of compilation: the same record for a graph pass, a schedule
// step and a lowering pass, read by the studio's panes, the CLI's dumps and the tests. The pass
// infrastructure does not know the IR: a step's program is an IrSnapshot, an immutable value that
// prints itself and that the code which knows its type reads back typed.
//
//   auto snap = std::make_shared<const Snapshot<Graph>>(graph, [](const Graph& g) { return print_graph(g); });
//   record.after->text()           the printed program (printed once, on first use)
//   snapshot_ir<Graph>(record.after)  the Graph itself (null when the snapshot holds another IR)
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace tessel {

// One IR value as it was after a step. Shared: keeping every step's snapshot costs little, since
// an unchanged step keeps the very snapshot it received.
class IrSnapshot {
 public:
  virtual ~IrSnapshot() = default;
  virtual const std::string& text() const = 0;  // the IR's own printed form
};
using IrSnapshotPtr = std::shared_ptr<const IrSnapshot>;

template <class Ir>
class Snapshot final : public IrSnapshot {
 public:
  using Printer = std::function<std::string(const Ir&)>;
  Snapshot(std::shared_ptr<const Ir> ir, Printer print) : ir_(std::move(ir)), print_(std::move(print)) {}

  const std::shared_ptr<const Ir>& ir() const { return ir_; }
  // Printed on first use (snapshots cross threads, hence the once_flag): a pipeline that nobody
  // dumps never prints.
  const std::string& text() const override {
    std::call_once(printed_, [this] { text_ = print_(*ir_); });
    return text_;
  }

 private:
  std::shared_ptr<const Ir> ir_;
  Printer print_;
  mutable std::once_flag printed_;
  mutable std::string text_;
};

// The IR a snapshot holds, or null when `snapshot` is null or holds another IR type.
template <class Ir>
std::shared_ptr<const Ir> snapshot_ir(const IrSnapshotPtr& snapshot) {
  auto* typed = dynamic_cast<const Snapshot<Ir>*>(snapshot.get());
  return typed ? typed->ir() : nullptr;
}

enum class StepKind { kGraphPass, kScheduleStep, kLoweringPass };
std::string_view step_kind_name(StepKind kind);  // "graph pass", "schedule step", "lowering pass"

struct StepRecord {
  std::string name;  // "fold_constants", "step 3 split(C.i, 8)", "loop_partition"
  StepKind kind = StepKind::kGraphPass;
  IrSnapshotPtr before;  // what the step received (null for the first step of a replay)
  IrSnapshotPtr after;   // what it left: `before` itself when it changed nothing or failed
  bool changed = false;  // after != before
  double wall_ms = 0.0;
  std::string error;  // empty on success; otherwise the reason, naming the step (see failure_text)

  bool failed() const { return !error.empty(); }
  // The printed program after the step; empty when there is none.
  const std::string& text() const;
};
using StepRecordPtr = std::shared_ptr<const StepRecord>;

// How a failed step's record and exception read: "pass 'fuse_ops' failed: REASON" (graph pass),
// "lowering pass tensorize: REASON", "step 2 split(C.i, 2): REASON" (schedule step).
std::string failure_text(StepKind kind, std::string_view name, std::string_view reason);

}  // namespace tessel
