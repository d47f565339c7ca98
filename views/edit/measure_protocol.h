#pragma once
// The studio's side of tessel-measure's protocol (core/measure/protocol.h defines the messages):
// typed requests built from the edit loop's context, typed replies turned into the immutable result
// values of views/common/kernel_results.h. Qt-free, so tests can check the translation without a
// process.
//
//   measure_request(...) ──▶ measure::Request ──▶ tessel-measure ──▶ measure::Reply ──▶ measurement_from_reply
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/measure/protocol.h"
#include "views/common/kernel_results.h"

namespace tessel::views {

// What the measuring process knows of the machine: the cached (or just measured) ceilings.
struct CeilingsResult {
  std::optional<analysis::MachineCeilings> ceilings;  // nullopt: never calibrated for this target
  std::string error;                                 // the calibration failed
};
using CeilingsResultPtr = std::shared_ptr<const CeilingsResult>;

// Where and what to measure; shared by every request of one model.
struct MeasureContext {
  std::string model_path;
  std::string target = "llvm";
  nlohmann::json pass_options = nlohmann::json::object();
};

measure::Request measure_request(const MeasureContext& c, const std::string& kernel, const schedule::Schedule& s,
                                 uint64_t seed = 1);
measure::Request profile_request(const MeasureContext& c,
                                 const std::map<std::string, schedule::Schedule>& hand_schedules);
measure::Request ceilings_request(const MeasureContext& c);
measure::Request calibrate_request(const MeasureContext& c, bool quick);

// A reply (ok or not) → a result; `failure` (a crash, a timeout, a malformed reply) when there is
// no reply. A reply of another kind than the request's is a failure too.
KernelMeasurement measurement_from_reply(const std::string& kernel, int64_t generation, const measure::Reply* reply,
                                         const std::string& failure);
ModelProfile profile_from_reply(const measure::Reply* reply, const std::string& failure);
CeilingsResult ceilings_from_reply(const measure::Reply* reply, const std::string& failure);

}  // namespace tessel::views
