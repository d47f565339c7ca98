#pragma once
// The functions that apply one step kind each to a ScheduleState (schedule_state.cpp), for the
// table of step kinds (step_kinds.cpp). Each checks its arguments' meaning against the state and
// throws Error with the reason. Internal to core/schedule: callers use apply_step.
#include "core/schedule/step.h"

namespace tessel::schedule::step_apply {

void apply_split(ScheduleState& st, const StepArgs& a);
void apply_tile(ScheduleState& st, const StepArgs& a);
void apply_fuse(ScheduleState& st, const StepArgs& a);
void apply_reorder(ScheduleState& st, const StepArgs& a);
void apply_vectorize(ScheduleState& st, const StepArgs& a);
void apply_unroll(ScheduleState& st, const StepArgs& a);
void apply_parallel(ScheduleState& st, const StepArgs& a);
void apply_bind(ScheduleState& st, const StepArgs& a);
void apply_vthread(ScheduleState& st, const StepArgs& a);
void apply_compute_at(ScheduleState& st, const StepArgs& a);
void apply_compute_inline(ScheduleState& st, const StepArgs& a);
void apply_compute_root(ScheduleState& st, const StepArgs& a);
void apply_cache_read(ScheduleState& st, const StepArgs& a);
void apply_cache_write(ScheduleState& st, const StepArgs& a);
void apply_storage_align(ScheduleState& st, const StepArgs& a);
void apply_set_scope(ScheduleState& st, const StepArgs& a);
void apply_double_buffer(ScheduleState& st, const StepArgs& a);
void apply_pragma(ScheduleState& st, const StepArgs& a);
void apply_prefetch(ScheduleState& st, const StepArgs& a);
void apply_rfactor(ScheduleState& st, const StepArgs& a);
void apply_tensorize(ScheduleState& st, const StepArgs& a);

}  // namespace tessel::schedule::step_apply
