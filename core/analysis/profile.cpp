#include "core/analysis/profile.h"

#include <algorithm>
#include <map>
#include <random>

namespace tessel::analysis {

using compile::CompiledModel;
using compile::RunTimes;

double time_quantile(std::vector<double> times, double q) {
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  const auto last = static_cast<double>(times.size() - 1);
  return times[static_cast<size_t>(std::clamp(q, 0.0, 1.0) * last + 0.5)];
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed) {
  std::vector<Tensor> out;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    if (v.value.defined()) {  // a bound input: its value is part of the compiled graph
      out.push_back(v.value);
      continue;
    }
    Tensor t(v.type.dtype, v.type.shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.set_double(i, dtype_is_float(v.type.dtype) ? dist(rng) : std::floor((dist(rng) + 1) * 2));
    out.push_back(t);
  }
  return out;
}

Profile profile_model(const CompiledModel& model, const std::vector<Tensor>& inputs, int warmup, int repeats,
                      const std::optional<MachineCeilings>& ceilings) {
  for (int w = 0; w < warmup; ++w) model.run(inputs);
  std::vector<RunTimes> runs(static_cast<size_t>(std::max(repeats, 1)));
  for (RunTimes& r : runs) model.run(inputs, &r);
  Profile p;
  p.target = model.target().str();
  p.threads = target_threads(model.target());
  std::vector<double> totals;
  for (const RunTimes& r : runs) totals.push_back(r.total_ms);
  p.total_ms = time_quantile(totals, 0.5);
  p.repeats = static_cast<int>(runs.size());
  p.last_run = runs.back();
  const auto& kernels = model.kernels();
  for (size_t k = 0; k < kernels.size(); ++k) {
    KernelProfile kp;
    kp.name = kernels[k].name;
    kp.compiled = kernels[k].compiled;
    kp.placement = model.placement(kernels[k]);
    kp.schedule = model.schedule_report(kernels[k]);
    for (const RunTimes::DeviceCounters& c : runs.back().device_counters)
      if (c.kernel == static_cast<int>(k)) kp.device_counters = c.values;
    for (const RunTimes::DeviceLaneSet& l : runs.back().device_lanes)
      if (l.kernel == static_cast<int>(k)) kp.device_lanes = l.lanes;
    std::vector<double> times;
    for (const RunTimes& r : runs) {
      auto on_device = std::find_if(r.device_spans.begin(), r.device_spans.end(),
                                    [&](const RunTimes::DeviceSpan& s) { return s.kernel == static_cast<int>(k); });
      kp.device_clock = on_device != r.device_spans.end();
      times.push_back(kp.device_clock ? on_device->end_ms - on_device->begin_ms : r.kernel_ms[k]);
    }
    kp.ms_min = *std::min_element(times.begin(), times.end());
    kp.ms_median = time_quantile(times, 0.5);
    kp.ms_q1 = time_quantile(times, 0.25);
    kp.ms_q3 = time_quantile(times, 0.75);
    kp.flops = kernels[k].flops;
    kp.bytes = kernels[k].bytes;
    double seconds = std::max(kp.ms_min, 1e-6) / 1e3;
    kp.gflops = static_cast<double>(kp.flops) / seconds / 1e9;
    kp.gbps = static_cast<double>(kp.bytes) / seconds / 1e9;
    kp.intensity = kp.bytes > 0 ? static_cast<double>(kp.flops) / static_cast<double>(kp.bytes) : 0;
    if (ceilings) kp.attainable_gflops = ceilings->attainable(kp.intensity, &kp.bound);
    p.kernels.push_back(std::move(kp));
  }
  return p;
}

nlohmann::json profile_json(const Profile& p) {
  nlohmann::json j{
      {"target", p.target}, {"total_ms", p.total_ms}, {"repeats", p.repeats}, {"kernels", nlohmann::json::array()}};
  for (const KernelProfile& k : p.kernels) {
    j["kernels"].push_back({{"name", k.name},
                            {"compiled", k.compiled},
                            {"ms_min", k.ms_min},
                            {"ms_median", k.ms_median},
                            {"ms_q1", k.ms_q1},
                            {"ms_q3", k.ms_q3},
                            {"clock", k.device_clock ? "device events" : "host"},
                            {"flops", k.flops},
                            {"bytes", k.bytes},
                            {"gflops", k.gflops},
                            {"gbps", k.gbps},
                            {"intensity", k.intensity},
                            {"bound", k.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.bound)},
                            {"attainable_gflops", k.attainable_gflops}});
    j["kernels"].back()["placement"] = k.placement;
    j["kernels"].back()["schedule"] = k.schedule;
    if (!k.device_counters.empty()) {
      nlohmann::json device = nlohmann::json::object();
      for (const auto& [name, value] : k.device_counters) device[name] = value;
      j["kernels"].back()["device"] = device;
    }
    if (k.device_lanes) j["kernels"].back()["device_lanes"] = device_lanes_json(*k.device_lanes);
  }
  // Host↔device copies of the last run (a device target): what the run's edges between host and
  // device memory cost.
  nlohmann::json copies = nlohmann::json::array();
  double copy_ms = 0;
  for (const RunTimes::Copy& c : p.last_run.copies) {
    const bool named = c.kernel >= 0 && static_cast<size_t>(c.kernel) < p.kernels.size();
    copies.push_back({{"kernel", named ? nlohmann::json(p.kernels[static_cast<size_t>(c.kernel)].name) : nullptr},
                      {"value", c.value},
                      {"direction", c.to_device ? "to_device" : "to_host"},
                      {"bytes", c.bytes},
                      {"ms", c.end_ms - c.begin_ms}});
    copy_ms += c.end_ms - c.begin_ms;
  }
  j["copies"] = copies;
  j["copy_ms"] = copy_ms;
  return j;
}

nlohmann::json run_times_json(const RunTimes& r) {
  nlohmann::json spans = nlohmann::json::array(), threads = nlohmann::json::array();
  for (auto [begin, end] : r.kernel_spans_ms) spans.push_back({begin, end});
  for (const RunTimes::ThreadSpan& t : r.thread_spans) threads.push_back({t.kernel, t.thread, t.begin_ms, t.end_ms});
  nlohmann::json copies = nlohmann::json::array();
  for (const RunTimes::Copy& c : r.copies)
    copies.push_back({c.kernel, c.value, c.to_device, c.bytes, c.begin_ms, c.end_ms});
  nlohmann::json device = nlohmann::json::array();
  for (const RunTimes::DeviceSpan& d : r.device_spans) device.push_back({d.kernel, d.begin_ms, d.end_ms});
  nlohmann::json counters = nlohmann::json::array();
  for (const RunTimes::DeviceCounters& c : r.device_counters) {
    nlohmann::json values = nlohmann::json::array();  // pairs: the device's order survives the trip
    for (const auto& [name, value] : c.values) values.push_back({name, value});
    counters.push_back({c.kernel, values});
  }
  nlohmann::json lanes = nlohmann::json::array();
  for (const RunTimes::DeviceLaneSet& l : r.device_lanes)
    if (l.lanes) lanes.push_back({l.kernel, device_lanes_json(*l.lanes)});
  return {{"kernel_ms", r.kernel_ms}, {"spans", spans},         {"thread_spans", threads},
          {"copies", copies},         {"device_spans", device}, {"device_counters", counters},
          {"device_lanes", lanes},    {"total_ms", r.total_ms}};
}

nlohmann::json device_lanes_json(const DeviceLanes& d) {
  nlohmann::json utilization = nlohmann::json::array();
  for (size_t l = 0; l < d.summary.busy.size(); ++l) utilization.push_back(d.summary.utilization(l));
  nlohmann::json intervals = nlohmann::json::array();
  for (const DeviceInterval& i : d.intervals)
    intervals.push_back({i.lane, i.kind, i.start, i.end, i.busy, i.first, i.count, i.waits_on, i.notifies});
  return {{"lanes", d.lanes},
          {"kinds", d.kinds},
          {"cycles", d.cycles},
          {"clock_mhz", d.clock_mhz},
          {"instructions", d.instructions},
          {"note", d.note},
          {"summary",
           {{"busy", d.summary.busy}, {"utilization", utilization}, {"overlap_cycles", d.summary.overlap_cycles}}},
          {"intervals", intervals}};
}

DeviceLanes device_lanes_from_json(const nlohmann::json& j) {
  DeviceLanes d;
  d.lanes = j.at("lanes").get<std::vector<std::string>>();
  d.kinds = j.at("kinds").get<std::vector<std::string>>();
  d.cycles = j.value("cycles", int64_t{0});
  d.clock_mhz = j.value("clock_mhz", 0.0);
  d.note = j.value("note", std::string());
  for (const nlohmann::json& i : j.at("intervals")) {
    DeviceInterval v{.lane = i.at(0).get<int>(),
                     .kind = i.at(1).get<int>(),
                     .start = i.at(2).get<int64_t>(),
                     .end = i.at(3).get<int64_t>(),
                     .busy = i.at(4).get<int64_t>(),
                     .first = i.at(5).get<int64_t>(),
                     .count = i.at(6).get<int64_t>(),
                     .waits_on = i.at(7).get<uint32_t>(),
                     .notifies = i.at(8).get<uint32_t>()};
    if (v.lane < 0 || static_cast<size_t>(v.lane) >= d.lanes.size() || v.kind < 0 ||
        static_cast<size_t>(v.kind) >= d.kinds.size())
      throw Error("device lanes: an interval names a lane or kind that is not listed");
    d.intervals.push_back(v);
  }
  std::stable_sort(d.intervals.begin(), d.intervals.end(), [](const DeviceInterval& a, const DeviceInterval& b) {
    return a.lane != b.lane ? a.lane < b.lane : a.start < b.start;
  });  // the order readers search in (make_device_lanes's)
  d.instructions = j.value("instructions", static_cast<int64_t>(d.intervals.size()));
  // The summary travels as it was taken before merging (exact); only its busy cycles and overlap.
  const nlohmann::json& summary = j.at("summary");
  d.summary.cycles = d.cycles;
  d.summary.busy = summary.at("busy").get<std::vector<int64_t>>();
  d.summary.overlap_cycles = summary.at("overlap_cycles").get<int64_t>();
  return d;
}

RunTimes run_times_from_json(const nlohmann::json& j) {
  RunTimes r;
  r.kernel_ms = j.value("kernel_ms", std::vector<double>{});
  for (const nlohmann::json& span : j.value("spans", nlohmann::json::array()))
    r.kernel_spans_ms.emplace_back(span.at(0).get<double>(), span.at(1).get<double>());
  for (const nlohmann::json& t : j.value("thread_spans", nlohmann::json::array()))
    r.thread_spans.push_back({t.at(0).get<int>(), t.at(1).get<int>(), t.at(2).get<double>(), t.at(3).get<double>()});
  for (const nlohmann::json& c : j.value("copies", nlohmann::json::array()))
    r.copies.push_back({c.at(0).get<int>(), c.at(1).get<std::string>(), c.at(2).get<bool>(), c.at(3).get<int64_t>(),
                        c.at(4).get<double>(), c.at(5).get<double>()});
  for (const nlohmann::json& d : j.value("device_spans", nlohmann::json::array()))
    r.device_spans.push_back({d.at(0).get<int>(), d.at(1).get<double>(), d.at(2).get<double>()});
  for (const nlohmann::json& c : j.value("device_counters", nlohmann::json::array())) {
    RunTimes::DeviceCounters counters{c.at(0).get<int>(), {}};
    for (const nlohmann::json& v : c.at(1))
      counters.values.emplace_back(v.at(0).get<std::string>(), v.at(1).get<double>());
    r.device_counters.push_back(std::move(counters));
  }
  for (const nlohmann::json& l : j.value("device_lanes", nlohmann::json::array()))
    r.device_lanes.push_back(
        {l.at(0).get<int>(), std::make_shared<const DeviceLanes>(device_lanes_from_json(l.at(1)))});
  r.total_ms = j.value("total_ms", 0.0);
  return r;
}

namespace {

// The device's units as a process of their own (pid 2), one track per lane name: each kernel's
// intervals from where it began on the device (its device span, else its host span), cycles
// turned into µs at the device's clock (or spread over the kernel's span when the clock is unknown).
void append_device_lane_events(const Profile& p, nlohmann::json& events) {
  constexpr int kDevicePid = 2;
  std::map<std::string, int> track_of_lane;
  bool named = false;
  for (const RunTimes::DeviceLaneSet& set : p.last_run.device_lanes) {
    const auto k = static_cast<size_t>(set.kernel);
    if (!set.lanes || set.kernel < 0 || k >= p.kernels.size() || k >= p.last_run.kernel_spans_ms.size()) continue;
    const DeviceLanes& d = *set.lanes;
    if (!named) {  // its placement ("accel-sim:0 (accel-sim)"), unless the profile came without
      const std::string& where = p.kernels[k].placement;
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", kDevicePid},
                        {"args", {{"name", where.empty() ? "device (" + p.target + ")" : "device " + where}}}});
      named = true;
    }
    std::vector<int> track(d.lanes.size());
    for (size_t l = 0; l < d.lanes.size(); ++l) {
      auto [it, added] = track_of_lane.try_emplace(d.lanes[l], static_cast<int>(track_of_lane.size()) + 1);
      track[l] = it->second;
      if (added)
        events.push_back({{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", kDevicePid},
                          {"tid", it->second},
                          {"args", {{"name", d.lanes[l] + " unit"}}}});
    }
    auto [begin_ms, end_ms] = p.last_run.kernel_spans_ms[k];
    for (const RunTimes::DeviceSpan& s : p.last_run.device_spans)
      if (s.kernel == set.kernel) begin_ms = s.begin_ms, end_ms = s.end_ms;
    const double us_per_cycle =
        d.clock_mhz > 0 ? 1.0 / d.clock_mhz
                        : (end_ms - begin_ms) * 1000.0 / static_cast<double>(std::max<int64_t>(d.cycles, 1));
    for (const DeviceInterval& i : d.intervals)
      events.push_back({{"name", d.kinds[static_cast<size_t>(i.kind)]},
                        {"cat", "device " + d.lanes[static_cast<size_t>(i.lane)]},
                        {"ph", "X"},
                        {"pid", kDevicePid},
                        {"tid", track[static_cast<size_t>(i.lane)]},
                        {"ts", begin_ms * 1000.0 + static_cast<double>(i.start) * us_per_cycle},
                        {"dur", static_cast<double>(i.end - i.start) * us_per_cycle},
                        {"args",
                         {{"kernel", p.kernels[k].name},
                          {"instruction", i.first},
                          {"instructions", i.count},
                          {"start_cycle", i.start},
                          {"end_cycle", i.end}}}});
  }
}

}  // namespace

std::string chrome_trace(const Profile& p) {
  // Kernels run one after another on the calling thread (track 1); the chunks of their parallel
  // loops run on the pool's threads (track 1 + thread; the calling thread's own chunk nests
  // inside its kernel on track 1).
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "tessel " + p.target}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "kernels"}}}});
  for (int t = 1; t < p.threads; ++t)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", 1 + t},
                      {"args", {{"name", "pool thread " + std::to_string(t)}}}});
  for (size_t k = 0; k < p.kernels.size() && k < p.last_run.kernel_spans_ms.size(); ++k) {
    auto [begin, end] = p.last_run.kernel_spans_ms[k];
    events.push_back(
        {{"name", p.kernels[k].name},
         {"cat", p.kernels[k].compiled ? "kernel" : "reference"},
         {"ph", "X"},
         {"pid", 1},
         {"tid", 1},
         {"ts", begin * 1000.0},
         {"dur", (end - begin) * 1000.0},
         {"args", {{"flops", p.kernels[k].flops}, {"bytes", p.kernels[k].bytes}, {"gflops", p.kernels[k].gflops}}}});
  }
  for (const RunTimes::ThreadSpan& t : p.last_run.thread_spans) {
    if (t.kernel < 0 || static_cast<size_t>(t.kernel) >= p.kernels.size()) continue;
    events.push_back({{"name", p.kernels[static_cast<size_t>(t.kernel)].name},
                      {"cat", "parallel chunk"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 1 + t.thread},
                      {"ts", t.begin_ms * 1000.0},
                      {"dur", (t.end_ms - t.begin_ms) * 1000.0}});
  }
  // A device target: the kernels as the device's events saw them, and the host↔device copies,
  // each on a track of their own below the pool's threads.
  const int device_track = 1 + std::max(p.threads, 1), copy_track = device_track + 1;
  if (!p.last_run.device_spans.empty())
    events.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", device_track}, {"args", {{"name", "device"}}}});
  for (const RunTimes::DeviceSpan& d : p.last_run.device_spans) {
    if (d.kernel < 0 || static_cast<size_t>(d.kernel) >= p.kernels.size()) continue;
    events.push_back({{"name", p.kernels[static_cast<size_t>(d.kernel)].name},
                      {"cat", "device kernel"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", device_track},
                      {"ts", d.begin_ms * 1000.0},
                      {"dur", (d.end_ms - d.begin_ms) * 1000.0}});
  }
  if (!p.last_run.copies.empty())
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", copy_track},
                      {"args", {{"name", "host<->device copies"}}}});
  for (const RunTimes::Copy& c : p.last_run.copies)
    events.push_back({{"name", (c.to_device ? "to device: " : "to host: ") + c.value},
                      {"cat", "copy"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", copy_track},
                      {"ts", c.begin_ms * 1000.0},
                      {"dur", (c.end_ms - c.begin_ms) * 1000.0},
                      {"args", {{"bytes", c.bytes}}}});
  append_device_lane_events(p, events);
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1);
}

}  // namespace tessel::analysis
