#pragma once
// A kernel's time, one definition for every pane: the MEDIAN of the timed repeats, its spread (half
// the interquartile range, as a percentage of the median), and the GFLOP/s of that same median.
// The schedule editor's badge, the lesson text, the Profile table and the roofline points all read
// their numbers from here, so the same measurement shows the same numbers everywhere. Qt-free.
//
//   KernelTime t = kernel_time(measurement);
//   t.time_text()    "0.652 ms ±2.1%"
//   t.text()         "0.652 ms ±2.1% · 355.5 GFLOP/s"
//   t.definition()   "median of 15 runs on llvm; ±2.1% is half the interquartile range"
#include <cstdint>
#include <string>

#include "core/analysis/profile.h"
#include "views/common/kernel_results.h"

namespace tessel::views {

struct KernelTime {
  double ms = 0;              // the median of the repeats
  double spread_percent = 0;  // half the interquartile range, in % of `ms`
  int repeats = 0;            // timed runs (0: not known)
  int64_t flops = 0, bytes = 0;
  std::string target;  // the target that measured it (Target::str())

  double gflops() const;            // flops / ms
  double gbps() const;              // bytes / ms
  std::string target_kind() const;  // "llvm" of "llvm -num_threads=4"
  std::string time_text() const;    // "0.652 ms ±2.1%"
  std::string text() const;         // "0.652 ms ±2.1% · 355.5 GFLOP/s"
  std::string definition() const;   // "median of 15 runs on llvm; ±2.1% is half the interquartile range"
};

KernelTime kernel_time(const KernelMeasurement& m);
// A kernel of a model profile: `p` gives the target and the number of runs.
KernelTime kernel_time(const analysis::KernelProfile& k, const analysis::Profile& p);

// Milliseconds to three significant digits, fixed point: "0.652 ms", "12.3 ms", "0.0123 ms".
std::string format_ms(double ms);
// The number alone, as format_ms writes it: "0.652".
std::string format_ms_number(double ms);
// GFLOP/s to three significant digits, at least one decimal: "355.5 GFLOP/s", "0.444 GFLOP/s".
std::string format_gflops(double gflops);
std::string format_gflops_number(double gflops);  // "355.5"

}  // namespace tessel::views
