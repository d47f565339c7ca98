// Operator fusion; the algorithm is described with a diagram in fuse_ops.h.
#include "core/graph/passes/fuse_ops.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <queue>
#include <set>

#include "core/graph/export_dot.h"

namespace tessel {

std::string_view fusion_block_name(FusionBlock b) {
  switch (b) {
    case FusionBlock::kOpaqueProducer: return "opaque_producer";
    case FusionBlock::kOpaqueConsumer: return "opaque_consumer";
    case FusionBlock::kExternalOutput: return "external_output";
    case FusionBlock::kNoPostDominator: return "no_post_dominator";
    case FusionBlock::kNotPostDominator: return "not_post_dominator";
    case FusionBlock::kComplexEdgeNotElemWise: return "complex_edge_not_elemwise";
    case FusionBlock::kPathTooComplex: return "path_too_complex";
    case FusionBlock::kReductionSource: return "reduction_source";
    case FusionBlock::kTwoComplexGroups: return "two_complex_groups";
    case FusionBlock::kMaxDepth: return "max_depth";
    case FusionBlock::kMaxArguments: return "max_arguments";
    case FusionBlock::kTupleIntoTuple: return "tuple_into_tuple";
  }
  return "?";
}

std::string_view fusion_block_reason(FusionBlock b) {
  switch (b) {
    case FusionBlock::kOpaqueProducer: return "the producer is opaque: it fuses with nothing";
    case FusionBlock::kOpaqueConsumer: return "the consumer is opaque: it fuses with nothing";
    case FusionBlock::kExternalOutput: return "the producer's result is also a graph output, so it must be stored";
    case FusionBlock::kNoPostDominator: return "the producer's uses do not meet again in a single node";
    case FusionBlock::kNotPostDominator:
      return "the consumer is not where all of the producer's uses meet (its immediate post-dominator)";
    case FusionBlock::kComplexEdgeNotElemWise:
      return "a conv/dense group only absorbs consumers reached through element-wise edges";
    case FusionBlock::kPathTooComplex:
      return "a node between the producer and its post-dominator is too complex to join the group";
    case FusionBlock::kReductionSource: return "a reduction never fuses into its consumers; it only absorbs producers";
    case FusionBlock::kTwoComplexGroups:
      return "both sides hold a complex op (conv, dense, pooling, reduction): a kernel has one anchor";
    case FusionBlock::kMaxDepth: return "the fused group would exceed the maximum number of nodes per kernel";
    case FusionBlock::kMaxArguments: return "the fused kernel would exceed the maximum number of arguments";
    case FusionBlock::kTupleIntoTuple: return "two intermediate tuples never fuse";
  }
  return "?";
}

std::vector<DotCluster> fusion_clusters(const Graph& g, const FusionResult* fusion) {
  std::vector<DotCluster> clusters;
  if (!fusion || fusion->group_of_node.size() != g.nodes.size()) return clusters;
  for (const FusionGroup& group : fusion->groups) clusters.push_back({group.kernel_name, group.nodes});
  return clusters;
}

std::string kernel_op_word(const Graph& g, const Node& n) {
  const std::string& op = n.op->name;
  if (op == "Conv" && !n.outputs.empty()) {
    size_t rank = g.value(n.outputs[0]).type.shape.size();
    return rank >= 3 ? "conv" + std::to_string(rank - 2) + "d" : "conv";
  }
  if (op == "Gemm") return "dense";
  std::string out;
  for (size_t i = 0; i < op.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(op[i]);
    if (std::isupper(c)) {
      const bool after_lower = i > 0 && std::islower(static_cast<unsigned char>(op[i - 1]));
      const bool before_lower = i + 1 < op.size() && std::islower(static_cast<unsigned char>(op[i + 1])) && i > 0 &&
                                std::isupper(static_cast<unsigned char>(op[i - 1]));
      if (after_lower || before_lower) out += '_';
      out += static_cast<char>(std::tolower(c));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

// A group's anchor kind: reductions and conv/dense. A kernel holds at most one of them.
bool is_complex(PatternKind k) { return k >= PatternKind::kCommReduce && k != PatternKind::kTuple; }

class Fuser {
 public:
  Fuser(const Graph& g, int max_depth, int max_arguments)
      : g_(g), max_depth_(max_depth), max_arguments_(max_arguments), n_(static_cast<int>(g.nodes.size())) {}

  FusionResult run() {
    build_edges();
    build_post_dominators();
    parent_.resize(n_);
    root_pattern_.resize(n_);
    members_.resize(n_);
    anchor_.resize(n_);
    failure_.assign(n_, std::nullopt);
    for (int i = 0; i < n_; ++i) {
      parent_[i] = i;
      root_pattern_[i] = g_.nodes[i].op->pattern;
      members_[i] = {i};
      anchor_[i] = i;
    }
    for (int phase = 0; phase < 3; ++phase)
      for (int i = 0; i < n_; ++i) try_fuse(i, phase);
    return collect();
  }

 private:
  // ---- dataflow edges (node level) ----
  void build_edges() {
    consumers_.assign(n_, {});
    external_.assign(n_, false);
    std::vector<bool> is_output(g_.values.size(), false);
    for (ValueId v : g_.outputs) is_output[v] = true;
    for (int c = 0; c < n_; ++c)
      for (ValueId v : g_.nodes[c].inputs) {
        if (v == kNoValue) continue;
        NodeId p = g_.value(v).producer;
        if (p < 0) continue;
        auto& list = consumers_[p];
        if (std::find(list.begin(), list.end(), c) == list.end()) list.push_back(c);
      }
    for (int p = 0; p < n_; ++p)
      for (ValueId v : g_.nodes[p].outputs) external_[p] = external_[p] || is_output[v];
  }

  // ---- post-dominator tree ----
  void build_post_dominators() {
    dom_parent_.assign(n_, -1);
    dom_depth_.assign(n_, 0);
    edge_pattern_.assign(n_, PatternKind::kOpaque);
    for (int i = n_; i-- > 0;) {
      if (external_[i] || consumers_[i].empty()) {
        dom_depth_[i] = 1;
        continue;
      }
      int lca = consumers_[i][0];
      PatternKind edge = PatternKind::kElemWise;
      for (int c : consumers_[i]) {
        lca = lca < 0 ? -1 : common_ancestor(lca, c);
        edge = std::max(edge, edge_pattern(i, c));
      }
      dom_parent_[i] = lca;
      dom_depth_[i] = lca < 0 ? 1 : dom_depth_[lca] + 1;
      edge_pattern_[i] = edge;
    }
  }

  // The consumer's pattern, except that a broadcast op reading a tensor of its own output shape
  // (the conv result in conv + bias) is element-wise along that edge.
  PatternKind edge_pattern(int producer, int consumer) const {
    const Node& c = g_.nodes[consumer];
    PatternKind k = c.op->pattern;
    if (k != PatternKind::kBroadcast || c.outputs.empty()) return k;
    const Shape& out = g_.value(c.outputs[0]).type.shape;
    for (ValueId v : c.inputs)
      if (v != kNoValue && g_.value(v).producer == producer && g_.value(v).type.shape != out) return k;
    return PatternKind::kElemWise;
  }

  int common_ancestor(int a, int b) const {
    while (a != b) {
      if (a < 0 || b < 0) return -1;
      if (dom_depth_[a] < dom_depth_[b]) std::swap(a, b);
      a = dom_parent_[a];
    }
    return a;
  }

  // ---- union-find ----
  int find(int i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }

  // Nodes on every path from src (exclusive) to sink (inclusive). Returns false when some path
  // leaves without reaching sink (cannot happen for a true post-dominator, kept as a guard).
  bool path_nodes(int src, int sink, std::vector<int>& out) const {
    std::vector<bool> seen(n_, false);
    std::vector<int> stack(consumers_[src].begin(), consumers_[src].end());
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      if (seen[x]) continue;
      seen[x] = true;
      out.push_back(x);
      if (x == sink) continue;
      if (consumers_[x].empty()) return false;
      stack.insert(stack.end(), consumers_[x].begin(), consumers_[x].end());
    }
    return true;
  }

  // The rule that blocks fusing src into sink given the path condition, or nothing.
  std::optional<FusionBlock> check_path(int src, int sink, PatternKind max_inner, bool sink_any_fusable,
                                        std::vector<int>& groups) {
    std::vector<int> path;
    if (!path_nodes(src, sink, path)) return FusionBlock::kNoPostDominator;
    for (int x : path) {
      const PatternKind k = root_pattern_[find(x)];
      if (x == sink) {
        const bool ok = sink_any_fusable ? (k <= PatternKind::kOutEWiseFusable) : k <= max_inner;
        if (!ok) return k == PatternKind::kOpaque ? FusionBlock::kOpaqueConsumer : FusionBlock::kPathTooComplex;
      } else if (k > max_inner) {
        return k == PatternKind::kOpaque ? FusionBlock::kOpaqueConsumer : FusionBlock::kPathTooComplex;
      }
    }
    std::set<int> roots{find(src)};
    for (int x : path) roots.insert(find(x));
    groups.assign(roots.begin(), roots.end());
    int complex_groups = 0;
    size_t total = 0;
    std::set<int> merged;
    for (int r : groups) {
      complex_groups += is_complex(root_pattern_[r]);
      total += members_[r].size();
      merged.insert(members_[r].begin(), members_[r].end());
    }
    if (complex_groups > 1) return FusionBlock::kTwoComplexGroups;
    if (static_cast<int>(total) > max_depth_) return FusionBlock::kMaxDepth;
    if (argument_count(merged) > max_arguments_) return FusionBlock::kMaxArguments;
    return std::nullopt;
  }

  int argument_count(const std::set<int>& nodes) const {
    std::set<ValueId> inputs, outputs;
    for (int n : nodes) {
      for (ValueId v : g_.nodes[n].inputs)
        if (v != kNoValue && !nodes.count(g_.value(v).producer)) inputs.insert(v);
      for (ValueId v : g_.nodes[n].outputs) {
        bool escapes = std::find(g_.outputs.begin(), g_.outputs.end(), v) != g_.outputs.end();
        for (int c : consumers_[n])
          if (!nodes.count(c)) escapes = true;
        if (escapes) outputs.insert(v);
      }
    }
    return static_cast<int>(inputs.size() + outputs.size());
  }

  void commit(const std::vector<int>& groups, int sink) {
    int target = find(sink);
    for (int r : groups) {
      if (r == target) continue;
      parent_[r] = target;
      members_[target].insert(members_[target].end(), members_[r].begin(), members_[r].end());
      members_[r].clear();
      if (root_pattern_[r] > root_pattern_[target]) {
        root_pattern_[target] = root_pattern_[r];
        anchor_[target] = anchor_[r];
      }
    }
  }

  void try_fuse(int i, int phase) {
    const PatternKind own = g_.nodes[i].op->pattern;
    if (own == PatternKind::kOpaque) {
      failure_[i] = FusionBlock::kOpaqueProducer;
      return;
    }
    if (external_[i]) {
      failure_[i] = FusionBlock::kExternalOutput;
      return;
    }
    const int dom = dom_parent_[i];
    if (dom < 0) {
      failure_[i] = FusionBlock::kNoPostDominator;
      return;
    }
    if (find(i) == find(dom)) return;
    const PatternKind source = root_pattern_[find(i)];
    const PatternKind edge = edge_pattern_[i];
    std::vector<int> groups;
    std::optional<FusionBlock> blocked;

    if (phase == 2) {
      // Injective nodes join an intermediate tuple that itself fused into injective consumers.
      if (source > PatternKind::kInjective) return;
      const bool dom_is_tuple = g_.nodes[dom].op->pattern == PatternKind::kTuple;
      const PatternKind dom_group = root_pattern_[find(dom)];
      if (!dom_is_tuple) return;
      if (dom_group == PatternKind::kTuple) {
        failure_[i] = FusionBlock::kTupleIntoTuple;
        return;
      }
      if (dom_group > PatternKind::kInjective) return;
      blocked = check_path(i, dom, PatternKind::kInjective, false, groups);
    } else {
      if (g_.nodes[dom].op->pattern == PatternKind::kTuple) return;  // tuples are handled in phase 2
      if (edge == PatternKind::kOpaque) {
        failure_[i] = FusionBlock::kOpaqueConsumer;
        return;
      }
      if (source == PatternKind::kOutEWiseFusable) {
        if (phase != 0) return;
        if (edge != PatternKind::kElemWise) {
          failure_[i] = is_complex(edge) ? FusionBlock::kTwoComplexGroups : FusionBlock::kComplexEdgeNotElemWise;
          return;
        }
        blocked = check_path(i, dom, PatternKind::kBroadcast, false, groups);
      } else if (source <= PatternKind::kBroadcast) {
        if (!(edge <= PatternKind::kInjective || edge == PatternKind::kCommReduce)) {
          failure_[i] = FusionBlock::kPathTooComplex;  // e.g. an element-wise op feeding a conv's input
          return;
        }
        blocked = check_path(i, dom, PatternKind::kInjective, true, groups);
      } else if (source == PatternKind::kInjective || source == PatternKind::kTuple) {
        if (phase != 1) return;
        blocked = check_path(i, dom, PatternKind::kInjective, false, groups);
      } else {
        failure_[i] = FusionBlock::kReductionSource;
        return;
      }
    }
    if (blocked) {
      failure_[i] = blocked;
      return;
    }
    failure_[i] = std::nullopt;
    commit(groups, dom);
  }

  // ---- result ----
  FusionResult collect() {
    FusionResult r;
    r.max_depth = max_depth_;
    r.group_of_node.assign(n_, -1);
    // Groups in a topological order of the group graph, ties broken by first member.
    std::vector<int> roots;
    for (int i = 0; i < n_; ++i)
      if (find(i) == i) roots.push_back(i);
    std::vector<int> root_index(n_, -1);
    for (size_t k = 0; k < roots.size(); ++k) {
      root_index[roots[k]] = static_cast<int>(k);
      std::sort(members_[roots[k]].begin(), members_[roots[k]].end());
    }
    std::vector<std::set<int>> succ(roots.size());
    std::vector<int> pending(roots.size(), 0);
    for (int p = 0; p < n_; ++p)
      for (int c : consumers_[p]) {
        int a = root_index[find(p)], b = root_index[find(c)];
        if (a != b && succ[a].insert(b).second) ++pending[b];
      }
    auto first_member = [&](int k) { return members_[roots[k]].front(); };
    auto later = [&](int a, int b) { return first_member(a) > first_member(b); };
    std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
    for (size_t k = 0; k < roots.size(); ++k)
      if (pending[k] == 0) ready.push(static_cast<int>(k));
    std::vector<bool> is_output(g_.values.size(), false);
    for (ValueId v : g_.outputs) is_output[v] = true;
    while (!ready.empty()) {
      int k = ready.top();
      ready.pop();
      for (int s : succ[k])
        if (--pending[s] == 0) ready.push(s);
      const int root = roots[k];
      FusionGroup grp;
      grp.id = static_cast<int>(r.groups.size());
      grp.nodes = members_[root];
      grp.pattern = root_pattern_[root];
      // The complex member (conv of conv+bias+relu); for simple groups the last member.
      grp.anchor = grp.pattern > PatternKind::kBroadcast ? anchor_[root] : grp.nodes.back();
      std::string name = "fused";
      const size_t max_words = 6;
      for (size_t m = 0; m < grp.nodes.size() && m < max_words; ++m) name += "_" + kernel_op_word(g_, g_.nodes[grp.nodes[m]]);
      if (grp.nodes.size() > max_words) name += "_and_" + std::to_string(grp.nodes.size() - max_words) + "_more";
      grp.kernel_name = name + "_" + std::to_string(grp.id);
      for (NodeId n : grp.nodes) r.group_of_node[n] = grp.id;
      r.groups.push_back(std::move(grp));
    }
    for (FusionGroup& grp : r.groups) {
      std::set<NodeId> member(grp.nodes.begin(), grp.nodes.end());
      for (NodeId n : grp.nodes) {
        for (ValueId v : g_.nodes[n].inputs)
          if (v != kNoValue && !member.count(g_.value(v).producer) &&
              std::find(grp.inputs.begin(), grp.inputs.end(), v) == grp.inputs.end())
            grp.inputs.push_back(v);
      }
      for (NodeId n : grp.nodes)
        for (ValueId v : g_.nodes[n].outputs) {
          bool escapes = is_output[v];
          for (int c : consumers_[n])
            if (!member.count(c))
              for (ValueId in : g_.nodes[c].inputs) escapes = escapes || in == v;
          if (escapes) grp.outputs.push_back(v);
        }
    }
    for (int c = 0; c < n_; ++c)
      for (ValueId v : g_.nodes[c].inputs) {
        if (v == kNoValue) continue;
        const NodeId p = g_.value(v).producer;
        if (p < 0 || r.group_of_node[p] == r.group_of_node[c]) continue;
        bool dup = false;
        for (const UnfusedEdge& e : r.unfused_edges) dup = dup || (e.producer == p && e.consumer == c && e.value == v);
        if (!dup) r.unfused_edges.push_back({p, c, v, edge_reason(p, c)});
      }
    return r;
  }

  FusionBlock edge_reason(int p, int c) {
    if (g_.nodes[p].op->pattern == PatternKind::kOpaque) return FusionBlock::kOpaqueProducer;
    if (g_.nodes[c].op->pattern == PatternKind::kOpaque) return FusionBlock::kOpaqueConsumer;
    if (is_complex(root_pattern_[find(p)]) && is_complex(root_pattern_[find(c)]))
      return FusionBlock::kTwoComplexGroups;
    if (failure_[p]) return *failure_[p];
    return FusionBlock::kNotPostDominator;
  }

  const Graph& g_;
  int max_depth_, max_arguments_, n_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> external_;
  std::vector<int> dom_parent_, dom_depth_;
  std::vector<PatternKind> edge_pattern_;
  std::vector<int> parent_;
  std::vector<PatternKind> root_pattern_;
  std::vector<std::vector<int>> members_;
  std::vector<int> anchor_;
  std::vector<std::optional<FusionBlock>> failure_;
};

}  // namespace

FusionResult fuse_graph(const Graph& g, int max_depth, int max_arguments) {
  if (max_depth < 1) throw Error("max_fusion_depth must be at least 1, got " + std::to_string(max_depth));
  if (max_arguments < 2) throw Error("max_kernel_arguments must be at least 2, got " + std::to_string(max_arguments));
  return Fuser(g, max_depth, max_arguments).run();
}

bool fuse_ops(Graph& g, PassContext& ctx) {
  ctx.fusion = std::make_shared<const FusionResult>(
      fuse_graph(g, ctx.options.max_fusion_depth, ctx.options.max_kernel_arguments));
  return false;
}

}  // namespace tessel
