#pragma once
// One schedule step as data: a kind and its arguments, printed as one line
//
//   split(C.i, 8)          split(C.i, nparts=4)       tile(C.i, C.j, 8, 8)
//   fuse(C.i.outer, C.j.outer)   reorder(C.i.outer, C.j.outer, C.k, C.i.inner)
//   vectorize(C.j.inner)   unroll(C.k.inner)          parallel(C.i.outer)
//   bind(C.i.outer, blockIdx.x)   vthread(C.i.outer)
//   compute_at(P, C.j.outer)      compute_inline(P)    compute_root(P)
//   cache_read(A, shared, C)      cache_write(C, local)      set_scope(C_rf, shared)
//   storage_align(A_shared.i, 16, 1)   double_buffer(A_shared)
//   pragma(C.k.outer, auto_unroll_max_step=16)    rfactor(C.k.inner)
//   tensorize(C.i.inner, gemm_16x16x16_f32)
//
// An axis is named `STAGE.AXIS` (stage names contain no dot). Arguments are integers or names,
// optionally keyed (`nparts=4`). The text form, the JSON form and the record round-trip exactly.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace tessel::schedule {

struct StepArg {
  std::string key;                           // empty for a positional argument
  std::variant<int64_t, std::string> value;  // an integer or a name (axis, stage, scope, tag)
  bool is_int() const { return std::holds_alternative<int64_t>(value); }
  bool operator==(const StepArg&) const = default;
};

struct ScheduleStep {
  std::string kind;  // "split", "fuse", ... (see step_kinds())
  std::vector<StepArg> args;
  bool operator==(const ScheduleStep&) const = default;
};

struct ScheduleState;  // schedule_state.h
class StepArgs;        // a step's arguments as apply reads them (schedule_state.cpp)

// What one argument of a step kind refers to, so an editor can offer only valid values (the
// studio's step form, views/schedule/step_form.h, builds its widgets from these).
struct StepArgSpec {
  enum class Role {
    kAxis,           // any loop axis
    kReduceAxis,     // a reduction loop axis (rfactor)
    kRootAxis,       // a tensor's own axis (storage_align)
    kSameStageAxis,  // a loop axis of the stage of argument `ref` (fuse, tile)
    kConsumerAxis,   // a loop axis of a stage reading the stage of argument `ref` (compute_at)
    kStage,
    kInnerStage,  // a stage that is not an output (compute_at, compute_inline)
    kTensor,
    kScope,
    kTag,
    kIntrinsic,
    kReaders,    // stages reading the tensor of argument `ref`, several (cache_read)
    kAxisList,   // loops of the stage of argument `ref`, in order (reorder)
    kInt,        // bounded by the extent of the axis of argument `ref`, if any
    kSplitMode,  // split by factor or by nparts
  };
  const char* label;
  Role role;
  int ref = -1;          // the argument whose value this one depends on
  const char* key = "";  // the key of a keyed argument (pragma's auto_unroll_max_step)
  int64_t min = 1, def = 8;
};

// The step kinds: one row each, with what help texts and error messages show (name, signature,
// doc), how many arguments it takes (checked before apply), what it does to the state, and what
// each argument refers to (for editors).
struct StepKindInfo {
  const char* name;
  const char* signature;  // "split(axis, factor) | split(axis, nparts=N)"
  const char* doc;
  size_t min_args = 0, max_args = 0;
  // Checks the arguments' meaning against the state (which axis, stage, scope) and applies the
  // step; throws Error with the reason. apply_step checks the argument count first.
  void (*apply)(ScheduleState& state, const StepArgs& args) = nullptr;
  std::vector<StepArgSpec> args;
};
const std::vector<StepKindInfo>& step_kinds();  // the table (step_kinds.cpp)
const StepKindInfo* find_step_kind(const std::string& name);

std::string to_string(const ScheduleStep& s);
// Parses one line; throws Error naming the text and what is wrong (unknown kind, bad syntax).
ScheduleStep parse_step(const std::string& line);
nlohmann::json to_json(const ScheduleStep& s);
ScheduleStep step_from_json(const nlohmann::json& j);

// Builders for code that writes schedules.
StepArg arg(int64_t v);
StepArg arg(std::string name);
StepArg arg(const char* name);
StepArg keyed(std::string key, int64_t v);
ScheduleStep step(std::string kind, std::vector<StepArg> args);

}  // namespace tessel::schedule
