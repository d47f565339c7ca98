#pragma once
// The graph as Graphviz DOT text, and DOT rendered to SVG through libgvc. Fusion groups become
// clusters named after their kernel; every edge is labelled with its tensor's type and layout;
// inserted layout transforms are highlighted.
//
//   ┌ fused_conv2d_nchwc_add_relu_1 ┐
//   │ conv2d_nchwc ─▶ Add ─▶ Relu    │ ── f32[1,1,8,8,16] NCHW16c ──▶ …
//   └───────────────────────────────┘
#include <mutex>
#include <string>
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

// A labelled box around some nodes. Fusion groups are made in core/graph/passes, a layer above
// this one, so they arrive as clusters: fusion_clusters (core/graph/passes/fusion_result.h) makes
// one per kernel.
struct DotCluster {
  std::string label;
  std::vector<NodeId> nodes;
};

// Nodes in no cluster are drawn outside them all. Constants are left out (weights would drown the
// picture); the nodes reading them say how many they read. Throws Error when a cluster names a
// node `g` does not have.
std::string graph_to_dot(const Graph& g, const std::vector<DotCluster>& clusters = {});

// Lays out `dot` with the dot engine and returns SVG text. Throws Error when Graphviz rejects it.
std::string render_svg(const std::string& dot);

// Graphviz is not thread-safe (not even with one context per thread): every libgvc/cgraph call in
// the process must hold this one lock.
std::mutex& graphviz_mutex();

}  // namespace tessel
