#pragma once
// Host↔device edges: where a model running on a device whose memory is not the host's (opencl)
// moves data between the two, read from the copies of a profiled run (compile::RunTimes::copies,
// core/compile/device_run.h). A group without a device kernel runs on the reference kernels on the
// host, so its inputs cross to the host and what it makes crosses back:
//
//   x ══▶ [Mul Relu] ─r═▶ [Det] (host: reference kernels) ─d═▶ [Exp Add] ─s═▶ output
//   the run's input      device→host                    host→device         the run's output
//
// A copy names its value and the kernel it was made for (its reader); it marks the edges of that
// value into that kernel's group, or, for the run's own inputs and outputs, the edges leaving the
// graph's input node or reaching its output node. Where the graph shown has no such group (an
// earlier pass), every edge of the value is marked. Qt-free.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/analysis/profile.h"
#include "views/graph/display_graph.h"

namespace tessel::views {

struct DeviceCrossing {
  std::string value;
  std::string kernel;  // the kernel the copy was made for; empty: the run's inputs and outputs
  bool to_device = true;
  int64_t bytes = 0;
  // "host→device 72 B, for fused_exp_add_2" / "device→host 8 B, the run's output"
  std::string text() const;
};

// The copies of the profile's last run; empty for a target whose kernels use host memory.
std::vector<DeviceCrossing> device_crossings(const analysis::Profile& profile);

// Edge index in `g` → the crossings drawn on it.
std::map<int, std::vector<DeviceCrossing>> crossing_edges(const DisplayGraph& g,
                                                          const std::vector<DeviceCrossing>& crossings);

}  // namespace tessel::views
