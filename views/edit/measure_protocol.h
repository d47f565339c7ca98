#pragma once
// The studio's side of tessel-measure's line protocol (app/measure/main.cpp documents it): requests
// as JSON, replies turned into the immutable result values of views/common/kernel_results.h. Qt-free,
// so tests can check the translation without a process.
//
//   measure_request(...) ──▶ {"op": "measure", ...} ──▶ tessel-measure ──▶ reply ──▶ measurement_from_reply
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "views/common/kernel_results.h"

namespace tessel::views {

// What the measuring process knows of the machine: the cached (or just measured) ceilings.
struct CeilingsResult {
  std::optional<compile::MachineCeilings> ceilings;  // nullopt: never calibrated for this target
  std::string error;                                 // the calibration failed
};
using CeilingsResultPtr = std::shared_ptr<const CeilingsResult>;

// Where and what to measure; shared by every request of one model.
struct MeasureContext {
  std::string model_path;
  std::string target = "llvm";
  nlohmann::json pass_options = nlohmann::json::object();
};

nlohmann::json measure_request(const MeasureContext& c, const std::string& kernel, const schedule::Schedule& s,
                               uint64_t seed = 1);
nlohmann::json profile_request(const MeasureContext& c,
                               const std::map<std::string, schedule::Schedule>& hand_schedules);
nlohmann::json ceilings_request(const MeasureContext& c);
nlohmann::json calibrate_request(const MeasureContext& c, bool quick);

// A reply (ok or not) → a measurement; `failure` (a crash, a timeout) when there is no reply.
KernelMeasurement measurement_from_reply(const std::string& kernel, int64_t generation, const nlohmann::json* reply,
                                         const std::string& failure);
ModelProfile profile_from_reply(const nlohmann::json* reply, const std::string& failure);
CeilingsResult ceilings_from_reply(const nlohmann::json* reply, const std::string& failure);

// `tessel profile --json` (compile::profile_json) plus the last run's spans → a Profile.
compile::Profile profile_from_json(const nlohmann::json& profile, const nlohmann::json& last_run, int threads);

}  // namespace tessel::views
