#include "views/roofline/roofline_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "views/common/kernel_time.h"

namespace tessel::views {

namespace {

void complete(RooflinePoint& p, const std::optional<analysis::MachineCeilings>& ceilings) {
  if (p.attainable_gflops <= 0 && ceilings && p.intensity > 0)
    p.attainable_gflops = ceilings->attainable(p.intensity, &p.bound);
}

std::string format(const char* pattern, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, v);
  return buf;
}

// Whole numbers from 10 up; below, enough digits that a slow accelerator's 1.6 GB/s is not "2".
std::string roof_value(double v) { return format(v >= 10 ? "%.0f" : "%.2g", v); }

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

}  // namespace

RooflinePoint roofline_point(const analysis::KernelProfile& k, const analysis::Profile& profile,
                             const std::optional<analysis::MachineCeilings>& ceilings) {
  const KernelTime t = kernel_time(k, profile);
  RooflinePoint p{k.name, k.intensity, t.gflops(), k.attainable_gflops, k.bound, t.text()};
  complete(p, ceilings);
  return p;
}

RooflinePoint roofline_point(const KernelMeasurement& m, const std::optional<analysis::MachineCeilings>& ceilings) {
  const KernelTime t = kernel_time(m);
  RooflinePoint p{m.kernel, m.intensity, t.gflops(), m.attainable_gflops, m.bound, t.text()};
  complete(p, ceilings);
  return p;
}

bool is_plottable(const RooflinePoint& p) { return p.intensity > 0 && p.gflops > 0 && std::isfinite(p.gflops); }

RooflineData roofline_from_profile(const analysis::Profile& profile,
                                   const std::optional<analysis::MachineCeilings>& ceilings) {
  RooflineData d;
  d.ceilings = ceilings;
  for (const analysis::KernelProfile& k : profile.kernels) {
    RooflinePoint p = roofline_point(k, profile, ceilings);
    if (is_plottable(p))
      d.points.push_back(std::move(p));
    else
      d.not_shown.push_back(k.name);
  }
  return d;
}

std::vector<CeilingSegment> ceiling_segments(const analysis::MachineCeilings& c, const AxisRange& r,
                                             const std::string& compute_unit) {
  std::vector<CeilingSegment> out;
  const double best_bw = c.bandwidth.empty() ? 0 : c.bandwidth.front().value;
  for (const analysis::Ceiling& k : c.compute) {
    if (k.value <= 0) continue;
    const double start = best_bw > 0 ? std::clamp(k.value / best_bw, r.x_min, r.x_max) : r.x_min;
    out.push_back({k.name + " " + roof_value(k.value) + " " + compute_unit, true, start, k.value, r.x_max, k.value});
  }
  const double peak = c.peak_gflops();
  for (const analysis::Ceiling& b : c.bandwidth) {
    if (b.value <= 0) continue;
    // y = bw · x from the left edge to where it reaches the peak (or the right edge).
    double x_end = peak > 0 ? std::min(peak / b.value, r.x_max) : r.x_max;
    double x_start = std::min(r.x_min, x_end);
    out.push_back(
        {b.name + " " + roof_value(b.value) + " GB/s", false, x_start, b.value * x_start, x_end, b.value * x_end});
  }
  return out;
}

AxisRange axis_range(const std::vector<RooflinePoint>& points, const std::optional<analysis::MachineCeilings>& c) {
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
  auto include = [&](double x, double y) {
    if (x > 0) x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
    if (y > 0) y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
  };
  for (const RooflinePoint& p : points)
    if (is_plottable(p)) include(p.intensity, p.gflops);
  if (c) {
    for (const analysis::Ceiling& k : c->compute) include(0, k.value);
    if (c->dram_gbps() > 0 && c->peak_gflops() > 0) include(c->peak_gflops() / c->dram_gbps(), 0);
  }
  AxisRange r;
  if (x_hi > 0) r.x_min = decade_below(x_lo / 2), r.x_max = decade_above(x_hi * 2);
  if (y_hi > 0) r.y_min = decade_below(y_lo / 2), r.y_max = decade_above(y_hi * 2);
  return r;
}

std::string point_tooltip(const RooflinePoint& p) {
  std::string s = p.kernel + "\n" + (p.time.empty() ? format("%.1f GFLOP/s", p.gflops) : p.time) + "\n" +
                  format("intensity %.2f FLOP/byte", p.intensity);
  if (p.attainable_gflops > 0)
    s += "\n" + format("%.1f%% of attainable ", p.percent_of_attainable()) +
         format("(%.1f GFLOP/s)", p.attainable_gflops) + "\nbound by " + p.bound;
  else
    s += "\nno machine ceilings (calibrate to see what bounds it)";
  return s;
}

AcceleratorRooflineData accelerator_roofline_data(const analysis::AccelRoofline& r) {
  AcceleratorRooflineData d;
  d.ceilings = r.ceilings();
  auto point = [&](const std::string& kernel, const analysis::AcceleratorRun& run) {
    RooflinePoint p;
    p.kernel = kernel;
    p.intensity = run.intensity();
    p.gflops = run.gops(r.clock_mhz);
    p.attainable_gflops = d.ceilings.attainable(p.intensity, &p.bound);
    p.time = format("%.0f cycles", run.cycles) + format(" (%.3g ms)", run.cycles / (r.clock_mhz * 1e3)) + ", " +
             std::to_string(run.vthreads) + (run.vthreads == 1 ? " virtual thread" : " virtual threads");
    return p;
  };
  for (const analysis::AccelRooflineLayer& l : r.layers)
    d.layers.push_back({point(l.kernel, l.one), point(l.kernel, l.two), l.speedup()});
  for (const std::string& k : r.on_host) d.not_shown.push_back(k.substr(0, k.find(':')));
  return d;
}

std::string accelerator_point_tooltip(const RooflinePoint& p) {
  return p.kernel + "\n" + format("%.2f GOP/s", p.gflops) + ", " + p.time + "\n" +
         format("intensity %.2f op/byte", p.intensity) + "\n" +
         format("%.0f%% of the roof", p.percent_of_attainable()) +
         format(" (%.3g GOP/s), bound by ", p.attainable_gflops) + p.bound;
}

}  // namespace tessel::views
