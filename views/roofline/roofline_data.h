#pragma once
// What the roofline chart draws, computed without Qt: one point per kernel that does arithmetic
// (a kernel with no FLOPs — a layout transform, a reshape — has no place on a log-log FLOP/byte
// axis and is listed instead), the ceilings as segments, and the axis ranges.
//
//   GFLOP/s (log)                       compute ceiling k: y = peak_k        (horizontal)
//      ▲          ______________ fma_512                     for x ≥ ridge_k
//      │         / ·K2                  bandwidth ceiling b: y = bw_b · x  (slope 1 in log-log)
//      │   dram /   ______________ fma_256                   up to the highest compute ceiling
//      │       /  ·K1
//      └─────────────────────▶ FLOP/byte (log)    ridge = peak / dram bandwidth
//
// Usage:
//   RooflineData d = roofline_from_profile(profile, ceilings);
//   for (const RooflinePoint& p : d.points) plot(p.intensity, p.gflops);
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/accel_roofline.h"
#include "core/analysis/calibrate.h"
#include "core/analysis/profile.h"
#include "views/common/kernel_results.h"

namespace tessel::views {

struct RooflinePoint {
  std::string kernel;
  double intensity = 0;          // FLOP per byte moved
  double gflops = 0;             // achieved, at the median time (views/common/kernel_time.h)
  double attainable_gflops = 0;  // the roof at this intensity; 0 without ceilings
  std::string bound;             // "compute (fma_512)" / "memory (dram)"; empty without ceilings
  std::string time;              // KernelTime::text() of the measurement
  double percent_of_attainable() const { return attainable_gflops > 0 ? 100 * gflops / attainable_gflops : 0; }
};

struct CeilingSegment {
  std::string label;  // "fma_512 256 GFLOP/s", "dram 28 GB/s"
  bool is_compute = true;
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

struct AxisRange {
  double x_min = 0.01, x_max = 100, y_min = 0.1, y_max = 1000;
};

struct RooflineData {
  std::vector<RooflinePoint> points;   // kernels with FLOPs and a time
  std::vector<std::string> not_shown;  // kernels without FLOPs (or not timed)
  std::optional<analysis::MachineCeilings> ceilings;
};

// Fills attainable/bound from `ceilings` when the source did not (it had no cached ceilings).
RooflinePoint roofline_point(const analysis::KernelProfile& k, const analysis::Profile& p,
                             const std::optional<analysis::MachineCeilings>& ceilings);
RooflinePoint roofline_point(const KernelMeasurement& m, const std::optional<analysis::MachineCeilings>& ceilings);
bool is_plottable(const RooflinePoint& p);
RooflineData roofline_from_profile(const analysis::Profile& p,
                                   const std::optional<analysis::MachineCeilings>& ceilings);

// Segments over [range.x_min, range.x_max]; compute ceilings start where the best bandwidth meets them.
// Compute ceilings are labelled in `compute_unit` ("GFLOP/s"; an int8 accelerator's "GOP/s").
std::vector<CeilingSegment> ceiling_segments(const analysis::MachineCeilings& c, const AxisRange& range,
                                             const std::string& compute_unit = "GFLOP/s");
// Decades that contain every point, the ridge points and the peak, with a margin.
AxisRange axis_range(const std::vector<RooflinePoint>& points, const std::optional<analysis::MachineCeilings>& c);
// The hover text: name, GFLOP/s, intensity, % of attainable, and the binding ceiling.
std::string point_tooltip(const RooflinePoint& p);

// An accelerator's roofline (analysis::accel_roofline) as chart data: per offloaded layer its point
// with 1 and with 2 virtual threads (op/byte and GOP/s: the simulator's counters and cycles; the
// fields named gflops hold GOP/s), and the machine model's two roofs as ceilings.
struct AcceleratorLayerPoints {
  RooflinePoint one, two;  // 1 and 2 virtual threads
  double speedup = 0;      // cycles with 1 ÷ cycles with 2
};
struct AcceleratorRooflineData {
  std::vector<AcceleratorLayerPoints> layers;
  analysis::MachineCeilings ceilings;
  std::vector<std::string> not_shown;  // kernels that run on the host
};
AcceleratorRooflineData accelerator_roofline_data(const analysis::AccelRoofline& r);
// "layer\n1 virtual thread: 21.9 GOP/s, 42,880 cycles\nintensity 15.5 op/byte\n86% of the roof (memory (dram))"
std::string accelerator_point_tooltip(const RooflinePoint& p);

}  // namespace tessel::views
