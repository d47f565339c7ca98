#include "core/runtime/device_lanes.h"

#include <algorithm>

#include "core/support/error.h"

namespace tessel {

double LaneSummary::utilization(size_t lane) const {
  if (lane >= busy.size() || cycles <= 0) return 0;
  return static_cast<double>(busy[lane]) / static_cast<double>(cycles);
}

LaneSummary summarize_lanes(size_t lane_count, const std::vector<DeviceInterval>& intervals, int64_t cycles) {
  LaneSummary s;
  s.cycles = cycles;
  s.busy.assign(lane_count, 0);
  // Each lane's intervals as disjoint segments (a hand-made lane may overlap itself), then a sweep
  // over every lane's segment edges counting how many lanes are busy between two edges.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(lane_count);
  for (const DeviceInterval& i : intervals) {
    if (i.lane < 0 || static_cast<size_t>(i.lane) >= lane_count) continue;
    s.busy[static_cast<size_t>(i.lane)] += i.busy;
    if (i.end > i.start) spans[static_cast<size_t>(i.lane)].emplace_back(i.start, i.end);
  }
  std::vector<std::pair<int64_t, int>> edges;  // (cycle, +1 a lane becomes busy / -1 it becomes idle)
  for (auto& lane : spans) {
    std::sort(lane.begin(), lane.end());
    for (size_t k = 0; k < lane.size();) {
      int64_t begin = lane[k].first, end = lane[k].second;
      for (++k; k < lane.size() && lane[k].first <= end; ++k) end = std::max(end, lane[k].second);
      edges.emplace_back(begin, 1);
      edges.emplace_back(end, -1);
    }
  }
  std::sort(edges.begin(), edges.end());
  int busy_lanes = 0;
  for (size_t k = 0; k < edges.size();) {
    const int64_t at = edges[k].first;
    for (; k < edges.size() && edges[k].first == at; ++k) busy_lanes += edges[k].second;
    if (busy_lanes >= 2 && k < edges.size()) s.overlap_cycles += edges[k].first - at;
  }
  return s;
}

namespace {

// Merges neighbours on a lane (of one kind unless `any_kind`), the smallest gaps first, until at
// most `keep` intervals are left or no such neighbours remain. Returns the largest gap merged over.
int64_t merge_neighbours(std::vector<DeviceInterval>& intervals, size_t keep, bool any_kind, int mixed_kind) {
  auto mergeable = [&](const DeviceInterval& a, const DeviceInterval& b) {
    return a.lane == b.lane && (any_kind || a.kind == b.kind);
  };
  std::vector<int64_t> gaps;
  for (size_t k = 1; k < intervals.size(); ++k)
    if (mergeable(intervals[k - 1], intervals[k])) gaps.push_back(intervals[k].start - intervals[k - 1].end);
  const size_t needed = intervals.size() - keep;
  int64_t threshold = 0;
  if (gaps.size() > needed) {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(needed - 1), gaps.end());
    threshold = gaps[needed - 1];
  } else if (!gaps.empty()) {
    threshold = *std::max_element(gaps.begin(), gaps.end());
  }
  std::vector<DeviceInterval> out;
  out.reserve(keep);
  for (const DeviceInterval& i : intervals) {
    if (!out.empty() && mergeable(out.back(), i) && i.start - out.back().end <= threshold) {
      DeviceInterval& m = out.back();
      if (m.kind != i.kind) m.kind = mixed_kind;
      m.end = std::max(m.end, i.end);
      m.busy += i.busy;
      m.first = std::min(m.first, i.first);
      m.count += i.count;
      m.waits_on |= i.waits_on;
      m.notifies |= i.notifies;
    } else {
      out.push_back(i);
    }
  }
  intervals = std::move(out);
  return threshold;
}

}  // namespace

DeviceLanes make_device_lanes(std::vector<std::string> lanes, std::vector<std::string> kinds,
                              std::vector<DeviceInterval> intervals, int64_t cycles, double clock_mhz,
                              size_t max_intervals) {
  for (DeviceInterval& i : intervals) {
    if (i.lane < 0 || static_cast<size_t>(i.lane) >= lanes.size() || i.kind < 0 ||
        static_cast<size_t>(i.kind) >= kinds.size())
      throw Error("device lanes: an interval names lane " + std::to_string(i.lane) + " and kind " +
                  std::to_string(i.kind) + ", but there are " + std::to_string(lanes.size()) + " lanes and " +
                  std::to_string(kinds.size()) + " kinds");
    if (i.busy == 0) i.busy = i.end - i.start;
  }
  std::stable_sort(intervals.begin(), intervals.end(), [](const DeviceInterval& a, const DeviceInterval& b) {
    return a.lane != b.lane ? a.lane < b.lane : a.start < b.start;
  });
  DeviceLanes d;
  d.summary = summarize_lanes(lanes.size(), intervals, cycles);
  d.instructions = static_cast<int64_t>(intervals.size());
  d.cycles = cycles;
  d.clock_mhz = clock_mhz;
  const size_t keep = std::max(max_intervals, std::max<size_t>(lanes.size(), 1));
  if (intervals.size() > keep) {
    const int64_t gap = merge_neighbours(intervals, keep, false, -1);
    d.note = std::to_string(d.instructions) + " instructions shown as " + std::to_string(intervals.size()) +
             " intervals: neighbours of one kind on a lane up to " + std::to_string(gap) + " cycles apart merged";
    if (intervals.size() > keep) {
      kinds.emplace_back("mixed");
      const int64_t any_gap = merge_neighbours(intervals, keep, true, static_cast<int>(kinds.size()) - 1);
      d.note = std::to_string(d.instructions) + " instructions shown as " + std::to_string(intervals.size()) +
               " intervals: neighbours on a lane up to " + std::to_string(any_gap) +
               " cycles apart merged, \"mixed\" where their kinds differ";
    }
  }
  d.lanes = std::move(lanes);
  d.kinds = std::move(kinds);
  d.intervals = std::move(intervals);
  return d;
}

}  // namespace tessel
