#pragma once
// The state a schedule's steps build up: one Stage per computed tensor, with its loop axes, how
// they derive from the tensor's own axes (split/fuse relations), their order and annotations,
// and where the stage is computed. Lowering (core/lower/build_loops) turns this into loops.
//
//   root axes            i            j           k (reduce)
//   split(C.i, 8)     i.outer  i.inner
//   fuse(...)         ...
//   leaf order        the loops, outermost first
#include <optional>
#include <string>
#include <vector>

#include "core/loopir/ir.h"
#include "core/schedule/step.h"
#include "core/te/tensor.h"

namespace tessel::schedule {

struct AxisState {
  std::string name;
  bool is_reduce = false;
  loopir::ForKind kind = loopir::ForKind::kSerial;
  std::string thread_tag;
  loopir::Pragmas pragmas;
};

struct Relation {
  enum class Kind { kSplit, kFuse } kind = Kind::kSplit;
  int parent = -1, outer = -1, inner = -1;  // split: parent -> outer, inner
  int fused = -1;                           // fuse: outer, inner -> fused
  int64_t factor = 0;                       // split: inner extent, or the number of outer parts
  bool by_nparts = false;
};

enum class Attach { kRoot, kInline, kAt };

struct StorageAlign {
  int root_axis = 0;
  int64_t factor = 1, offset = 0;
};

// prefetch(AXIS, TENSOR, AHEAD, OFFSET): hints that fetch, in every iteration of AXIS, what it reads of
// TENSOR OFFSET iterations of the loop AHEAD later (core/lower/inject_prefetch.h).
struct PrefetchHint {
  int axis = -1;          // the loop the hints go in (an axis of this stage)
  std::string tensor;     // a tensor this stage reads
  std::string ahead;      // the loop to look ahead along: STAGE.AXIS as written
  std::string ahead_var;  // its loop variable's name
  int64_t offset = 1;
};

struct Stage {
  std::string name;
  te::Tensor op;
  std::vector<AxisState> axes;  // [0, num_root): the op's axes then its reduce axes; then derived axes
  int num_root = 0;
  std::vector<Relation> relations;
  std::vector<int> leaf;  // loop order, outermost first
  Attach attach = Attach::kRoot;
  std::string attach_stage;
  int attach_axis = -1;
  std::string scope = "global";
  std::vector<StorageAlign> align;
  bool double_buffer = false;
  bool is_output = false;
  int tensorize_axis = -1;       // the loop whose nest a tensor intrinsic replaces (-1: none)
  std::string tensor_intrinsic;  // its name (core/te/tensor_intrinsic.h)
  std::vector<PrefetchHint> prefetches;

  int find_axis(const std::string& axis_name) const;  // -1 when absent
  std::string leaf_names() const;                     // "i.outer, j, k"
  bool is_reduce_root(int root) const { return root >= static_cast<int>(op->axes.size()); }
};

struct ScheduleState {
  te::ComputeDag dag;         // the original computation (placeholders and outputs)
  std::vector<Stage> stages;  // computed tensors in a valid order (producers first)

  Stage* find(const std::string& name);
  const Stage* find(const std::string& name) const;
  // Stages whose formula reads tensor `name`.
  std::vector<const Stage*> consumers(const std::string& name) const;
  // Like consumers, but a reader that is inlined is replaced by its own (effective) readers.
  std::vector<const Stage*> effective_consumers(const std::string& name) const;
};

// The state before any step: every computed tensor at the root, loops in declaration order.
ScheduleState initial_state(const te::ComputeDag& dag);
// Applies one step; throws Error with the reason (which argument, why). The caller adds
// "step K <text>: " in front.
void apply_step(ScheduleState& state, const ScheduleStep& step);

}  // namespace tessel::schedule
