#pragma once
// Operator fusion: partitions the nodes into groups, each of which becomes one kernel.
//
// How (TVM's post-dominator algorithm, driven by each op's PatternKind):
//
//      conv ──▶ add(bias) ──▶ relu ──┬──▶ conv ──▶ add ──▶ relu      post-dominator tree:
//                                    └──────────────────▶─┘          each node's parent is the first
//   ╔══════════════ group 0 ═════════╗  ╔═══════ group 1 ════════╗   node every path from it must
//   ║ conv ▶ add ▶ relu  (anchor conv)║  ║ conv ▶ add ▶ relu       ║   pass; fusing a node into its
//   ╚════════════════════════════════╝  ╚════════════════════════╝   post-dominator swallows every
//                         relu₀ → conv₁ blocked: two complex ops      path in between (so groups stay
//                                                                     convex and run as one kernel)
//
// 1. Build the post-dominator tree over the dataflow graph (a node whose result is a graph output
//    has none). A node's pattern toward its post-dominator is the max over its out-edges, where an
//    edge's pattern is its consumer's op pattern (a broadcast reading a tensor of its own output
//    shape counts as element-wise on that edge: conv → Add(bias)).
// 2. Each node starts as its own group (union-find). Phase 0: a conv/dense (out-element-wise
//    fusable) group fuses into its post-dominator when that edge is element-wise and every node on
//    the way is at most broadcast; element-wise/broadcast nodes fuse into a post-dominator reached
//    through an edge at most injective or a reduction, with injective nodes in between.
//    Phase 1: the same for element-wise/broadcast and also injective/tuple nodes (after conv
//    epilogues are settled). Phase 2: injective nodes fuse into an intermediate tuple already
//    fused into injective consumers. Reductions never fuse forward; opaque nodes never fuse.
// 3. A fusion is refused when the merged group would exceed `max_fusion_depth` nodes or
//    `max_kernel_arguments` inputs + outputs, or would hold two complex anchors.
// Every edge left between groups records the rule that stopped it (FusionBlock).
//
// The graph itself is not changed: the result is data (FusionResult) the later stages and the
// studio read; the reference executor still runs the graph node by node.
#include "core/graph/passes/pass_context.h"

namespace tessel {

FusionResult fuse_graph(const Graph& g, int max_depth = 256, int max_arguments = 64);

// The pipeline pass: stores the result in ctx.fusion; the graph is unchanged (returns false).
bool fuse_ops(Graph& g, PassContext& ctx);

// "conv2d" for a 2-D Conv, "dense" for Gemm, snake_case of the op name otherwise: the words of
// kernel names such as fused_conv2d_add_relu_3.
std::string kernel_op_word(const Graph& g, const Node& n);

}  // namespace tessel
