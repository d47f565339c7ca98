#pragma once
// ResNet-sized graphs for the benchmarks, built in C++ with random weights (no model files to ship):
//
//   resnet_graph(18): 7x7 stem, four stages of two basic blocks (3x3 + 3x3), 11.7 M parameters
//   resnet_graph(50): 7x7 stem, stages of 3/4/6/3 bottlenecks (1x1 → 3x3 → 1x1, 4x wide), 25.6 M
//
// Every conv is followed by a BatchNormalization (folded by the graph passes, as in exported
// models); a projection shortcut where the shape changes; global pooling and a 1000-way Gemm.
#include <random>
#include <string>

#include "core/graph/graph.h"
#include "core/graph/op_table.h"

namespace tessel::bench {

class ResNetGraphBuilder {
 public:
  explicit ResNetGraphBuilder(int depth) : depth_(depth), rng_(static_cast<unsigned>(depth) * 97 + 2018) {}

  Graph build() {
    const bool bottlenecks = depth_ >= 50;
    const int blocks18[] = {2, 2, 2, 2}, blocks50[] = {3, 4, 6, 3};
    const int* blocks = bottlenecks ? blocks50 : blocks18;
    ValueId x = g_.add_input("input", {DataType::kFloat32, {1, 3, 224, 224}});
    ValueId y = conv_bn(x, 3, 64, 7, 2, 3, true, "stem");
    y = node("MaxPool",
             {{"kernel_shape", std::vector<int64_t>{3, 3}},
              {"strides", std::vector<int64_t>{2, 2}},
              {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
             {y}, "stem_pool");
    int64_t channels = 64;
    for (int stage = 0; stage < 4; ++stage) {
      const int64_t width = 64 << stage;
      for (int b = 0; b < blocks[stage]; ++b) {
        const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
        const std::string name = "s" + std::to_string(stage) + "b" + std::to_string(b);
        y = bottlenecks ? bottleneck(y, channels, width, stride, name) : basic_block(y, channels, width, stride, name);
        channels = bottlenecks ? width * 4 : width;
      }
    }
    y = node("GlobalAveragePool", {}, {y}, "gap");
    y = node("Flatten", {}, {y}, "flatten");
    y = node("Gemm", {{"transB", int64_t{1}}}, {y, weight("fc_w", {1000, channels}), weight("fc_b", {1000})}, "fc");
    g_.outputs.push_back(y);
    infer_types(g_);
    return std::move(g_);
  }

 private:
  ValueId weight(const std::string& name, Shape shape) {
    Tensor t(DataType::kFloat32, std::move(shape));
    std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng_);
    return g_.add_constant(name, t);
  }
  ValueId positive(const std::string& name, int64_t n) {
    Tensor t(DataType::kFloat32, {n});
    for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = 0.5f + static_cast<float>(i % 7) * 0.1f;
    return g_.add_constant(name, t);
  }
  ValueId node(const char* op, AttrMap attrs, std::vector<ValueId> inputs, const std::string& name) {
    const OpDef& def = get_op(op);
    return g_.add_node1(name, def, def.parse_attrs(op, attrs), std::move(inputs));
  }
  ValueId conv_bn(ValueId x, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool relu,
                  const std::string& name) {
    ValueId c = node(
        "Conv", {{"strides", std::vector<int64_t>{stride, stride}}, {"pads", std::vector<int64_t>{pad, pad, pad, pad}}},
        {x, weight(name + "_w", {out, in, k, k})}, name + "_conv");
    ValueId bn = node("BatchNormalization", {},
                      {c, positive(name + "_scale", out), weight(name + "_shift", {out}), weight(name + "_mean", {out}),
                       positive(name + "_var", out)},
                      name + "_bn");
    return relu ? node("Relu", {}, {bn}, name + "_relu") : bn;
  }
  ValueId residual(ValueId y, ValueId shortcut, const std::string& name) {
    return node("Relu", {}, {node("Add", {}, {y, shortcut}, name + "_add")}, name + "_out");
  }
  ValueId basic_block(ValueId x, int64_t in, int64_t width, int64_t stride, const std::string& name) {
    ValueId y = conv_bn(x, in, width, 3, stride, 1, true, name + "_a");
    y = conv_bn(y, width, width, 3, 1, 1, false, name + "_b");
    ValueId shortcut = (stride != 1 || in != width) ? conv_bn(x, in, width, 1, stride, 0, false, name + "_down") : x;
    return residual(y, shortcut, name);
  }
  ValueId bottleneck(ValueId x, int64_t in, int64_t width, int64_t stride, const std::string& name) {
    ValueId y = conv_bn(x, in, width, 1, 1, 0, true, name + "_a");
    y = conv_bn(y, width, width, 3, stride, 1, true, name + "_b");
    y = conv_bn(y, width, width * 4, 1, 1, 0, false, name + "_c");
    ValueId shortcut =
        (stride != 1 || in != width * 4) ? conv_bn(x, in, width * 4, 1, stride, 0, false, name + "_down") : x;
    return residual(y, shortcut, name);
  }

  int depth_;
  Graph g_;
  std::mt19937 rng_;
};

inline Graph resnet_graph(int depth) { return ResNetGraphBuilder(depth).build(); }

}  // namespace tessel::bench
