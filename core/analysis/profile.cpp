#include "core/analysis/profile.h"

#include <algorithm>
#include <random>

namespace tessel::compile {

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
  p.threads = model.target().kind_info().find_option("num_threads")
                  ? static_cast<int>(model.target().get_int("num_threads"))
                  : 1;
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
    for (const RunTimes::DeviceCounters& c : runs.back().device_counters)
      if (c.kernel == static_cast<int>(k)) kp.device_counters = c.values;
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
    if (!k.device_counters.empty()) {
      nlohmann::json device = nlohmann::json::object();
      for (const auto& [name, value] : k.device_counters) device[name] = value;
      j["kernels"].back()["device"] = device;
    }
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
  return {{"kernel_ms", r.kernel_ms}, {"spans", spans},         {"thread_spans", threads},
          {"copies", copies},         {"device_spans", device}, {"total_ms", r.total_ms}};
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
  r.total_ms = j.value("total_ms", 0.0);
  return r;
}

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
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1);
}

}  // namespace tessel::compile
