// bench_passes: the full graph pipeline on a ResNet-50-sized graph (built here, weights random),
// median of repeats, printed beside one infer_types pass over the same graph measured in the same
// run (the machine's speed drifts; only the ratio is comparable between runs).
//
//   bench_passes [--repeats N] [--target SPEC]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "core/graph/op_table.h"
#include "core/graph/passes/pipeline.h"

using namespace tessel;

namespace {

class ResNetBuilder {
 public:
  Graph build() {
    ValueId x = g_.add_input("input", {DataType::kFloat32, {1, 3, 224, 224}});
    ValueId y = conv_bn(x, 3, 64, 7, 2, 3, true, "stem");
    y = node("MaxPool", {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
                         {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
             {y}, "stem_pool");
    int64_t channels = 64;
    const int blocks[] = {3, 4, 6, 3};
    for (int stage = 0; stage < 4; ++stage) {
      const int64_t width = 64 << stage;
      for (int b = 0; b < blocks[stage]; ++b) {
        const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
        y = bottleneck(y, channels, width, stride, "s" + std::to_string(stage) + "b" + std::to_string(b));
        channels = width * 4;
      }
    }
    y = node("GlobalAveragePool", {}, {y}, "gap");
    y = node("Flatten", {}, {y}, "flatten");
    ValueId w = weight("fc_w", {1000, channels}), b = weight("fc_b", {1000});
    y = node("Gemm", {{"transB", int64_t{1}}}, {y, w, b}, "fc");
    g_.outputs.push_back(y);
    infer_types(g_);
    return std::move(g_);
  }

 private:
  ValueId weight(const std::string& name, Shape shape) {
    Tensor t(DataType::kFloat32, std::move(shape));
    float* p = t.data<float>();
    std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng_);
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
    ValueId w = weight(name + "_w", {out, in, k, k});
    ValueId c = node("Conv", {{"strides", std::vector<int64_t>{stride, stride}},
                              {"pads", std::vector<int64_t>{pad, pad, pad, pad}}},
                     {x, w}, name + "_conv");
    ValueId bn = node("BatchNormalization", {},
                      {c, positive(name + "_scale", out), weight(name + "_shift", {out}), weight(name + "_mean", {out}),
                       positive(name + "_var", out)},
                      name + "_bn");
    return relu ? node("Relu", {}, {bn}, name + "_relu") : bn;
  }
  ValueId bottleneck(ValueId x, int64_t in, int64_t width, int64_t stride, const std::string& name) {
    ValueId y = conv_bn(x, in, width, 1, 1, 0, true, name + "_a");
    y = conv_bn(y, width, width, 3, stride, 1, true, name + "_b");
    y = conv_bn(y, width, width * 4, 1, 1, 0, false, name + "_c");
    ValueId shortcut = x;
    if (stride != 1 || in != width * 4) shortcut = conv_bn(x, in, width * 4, 1, stride, 0, false, name + "_down");
    ValueId sum = node("Add", {}, {y, shortcut}, name + "_add");
    return node("Relu", {}, {sum}, name + "_out");
  }

  Graph g_;
  std::mt19937 rng_{2024};
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  std::string target_spec = "ref";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--target") && i + 1 < argc) target_spec = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_passes [--repeats N] [--target SPEC]\n");
      return 2;
    }
  }
  try {
    const Target target = Target::parse(target_spec);
    GraphPtr graph = std::make_shared<const Graph>(ResNetBuilder().build());
    std::printf("graph: %zu nodes, %lld parameters; target: %s\n", graph->nodes.size(),
                static_cast<long long>(graph->parameter_count()), target.str().c_str());

    std::vector<double> pipeline_ms, infer_ms;
    GraphPipelineResult last;
    for (int r = 0; r < repeats; ++r) {
      Graph copy = *graph;
      auto t0 = std::chrono::steady_clock::now();
      infer_types(copy);
      infer_ms.push_back(ms_since(t0));
      t0 = std::chrono::steady_clock::now();
      last = run_graph_pipeline(graph, target);
      pipeline_ms.push_back(ms_since(t0));
      if (!last.ok()) throw Error(last.error);
    }
    const double p = median(pipeline_ms), ref = median(infer_ms);
    std::printf("full pipeline:          %9.2f ms (median of %d)\n", p, repeats);
    std::printf("reference infer_types:  %9.2f ms (median of %d, same run)\n", ref, repeats);
    std::printf("ratio pipeline/infer:   %9.2f\n", p / ref);
    std::printf("goal: pipeline < 200 ms -> %s\n", p < 200 ? "met" : "NOT met");
    std::printf("\nper pass (last run):\n");
    for (const PassRecordPtr& rec : last.records)
      std::printf("  %-32s %8.2f ms  %4d -> %4d nodes\n", rec->name.c_str(), rec->wall_ms, rec->nodes_before,
                  rec->nodes_after);
    std::printf("result: %zu nodes in %zu kernels; memory peak %.1f MiB vs naive %.1f MiB\n", last.graph->nodes.size(),
                last.fusion ? last.fusion->groups.size() : 0, last.memory_plan ? last.memory_plan->peak_bytes / 1048576.0 : 0,
                last.memory_plan ? last.memory_plan->naive_bytes / 1048576.0 : 0);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_passes: %s\n", e.what());
    return 1;
  }
  return 0;
}
