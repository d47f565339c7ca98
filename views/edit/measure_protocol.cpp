#include "views/edit/measure_protocol.h"

#include "core/support/error.h"

namespace tessel::views {

namespace {

using json = nlohmann::json;

json base_request(const char* op, const MeasureContext& c) {
  return {{"op", op}, {"model", c.model_path}, {"target", c.target}, {"pass_options", c.pass_options}};
}

// A reply's error, or the failure that left no reply.
std::string failure_text(const json* reply, const std::string& failure) {
  if (!failure.empty()) return failure;
  if (!reply) return "no reply from the measuring process";
  if (!reply->value("ok", false)) return reply->value("error", std::string("the measuring process reported an error"));
  return {};
}

}  // namespace

json measure_request(const MeasureContext& c, const std::string& kernel, const schedule::Schedule& s, uint64_t seed) {
  json j = base_request("measure", c);
  j["kernel"] = kernel;
  j["schedule"] = schedule::to_text(s);
  j["seed"] = seed;
  return j;
}

json profile_request(const MeasureContext& c, const std::map<std::string, schedule::Schedule>& hand_schedules) {
  json j = base_request("profile", c);
  j["schedules"] = json::object();
  for (const auto& [kernel, s] : hand_schedules) j["schedules"][kernel] = schedule::to_text(s);
  return j;
}

json ceilings_request(const MeasureContext& c) { return {{"op", "ceilings"}, {"target", c.target}}; }

json calibrate_request(const MeasureContext& c, bool quick) {
  return {{"op", "calibrate"}, {"target", c.target}, {"quick", quick}};
}

KernelMeasurement measurement_from_reply(const std::string& kernel, int64_t generation, const json* reply,
                                         const std::string& failure) {
  KernelMeasurement m;
  m.kernel = kernel;
  m.generation = generation;
  m.error = failure_text(reply, failure);
  if (!m.error.empty()) {
    m.verdict = KernelMeasurement::Verdict::kFailed;
    return m;
  }
  try {
    const json& r = *reply;
    m.target = r.value("target", "");
    m.max_abs_error = r.value("max_abs_error", 0.0);
    m.ms_min = r.value("ms_min", 0.0);
    m.ms_median = r.value("ms_median", 0.0);
    m.flops = r.value("flops", int64_t{0});
    m.bytes = r.value("bytes", int64_t{0});
    m.gflops = r.value("gflops", 0.0);
    m.gbps = r.value("gbps", 0.0);
    m.intensity = r.value("intensity", 0.0);
    m.attainable_gflops = r.value("attainable_gflops", 0.0);
    m.bound = r.value("bound", "");
    m.compile_ms = r.value("compile_ms", 0.0);
    for (const json& a : r.value("artifacts", json::array()))
      m.artifacts.emplace_back(a.at(0).get<std::string>(), a.at(1).get<std::string>());
    if (r.value("verdict", "") == "correct") {
      m.verdict = KernelMeasurement::Verdict::kCorrect;
    } else {
      m.verdict = KernelMeasurement::Verdict::kWrong;
      m.error = "kernel '" + kernel + "' computes wrong results: max abs error " + std::to_string(m.max_abs_error) +
                " against the reference kernels (tolerance " + std::to_string(r.value("tolerance", 0.0)) + ")";
    }
  } catch (const json::exception& e) {
    m.verdict = KernelMeasurement::Verdict::kFailed;
    m.error = "kernel '" + kernel + "': malformed reply from the measuring process: " + e.what();
  }
  return m;
}

compile::Profile profile_from_json(const json& profile, const json& last_run, int threads) {
  compile::Profile p;
  p.target = profile.value("target", "");
  p.total_ms = profile.value("total_ms", 0.0);
  p.threads = threads;
  for (const json& k : profile.value("kernels", json::array())) {
    compile::KernelProfile kp;
    kp.name = k.value("name", "");
    kp.compiled = k.value("compiled", true);
    kp.ms_min = k.value("ms_min", 0.0);
    kp.ms_median = k.value("ms_median", 0.0);
    kp.flops = k.value("flops", int64_t{0});
    kp.bytes = k.value("bytes", int64_t{0});
    kp.gflops = k.value("gflops", 0.0);
    kp.gbps = k.value("gbps", 0.0);
    kp.intensity = k.value("intensity", 0.0);
    kp.bound = k.contains("bound") && k["bound"].is_string() ? k["bound"].get<std::string>() : "";
    kp.attainable_gflops = k.value("attainable_gflops", 0.0);
    p.kernels.push_back(std::move(kp));
  }
  p.last_run = compile::run_times_from_json(last_run);
  return p;
}

ModelProfile profile_from_reply(const json* reply, const std::string& failure) {
  ModelProfile m;
  m.error = failure_text(reply, failure);
  if (!m.error.empty()) return m;
  try {
    m.profile =
        profile_from_json(reply->at("profile"), reply->value("last_run", json::object()), reply->value("threads", 1));
    if (reply->contains("ceilings") && !(*reply)["ceilings"].is_null())
      m.ceilings = compile::ceilings_from_json((*reply)["ceilings"]);
  } catch (const json::exception& e) {
    m.error = std::string("malformed profile from the measuring process: ") + e.what();
  }
  return m;
}

CeilingsResult ceilings_from_reply(const json* reply, const std::string& failure) {
  CeilingsResult c;
  c.error = failure_text(reply, failure);
  if (!c.error.empty()) return c;
  try {
    if (reply->contains("ceilings") && !(*reply)["ceilings"].is_null())
      c.ceilings = compile::ceilings_from_json((*reply)["ceilings"]);
  } catch (const json::exception& e) {
    c.error = std::string("malformed ceilings from the measuring process: ") + e.what();
  }
  return c;
}

}  // namespace tessel::views
