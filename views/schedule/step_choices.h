#pragma once
// What the schedule editor's argument forms may offer at one point of a schedule: the stages,
// their loop axes with extents, the tensors and the scopes, found by replaying the steps before
// the one being edited (core/schedule/schedule_state.h). Qt-free, so the rules are tested alone.
//
//   steps 0..k-1 ──apply_step──▶ ScheduleState ──▶ StepChoices { stage C: leaf i.outer(4) i.inner(8) k(16) ... }
//
// Extents are the declared ones (a stage computed at a consumer's loop computes only a region of
// it; bound inference happens in lowering, not here).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/schedule/schedule.h"
#include "core/target/target.h"
#include "core/te/tensor.h"

namespace tessel::views {

struct AxisChoice {
  std::string stage, axis;  // "C", "i.outer"
  int64_t extent = 0;       // 0 when it cannot be known (an axis derived from an unknown extent)
  bool is_reduce = false;
  std::string full() const { return stage + "." + axis; }
  std::string label() const;  // "C.i.outer  (extent 4)"
};

struct StageChoice {
  std::string name;
  bool is_output = false;
  std::string attach;                  // "root", "inline", "at C.j.outer"
  std::vector<AxisChoice> leaf;        // loops, outermost first (none for an inlined stage)
  std::vector<AxisChoice> roots;       // the tensor's own axes (storage_align)
  std::vector<std::string> consumers;  // stages that read it (cache_read readers, compute_at targets)
};

struct StepChoices {
  std::vector<StageChoice> stages;   // producers first
  std::vector<std::string> tensors;  // placeholders and stages (cache_read)
  std::vector<std::string> scopes;   // "global", then the target's (TargetOffer)
  std::vector<std::string> thread_tags;
  std::vector<std::string> intrinsics;  // tensor intrinsics the target runs (tensorize)
  std::vector<std::pair<std::string, std::vector<std::string>>> readers;  // tensor -> stages reading it
  int applied = 0;                                                        // steps replayed without error
  std::string error;  // the first failing step before `count`, if any

  const StageChoice* find(const std::string& stage) const;
  const AxisChoice* find_axis(const std::string& full_name) const;  // "C.i.outer"
  std::vector<AxisChoice> all_leaf_axes() const;
  std::vector<std::string> readers_of(const std::string& tensor) const;
};

// What a target offers a schedule: the memory scopes and tensor intrinsics its kind declares
// (core/target: TargetKind::memory_scopes, TargetKind::tensor_intrinsics).
struct TargetOffer {
  std::vector<std::string> scopes;      // "global" first
  std::vector<std::string> intrinsics;  // declared tensor intrinsics the target runs
};
// A kind that declares nothing, or a spec that is empty or names a kind not registered in this
// process: "global", "shared", "local" and every declared intrinsic.
TargetOffer generic_offer();
TargetOffer target_offer(const std::string& target_spec);

// Replays steps [0, count) of `s` on `dag`, stopping at the first failing one; the scopes and
// intrinsics are those of `offer`.
StepChoices step_choices(const te::ComputeDag& dag, const schedule::Schedule& s, size_t count,
                         const TargetOffer& offer = generic_offer());

// The declared extent of every axis of a stage, derived through its split/fuse relations.
std::vector<int64_t> axis_extents(const schedule::Stage& stage);

}  // namespace tessel::views
