#pragma once
// The measuring process's line protocol: one JSON object per line each way between the studio
// (views/edit/measure_client.h) and `tessel-measure` (app/measure/main.cpp). This file is the one
// place that knows the field names: both ends hold typed values and encode and decode them here.
//
//   studio                                   line on the pipe                              tessel-measure
//   Request{7, MeasureKernelRequest} ─encode─▶ {"id": 7, "op": "measure", "model": ...} ─decode─▶ Request
//   Reply ◀─decode─ {"id": 7, "ok": true, "reply": "measure", "verdict": "correct", ...} ◀─encode─ Reply
//
// Requests ("op"; every one may carry "id", echoed by its reply, and "inject"):
//   measure    model, target, pass_options, kernel, schedule (schedule::to_text), seed, min_time_ms,
//              artifacts (false: no generated code in the reply), cache ("warm" when absent, or
//              "cold": the weights evicted before every repeat, cache_condition.h)
//   profile    model, target, pass_options, schedules {kernel: text}, seed, warmup, repeats
//   ceilings   target           → the cached machine ceilings (null: never calibrated)
//   calibrate  target, quick    → measured now, cached, returned
//   "inject": "crash" | "hang" makes the process fail on purpose (tests; tessel-measure honours it
//   only with TESSEL_MEASURE_ALLOW_INJECT=1).
// Replies: {"id", "ok": true, "reply": "measure" | "profile" | "ceilings", ...the values}
//       or {"id", "ok": false, "error": "kernel 'K': schedule: step 2 ...: ..."}.
//
// Decoding checks that every field it reads is present (or optional) and of its type; fields it does
// not know are ignored (an older reader keeps working). A bad message throws ProtocolError naming
// the field, e.g.
//   request field 'seed': expected an unsigned integer, got "one"
//   reply field 'profile.kernels[3].ms_min': expected a number, got null
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/analysis/calibrate.h"
#include "core/analysis/profile.h"
#include "core/measure/cache_condition.h"
#include "core/support/error.h"

namespace tessel::measure {

// The model a request compiles, and how.
struct ModelRef {
  std::string path;
  std::string target;                                      // a Target spec; empty: the process picks llvm, else c
  nlohmann::json pass_options = nlohmann::json::object();  // pipeline_options_from_json's form
  // Input dims bound at import (`--shape NAME=DIMS`); empty: the shapes the file declares.
  // JSON: "input_shapes": {"x": [1, 3, 224, 224]}.
  std::map<std::string, Shape> input_shapes;
  bool operator==(const ModelRef&) const = default;
};

// One kernel of the model, compiled alone with a schedule, checked and timed.
struct MeasureKernelRequest {
  ModelRef model;
  std::string kernel;
  std::string schedule;  // schedule::to_text; empty: no step (plain loops)
  uint64_t seed = 1;
  double min_time_ms = 60;  // keep repeating until this much time has been measured
  bool artifacts = true;    // false: the reply leaves out the generated code (a tuner needs only times)
  CacheCondition cache = CacheCondition::kWarm;  // kCold: every repeat reads the weights from memory
  bool operator==(const MeasureKernelRequest&) const = default;
};

// The whole model with the hand schedules of some kernels (the others keep their defaults).
struct ProfileModelRequest {
  ModelRef model;
  std::map<std::string, std::string> schedules;  // kernel → schedule::to_text
  uint64_t seed = 1;
  int warmup = 2, repeats = 10;
  bool operator==(const ProfileModelRequest&) const = default;
};

struct CeilingsRequest {
  std::string target;
  bool operator==(const CeilingsRequest&) const = default;
};

struct CalibrateRequest {
  std::string target;
  bool quick = false;  // smaller buffers and fewer repeats
  bool operator==(const CalibrateRequest&) const = default;
};

struct Request {
  int64_t id = 0;      // echoed by the reply; 0: none
  std::string inject;  // "", "crash" or "hang" (tests)
  std::variant<MeasureKernelRequest, ProfileModelRequest, CeilingsRequest, CalibrateRequest> body;
  bool operator==(const Request&) const = default;
};

// The answer to a measure request.
struct KernelMeasured {
  std::string kernel;
  std::string target;  // Target::str()
  bool correct = false;
  double max_abs_error = 0, tolerance = 0;
  double ms_min = 0, ms_median = 0;
  double ms_q1 = 0, ms_q3 = 0;  // quartiles of the repeats (their spread)
  int repeats = 0;
  int64_t flops = 0, bytes = 0;
  double gflops = 0, gbps = 0, intensity = 0;
  double attainable_gflops = 0;
  std::string bound;
  double compile_ms = 0;
  std::vector<std::pair<std::string, std::string>> artifacts;  // (name, text) in the backend's order
};

// The answer to a profile request.
struct ModelProfiled {
  analysis::Profile profile;  // with its last run's spans and thread count
  std::optional<analysis::MachineCeilings> ceilings;
};

// The answer to a ceilings or calibrate request.
struct CeilingsKnown {
  std::optional<analysis::MachineCeilings> ceilings;  // nullopt: never calibrated for this target
};

struct Failed {
  std::string error;
};

struct Reply {
  int64_t id = 0;  // the request's id
  std::variant<Failed, KernelMeasured, ModelProfiled, CeilingsKnown> body;
  const Failed* failed() const { return std::get_if<Failed>(&body); }
};

// A message that does not follow the protocol. `request_id` is the id of the request it came with
// when that much could be read (so the error reply still reaches the right caller), else 0.
class ProtocolError : public Error {
 public:
  explicit ProtocolError(std::string message, int64_t request_id = 0)
      : Error(std::move(message)), request_id_(request_id) {}
  int64_t request_id() const { return request_id_; }

 private:
  int64_t request_id_;
};

nlohmann::json to_json(const Request& r);
nlohmann::json to_json(const Reply& r);
Request request_from_json(const nlohmann::json& j);  // throws ProtocolError
Reply reply_from_json(const nlohmann::json& j);      // throws ProtocolError

// One line, newline included. Strings that are not UTF-8 are repaired, never a reason to throw.
std::string encode_line(const Request& r);
std::string encode_line(const Reply& r);
// `line` without its newline; not JSON, or not an object, throws ProtocolError too.
Request decode_request_line(std::string_view line);
Reply decode_reply_line(std::string_view line);

// "measure", "profile", "ceilings", "calibrate".
std::string_view op_name(const Request& r);

}  // namespace tessel::measure
