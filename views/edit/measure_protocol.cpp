#include "views/edit/measure_protocol.h"

#include "core/support/error.h"

namespace tessel::views {

namespace {

measure::ModelRef model_of(const MeasureContext& c) { return {c.model_path, c.target, c.pass_options, {}}; }

// The reply's body of the expected kind, or why there is none (`*error` set).
template <class Body>
const Body* body_of(const measure::Reply* reply, const std::string& failure, std::string* error) {
  if (!failure.empty()) {
    *error = failure;
  } else if (!reply) {
    *error = "no reply from the measuring process";
  } else if (const measure::Failed* failed = reply->failed()) {
    *error = failed->error.empty() ? "the measuring process reported an error" : failed->error;
  } else if (const Body* body = std::get_if<Body>(&reply->body)) {
    return body;
  } else {
    *error = "the measuring process answered with a reply of another kind";
  }
  return nullptr;
}

}  // namespace

measure::Request measure_request(const MeasureContext& c, const std::string& kernel, const schedule::Schedule& s,
                                 uint64_t seed) {
  measure::MeasureKernelRequest r;
  r.model = model_of(c);
  r.kernel = kernel;
  r.schedule = schedule::to_text(s);
  r.seed = seed;
  return measure::Request{.id = 0, .inject = {}, .body = std::move(r)};
}

measure::Request profile_request(const MeasureContext& c,
                                 const std::map<std::string, schedule::Schedule>& hand_schedules) {
  measure::ProfileModelRequest r;
  r.model = model_of(c);
  for (const auto& [kernel, s] : hand_schedules) r.schedules[kernel] = schedule::to_text(s);
  return measure::Request{.id = 0, .inject = {}, .body = std::move(r)};
}

measure::Request ceilings_request(const MeasureContext& c) {
  return measure::Request{.id = 0, .inject = {}, .body = measure::CeilingsRequest{c.target}};
}

measure::Request calibrate_request(const MeasureContext& c, bool quick) {
  return measure::Request{.id = 0, .inject = {}, .body = measure::CalibrateRequest{c.target, quick}};
}

KernelMeasurement measurement_from_reply(const std::string& kernel, int64_t generation, const measure::Reply* reply,
                                         const std::string& failure) {
  KernelMeasurement m;
  m.kernel = kernel;
  m.generation = generation;
  const auto* r = body_of<measure::KernelMeasured>(reply, failure, &m.error);
  if (!r) {
    m.verdict = KernelMeasurement::Verdict::kFailed;
    return m;
  }
  m.target = r->target;
  m.max_abs_error = r->max_abs_error;
  m.ms_min = r->ms_min;
  m.ms_median = r->ms_median;
  m.ms_q1 = r->ms_q1;
  m.ms_q3 = r->ms_q3;
  m.repeats = r->repeats;
  m.flops = r->flops;
  m.bytes = r->bytes;
  m.gflops = r->gflops;
  m.gbps = r->gbps;
  m.intensity = r->intensity;
  m.attainable_gflops = r->attainable_gflops;
  m.bound = r->bound;
  m.compile_ms = r->compile_ms;
  m.artifacts = r->artifacts;
  if (r->correct) {
    m.verdict = KernelMeasurement::Verdict::kCorrect;
  } else {
    m.verdict = KernelMeasurement::Verdict::kWrong;
    m.error = "kernel '" + kernel + "' computes wrong results: max abs error " + std::to_string(m.max_abs_error) +
              " against the reference kernels (tolerance " + std::to_string(r->tolerance) + ")";
  }
  return m;
}

ModelProfile profile_from_reply(const measure::Reply* reply, const std::string& failure) {
  ModelProfile m;
  if (const auto* r = body_of<measure::ModelProfiled>(reply, failure, &m.error)) {
    m.profile = r->profile;
    m.ceilings = r->ceilings;
  }
  return m;
}

CeilingsResult ceilings_from_reply(const measure::Reply* reply, const std::string& failure) {
  CeilingsResult c;
  if (const auto* r = body_of<measure::CeilingsKnown>(reply, failure, &c.error)) c.ceilings = r->ceilings;
  return c;
}

}  // namespace tessel::views
