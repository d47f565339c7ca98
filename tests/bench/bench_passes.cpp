// bench_passes: the full graph pipeline on a ResNet-50-sized graph (built here, weights random),
// median of repeats, printed beside one infer_types pass over the same graph measured in the same
// run (the machine's speed drifts; only the ratio is comparable between runs).
//
//   bench_passes [--repeats N] [--target SPEC]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/graph/op_table.h"
#include "tests/bench/resnet_graph.h"
#include "core/graph/passes/pipeline.h"

using namespace tessel;

namespace {

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
    GraphPtr graph = std::make_shared<const Graph>(bench::resnet_graph(50));
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
    for (const StepRecordPtr& rec : last.records)
      std::printf("  %-32s %8.2f ms  %4d -> %4d nodes\n", rec->name.c_str(), rec->wall_ms, nodes_before(*rec),
                  nodes_after(*rec));
    std::printf("result: %zu nodes in %zu kernels; memory peak %.1f MiB vs naive %.1f MiB\n", last.graph->nodes.size(),
                last.fusion ? last.fusion->groups.size() : 0, last.memory_plan ? last.memory_plan->peak_bytes / 1048576.0 : 0,
                last.memory_plan ? last.memory_plan->naive_bytes / 1048576.0 : 0);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_passes: %s\n", e.what());
    return 1;
  }
  return 0;
}
