#include "views/common/kernel_time.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessel::views {

namespace {

std::string printf_string(const char* pattern, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, v);
  return buf;
}

// Fixed point with three significant digits (and at least `min_decimals`).
std::string significant3(double v, int min_decimals) {
  if (!(v > 0) || !std::isfinite(v)) return "0";
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(v))), min_decimals, 6);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double spread_of(double median, double q1, double q3) {
  return median > 0 && q3 >= q1 ? 100 * (q3 - q1) / 2 / median : 0;
}

}  // namespace

double KernelTime::gflops() const { return ms > 0 ? static_cast<double>(flops) / (ms * 1e6) : 0; }
double KernelTime::gbps() const { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0; }

std::string KernelTime::target_kind() const { return target.substr(0, target.find(' ')); }

std::string KernelTime::time_text() const {
  return format_ms(ms) + " ±" + printf_string(spread_percent < 10 ? "%.1f" : "%.0f", spread_percent) + "%";
}

std::string KernelTime::text() const { return time_text() + " · " + format_gflops(gflops()); }

std::string KernelTime::definition() const {
  std::string s = "median of " + (repeats > 0 ? std::to_string(repeats) + " runs" : std::string("the runs"));
  if (!target.empty()) s += " on " + target_kind();
  return s + "; ±" + printf_string("%.1f", spread_percent) + "% is half the interquartile range";
}

KernelTime kernel_time(const KernelMeasurement& m) {
  return {m.ms_median, spread_of(m.ms_median, m.ms_q1, m.ms_q3), m.repeats, m.flops, m.bytes, m.target};
}

KernelTime kernel_time(const analysis::KernelProfile& k, const analysis::Profile& p) {
  return {k.ms_median, spread_of(k.ms_median, k.ms_q1, k.ms_q3), p.repeats, k.flops, k.bytes, p.target};
}

std::string format_ms_number(double ms) { return significant3(ms, 0); }

std::string format_ms(double ms) { return format_ms_number(ms) + " ms"; }

std::string format_gflops_number(double gflops) { return significant3(gflops, 1); }

std::string format_gflops(double gflops) { return format_gflops_number(gflops) + " GFLOP/s"; }

}  // namespace tessel::views
