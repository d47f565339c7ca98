#pragma once
// Static memory planning: decides, before anything runs, where every intermediate tensor lives.
//
//   step:      0     1     2     3     4           storage blocks (best fit, reused when free)
//   t0 conv  ■■■■■■■■■■■                             block 0: t0 ........ t2 ..... t4
//   t1 relu        ■■■■■■■■■■■                       block 1:    t1 ........ t3
//   t2 conv              ■■■■■■■■■■■                  peak = |block 0| + |block 1|
//   t3 add                     ■■■■■■■■■■■            naive = |t0| + |t1| + |t2| + |t3| + |t4|
//   t4 relu (in place of t3)         ■■■■■
//
// 1. Execution order: the fusion groups in topological order (one step per kernel), or one step
//    per node when fusion did not run. Only values that cross steps (or are graph outputs) need
//    memory; a fused kernel's intermediates stay in registers/cache.
// 2. Liveness: a tensor is live from the step that produces it to the last step that reads it;
//    graph outputs live to the end.
// 3. Allocation in step order: tensors whose last use is before this step free their blocks. A
//    new tensor takes the smallest free block that fits (best fit); when none fits, the largest
//    free block grows; otherwise a new block is opened. Sizes are rounded up to `alignment`.
// 4. In place: an element-wise kernel (group pattern at most broadcast) writes its output over an
//    input of the same byte size whose last reader it is (not a graph input, constant or output).
// Blocks are laid end to end in one arena: peak_bytes is the arena size.
#include "core/graph/passes/pass_context.h"

namespace tessel {

// `fusion` may be null: each node is then its own step.
MemoryPlan plan_graph_memory(const Graph& g, const FusionResult* fusion, int64_t alignment = 64);

// The pipeline pass: stores the plan in ctx.memory_plan (using ctx.fusion); the graph is unchanged.
bool plan_memory(Graph& g, PassContext& ctx);

}  // namespace tessel
