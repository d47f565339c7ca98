#include "core/graph/passes/winograd_convs.h"

#include <optional>

#include "core/graph/layout.h"
#include "core/graph/op_table.h"
#include "core/graph/ops/layout_ops.h"
#include "core/graph/ops/nn_spatial.h"
#include "core/graph/ops/winograd_ops.h"
#include "core/graph/passes/graph_rewrite.h"
#include "core/graph/passes/transform_layout.h"

namespace tessel {

namespace {

constexpr int64_t kMinChannels = 16;
constexpr int64_t kMaxWeightBytes = int64_t{16} << 20;
constexpr double kMaxTileWaste = 1.25;

double tile_waste(int64_t oh, int64_t ow, int64_t m) {
  return static_cast<double>(ops::winograd_tiles(oh, m) * m * ops::winograd_tiles(ow, m) * m) /
         static_cast<double>(oh * ow);
}

// The tile side for this output, or 0 when neither fits the waste bound.
int64_t choose_tile(int64_t oh, int64_t ow) {
  for (int64_t m : {4, 2})
    if (oh >= m && ow >= m && tile_waste(oh, ow, m) <= kMaxTileWaste) return m;
  return 0;
}

bool all_ones(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != 1) return false;
  return true;
}

struct Plan {
  int64_t tile = 0;
  ops::nn::WindowGeometry geo;
  Tensor plain_weights;  // OIHW
};

// Whether conv2d_nchwc node `n` becomes Winograd, and with what.
std::optional<Plan> plan_for(const Graph& g, const Node& n) {
  const auto& a = attrs_as<ops::Conv2dNchwcAttrs>(n.attrs);
  if (a.conv.group != 1 || !all_ones(a.conv.strides) || !all_ones(a.conv.dilations)) return std::nullopt;
  const ValueId x = n.inputs[0], w = n.inputs[1];
  if (!g.is_constant(w) || g.value(w).type.dtype != DataType::kFloat32) return std::nullopt;
  const Shape& xs = g.value(x).type.shape;  // [N, C/b, H, W, b]
  const Shape& ws = g.value(w).type.shape;  // [K/o, C/i, R, S, i, o]
  if (xs.size() != 5 || ws.size() != 6 || ws[2] != 3 || ws[3] != 3) return std::nullopt;
  const int64_t in_channels = xs[1] * xs[4], out_channels = ws[0] * ws[5];
  if (in_channels < kMinChannels || out_channels < kMinChannels) return std::nullopt;
  Plan p;
  p.geo = ops::nn::resolve_window("Conv", {xs[2], xs[3]}, {3, 3},
                                  {.auto_pad = a.conv.auto_pad, .strides = a.conv.strides,
                                   .dilations = a.conv.dilations, .pads = a.conv.pads, .ceil_mode = false});
  if (p.geo.pad_begin[0] > 2 || p.geo.pad_begin[1] > 2 || p.geo.pad_end[0] > 2 || p.geo.pad_end[1] > 2)
    return std::nullopt;
  p.tile = choose_tile(p.geo.output[0], p.geo.output[1]);
  if (p.tile == 0) return std::nullopt;
  const int64_t side = p.tile + 2;
  if (side * side * in_channels * out_channels * 4 > kMaxWeightBytes) return std::nullopt;
  p.plain_weights = convert_layout(g.value(w).value, Layout(a.kernel_layout), Layout("OIHW"));
  return p;
}

}  // namespace

bool winograd_convs(Graph& g, PassContext&) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool changed = false;
  const size_t original_nodes = g.nodes.size();
  for (size_t id = 0; id < original_nodes; ++id) {
    if (g.nodes[id].op->name != "conv2d_nchwc") continue;
    const std::optional<Plan> plan = plan_for(g, g.nodes[id]);
    if (!plan) continue;
    const Node n = g.nodes[id];  // a copy: add_node grows g.nodes
    const auto& a = attrs_as<ops::Conv2dNchwcAttrs>(n.attrs);
    const int64_t oh = plan->geo.output[0], ow = plan->geo.output[1];

    ops::WinogradInputAttrs in_attrs;
    in_attrs.tile = plan->tile;
    in_attrs.pad_top = plan->geo.pad_begin[0];
    in_attrs.pad_left = plan->geo.pad_begin[1];
    in_attrs.out_height = oh;
    in_attrs.out_width = ow;
    const ValueId v = g.add_node1(g.unique_name(n.name + "_winograd_in"), get_op("winograd_input_transform"),
                                  make_attrs(in_attrs), {n.inputs[0]});
    const ValueId u = g.add_constant(g.unique_name(g.value(n.inputs[1]).name + "_winograd"),
                                     ops::winograd_weights(plan->plain_weights, plan->tile));
    const ValueId m = g.add_node1(g.unique_name(n.name + "_winograd_products"), get_op("MatMul"), make_attrs(NoAttrs{}),
                                  {v, u});
    ops::WinogradOutputAttrs out_attrs;
    out_attrs.tile = plan->tile;
    out_attrs.out_height = oh;
    out_attrs.out_width = ow;
    out_attrs.block = Layout(a.out_layout).factor('C');
    std::vector<ValueId> inputs = {m};
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) inputs.push_back(n.inputs[2]);
    const ValueId y = g.add_node1(g.unique_name(n.name + "_winograd_out"), get_op("winograd_output_transform"),
                                  make_attrs(out_attrs), inputs);
    for (ValueId plain : {v, u, m}) g.value(plain).layout = default_layout(3);
    g.value(y).layout = a.out_layout;
    // The conv's type, as a later conv planned in this loop reads it; infer_types below checks it
    // and types the values in between.
    g.value(y).type = g.value(n.outputs[0]).type;
    replace_uses(g, n.outputs[0], y);
    dead[id] = true;
    changed = true;
  }
  if (!changed) return false;
  compact(g, dead);  // the new nodes were appended: back to topological order first
  infer_types(g);
  return true;
}

}  // namespace tessel
