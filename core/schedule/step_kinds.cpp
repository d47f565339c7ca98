// The table of step kinds: one row per kind, read by the parser (names, argument counts), by
// apply_step (what each does), by help texts and errors (signature, doc) and by the studio's step
// form (what each argument refers to). Adding a step kind is one row here and its apply function.
#include <limits>

#include "core/schedule/step.h"
#include "core/schedule/step_apply.h"

namespace tessel::schedule {

namespace {

constexpr size_t kAny = std::numeric_limits<size_t>::max();  // no upper bound on the arguments

using Role = StepArgSpec::Role;
using namespace step_apply;

// The single argument of vectorize, unroll, parallel and vthread.
const std::vector<StepArgSpec> kOneAxis = {{"axis", Role::kAxis}};

}  // namespace

const std::vector<StepKindInfo>& step_kinds() {
  static const std::vector<StepKindInfo> kinds = {
      {"split", "split(axis, factor) | split(axis, nparts=N)", "splits a loop into an outer and an inner loop", 2, 2,
       apply_split, {{"axis", Role::kAxis}, {"factor", Role::kInt, 0}, {"mode", Role::kSplitMode}}},
      {"tile", "tile(axis_x, axis_y, factor_x, factor_y)",
       "splits two loops and orders them x.outer, y.outer, x.inner, y.inner", 4, 4, apply_tile,
       {{"axis x", Role::kAxis},
        {"axis y", Role::kSameStageAxis, 0},
        {"factor x", Role::kInt, 0},
        {"factor y", Role::kInt, 1}}},
      {"fuse", "fuse(axis_outer, axis_inner)", "merges two adjacent loops into one", 2, 2, apply_fuse,
       {{"outer", Role::kAxis}, {"inner", Role::kSameStageAxis, 0}}},
      {"reorder", "reorder(axis, axis, ...)", "puts the listed loops, in this order, where they stood", 2, kAny,
       apply_reorder, {{"stage", Role::kStage}, {"loop order", Role::kAxisList, 0}}},
      {"vectorize", "vectorize(axis)", "runs a loop as vector lanes", 1, 1, apply_vectorize, kOneAxis},
      {"unroll", "unroll(axis)", "replicates a loop's body", 1, 1, apply_unroll, kOneAxis},
      {"parallel", "parallel(axis)", "runs a loop's iterations on threads", 1, 1, apply_parallel, kOneAxis},
      {"bind", "bind(axis, blockIdx.x|blockIdx.y|blockIdx.z|threadIdx.x|threadIdx.y|threadIdx.z)",
       "binds a loop to a GPU block/thread index (a reduction loop to threadIdx: the threads reduce together)", 2, 2,
       apply_bind, {{"axis", Role::kAxis}, {"index", Role::kTag}}},
      {"vthread", "vthread(axis)", "makes a loop virtual threads, interleaved into one instruction stream", 1, 1,
       apply_vthread, kOneAxis},
      {"compute_at", "compute_at(stage, axis)", "computes a stage inside a consumer's loop, only the region it needs",
       2, 2, apply_compute_at, {{"stage", Role::kInnerStage}, {"at loop", Role::kConsumerAxis, 0}}},
      {"compute_inline", "compute_inline(stage)", "substitutes a stage's formula into its consumers", 1, 1,
       apply_compute_inline, {{"stage", Role::kInnerStage}}},
      {"compute_root", "compute_root(stage)", "computes a stage fully at the top level (the default)", 1, 1,
       apply_compute_root, {{"stage", Role::kStage}}},
      {"cache_read", "cache_read(tensor, scope, reader, ...)",
       "copies a tensor into a new stage TENSOR_SCOPE that the readers use", 3, kAny, apply_cache_read,
       {{"tensor", Role::kTensor}, {"scope", Role::kScope}, {"readers", Role::kReaders, 0}}},
      {"cache_write", "cache_write(stage, scope)", "computes a stage into a new stage STAGE_SCOPE, then copies it out",
       2, 2, apply_cache_write, {{"stage", Role::kStage}, {"scope", Role::kScope}}},
      {"storage_align", "storage_align(axis, factor, offset)", "pads the stride of a root axis to factor*k + offset", 3,
       3, apply_storage_align,
       {{"axis", Role::kRootAxis}, {"factor", Role::kInt, -1, "", 1, 16}, {"offset", Role::kInt, -1, "", 0, 1}}},
      {"set_scope", "set_scope(stage, scope)", "sets the memory scope an intermediate stage is stored in", 2, 2,
       apply_set_scope, {{"stage", Role::kInnerStage}, {"scope", Role::kScope}}},
      {"double_buffer", "double_buffer(stage)", "gives a compute_at stage two buffers used alternately", 1, 1,
       apply_double_buffer, {{"stage", Role::kStage}}},
      {"pragma", "pragma(axis, auto_unroll_max_step=N)",
       "annotates a loop (unroll inner loops of at most N iterations)", 2, 2, apply_pragma,
       {{"axis", Role::kAxis}, {"auto_unroll_max_step", Role::kInt, -1, "auto_unroll_max_step", 0, 16}}},
      {"prefetch", "prefetch(axis, tensor, ahead_axis, offset)",
       "in each iteration of a loop, fetches into cache what it reads of a tensor `offset` iterations of an outer "
       "loop later",
       4, 4, apply_prefetch,
       {{"axis", Role::kAxis}, {"tensor", Role::kTensor}, {"ahead loop", Role::kAxis}, {"offset", Role::kInt, -1, "", 1, 1}}},
      {"rfactor", "rfactor(reduction_axis)",
       "makes a reduction axis data-parallel in a new stage STAGE_rf, then reduces over it", 1, 1, apply_rfactor,
       {{"axis", Role::kReduceAxis}}},
      {"tensorize", "tensorize(axis, intrinsic)",
       "replaces the loop nest under a loop by a call of a declared tensor intrinsic", 2, 2, apply_tensorize,
       {{"axis", Role::kAxis}, {"intrinsic", Role::kIntrinsic}}},
  };
  return kinds;
}

}  // namespace tessel::schedule
