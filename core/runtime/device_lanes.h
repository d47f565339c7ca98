#pragma once
// What a device's units did during one kernel call: one lane per unit, each a row of intervals on
// the device's own clock (cycles from the call's start). accel-sim fills it for its load, compute
// and store units (Module::last_call_lanes); a GPU plugin could fill it for its engines. A plain
// value: RunTimes carries it to the profile, its JSON, the Chrome trace and the studio's pipeline
// timeline, which all read the same intervals.
//
//   cycle     0         100       200       300
//   load      [LOAD inp][LOAD wgt][LOAD inp][LOAD wgt]
//   compute             [GEMM x16          ][GEMM x16 ]
//   store                                    [STORE]
//                       └─ overlap: two or more lanes busy ─┘
//
// Bounded: a ResNet conv runs tens of thousands of instructions. make_device_lanes keeps at most
// `max_intervals`, merging neighbours of one kind on a lane, the smallest gaps first (then, if that
// is not enough, neighbours of any kind), and says so in `note`. The summary (busy cycles per
// lane, overlap) is taken before merging, so it stays exact.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

struct DeviceInterval {
  int lane = 0;                // index into DeviceLanes::lanes
  int kind = 0;                // index into DeviceLanes::kinds
  int64_t start = 0, end = 0;  // cycles from the call's start; end is exclusive
  int64_t busy = 0;            // cycles of work inside [start, end) (less than end - start when merged over gaps)
  int64_t first = 0;           // index of its (first) instruction in the device's program
  int64_t count = 1;           // instructions it stands for
  uint32_t waits_on = 0;       // bit l: an instruction in it took a dependence token from lane l before starting
  uint32_t notifies = 0;       // bit l: an instruction in it gave a token to lane l when done
};

struct LaneSummary {
  int64_t cycles = 0;          // the call's length
  std::vector<int64_t> busy;   // per lane
  int64_t overlap_cycles = 0;  // cycles in which two or more lanes are busy
  double utilization(size_t lane) const;
};

struct DeviceLanes {
  std::vector<std::string> lanes;         // "load", "compute", "store"
  std::vector<std::string> kinds;         // "LOAD inp", "GEMM", "ALU", "STORE", "NOP", ...
  std::vector<DeviceInterval> intervals;  // by lane, then by start
  int64_t cycles = 0;                     // the call's length
  double clock_mhz = 0;                   // cycles per µs; 0: unknown
  int64_t instructions = 0;               // intervals before merging
  LaneSummary summary;                    // of the unmerged intervals
  std::string note;                       // how they were merged; empty when they were not
};

constexpr size_t kMaxDeviceIntervals = 2048;

// Busy cycles per lane (the sum of the intervals' `busy`) and the cycles covered by two or more
// lanes at once.
LaneSummary summarize_lanes(size_t lane_count, const std::vector<DeviceInterval>& intervals, int64_t cycles);

// Lanes from one interval per instruction (busy 0 is taken as end - start). Intervals naming a
// lane or kind out of range throw Error. At most max(max_intervals, lanes.size()) are kept.
DeviceLanes make_device_lanes(std::vector<std::string> lanes, std::vector<std::string> kinds,
                              std::vector<DeviceInterval> intervals, int64_t cycles, double clock_mhz,
                              size_t max_intervals = kMaxDeviceIntervals);

}  // namespace tessel
