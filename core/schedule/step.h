#pragma once
// One schedule step as data: a kind and its arguments, printed as one line
//
//   split(C.i, 8)          split(C.i, nparts=4)       tile(C.i, C.j, 8, 8)
//   fuse(C.i.outer, C.j.outer)   reorder(C.i.outer, C.j.outer, C.k, C.i.inner)
//   vectorize(C.j.inner)   unroll(C.k.inner)          parallel(C.i.outer)
//   bind(C.i.outer, blockIdx.x)   vthread(C.i.outer)
//   compute_at(P, C.j.outer)      compute_inline(P)    compute_root(P)
//   cache_read(A, shared, C)      cache_write(C, local)
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

// The step kinds with their signatures, for help texts and error messages.
struct StepKindInfo {
  const char* name;
  const char* signature;  // "split(axis, factor) | split(axis, nparts=N)"
  const char* doc;
};
const std::vector<StepKindInfo>& step_kinds();
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
