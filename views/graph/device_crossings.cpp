#include "views/graph/device_crossings.h"

#include <cstdio>

namespace tessel::views {

namespace {

std::string bytes_text(int64_t b) {
  char text[32];
  if (b < 1024)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(b));
  else if (b < 1024 * 1024)
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(b) / 1024);
  else
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(b) / (1024 * 1024));
  return text;
}

// Does edge `e` carry crossing `c`: into the copy's kernel, or out of the graph's input / into its output.
bool carries(const DisplayGraph& g, const DisplayEdge& e, const DeviceCrossing& c) {
  if (e.value != c.value) return false;
  if (c.kernel.empty()) {
    const DisplayNode& end = c.to_device ? g.nodes[static_cast<size_t>(e.from)] : g.nodes[static_cast<size_t>(e.to)];
    return end.kind == (c.to_device ? DisplayNode::Kind::kInput : DisplayNode::Kind::kOutput);
  }
  const int cluster = g.nodes[static_cast<size_t>(e.to)].cluster;
  return cluster >= 0 && g.clusters[static_cast<size_t>(cluster)].kernel_name == c.kernel;
}

}  // namespace

std::string DeviceCrossing::text() const {
  std::string s = std::string(to_device ? "host→device " : "device→host ") + bytes_text(bytes);
  if (!kernel.empty()) return s + ", for " + kernel;
  return s + (to_device ? ", the run's input" : ", the run's output");
}

std::vector<DeviceCrossing> device_crossings(const analysis::Profile& profile) {
  std::vector<DeviceCrossing> out;
  for (const compile::RunTimes::Copy& c : profile.last_run.copies) {
    DeviceCrossing d;
    d.value = c.value;
    if (c.kernel >= 0 && static_cast<size_t>(c.kernel) < profile.kernels.size())
      d.kernel = profile.kernels[static_cast<size_t>(c.kernel)].name;
    d.to_device = c.to_device;
    d.bytes = c.bytes;
    out.push_back(std::move(d));
  }
  return out;
}

std::map<int, std::vector<DeviceCrossing>> crossing_edges(const DisplayGraph& g,
                                                          const std::vector<DeviceCrossing>& crossings) {
  std::map<int, std::vector<DeviceCrossing>> marked;
  for (const DeviceCrossing& c : crossings) {
    bool found = false;
    for (size_t i = 0; i < g.edges.size(); ++i)
      if (carries(g, g.edges[i], c)) marked[static_cast<int>(i)].push_back(c), found = true;
    if (found) continue;
    for (size_t i = 0; i < g.edges.size(); ++i)
      if (g.edges[i].value == c.value) marked[static_cast<int>(i)].push_back(c);
  }
  return marked;
}

}  // namespace tessel::views
