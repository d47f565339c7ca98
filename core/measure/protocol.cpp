#include "core/measure/protocol.h"

#include <climits>
#include <limits>

namespace tessel::measure {

namespace {

using json = nlohmann::json;

std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string line_start(std::string_view line) {
  return std::string(line.substr(0, 60)) + (line.size() > 60 ? "..." : "");
}

// Which message is being read, for error texts: "request" or "reply", and the request's id.
struct Message {
  const char* side;
  int64_t id;
};

class Fields;

// One JSON value at a path ("profile.kernels[3].ms_min"), read as the type the protocol expects.
class Value {
 public:
  Value(const json& j, std::string path, Message message) : j_(&j), path_(std::move(path)), message_(message) {}

  bool is_null() const { return j_->is_null(); }
  std::string string() const {
    if (!j_->is_string()) fail("a string");
    return j_->get<std::string>();
  }
  double number() const {
    if (!j_->is_number()) fail("a number");
    return j_->get<double>();
  }
  bool boolean() const {
    if (!j_->is_boolean()) fail("true or false");
    return j_->get<bool>();
  }
  int64_t integer() const {
    if (!j_->is_number_integer() || (j_->is_number_unsigned() && j_->get<uint64_t>() > INT64_MAX)) fail("an integer");
    return j_->get<int64_t>();
  }
  uint64_t unsigned_integer() const {
    if (!j_->is_number_unsigned() && !(j_->is_number_integer() && j_->get<int64_t>() >= 0)) fail("an unsigned integer");
    return j_->get<uint64_t>();
  }
  int integer_in(int low, int high) const {
    const bool fits = j_->is_number_integer() && !(j_->is_number_unsigned() && j_->get<uint64_t>() > INT64_MAX) &&
                      j_->get<int64_t>() >= low && j_->get<int64_t>() <= high;
    if (!fits) fail("an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
    return static_cast<int>(j_->get<int64_t>());
  }
  Fields object() const;
  std::vector<Value> array() const {
    if (!j_->is_array()) fail("an array");
    std::vector<Value> out;
    for (size_t i = 0; i < j_->size(); ++i) out.emplace_back((*j_)[i], path_ + "[" + std::to_string(i) + "]", message_);
    return out;
  }
  // An array of exactly `n` elements, e.g. a [name, text] pair.
  std::vector<Value> tuple(size_t n, const std::string& shape) const {
    if (!j_->is_array() || j_->size() != n) fail(shape);
    return array();
  }
  const json& raw() const { return *j_; }

  [[noreturn]] void fail(const std::string& expected) const {
    throw ProtocolError(
        std::string(message_.side) + " field '" + path_ + "': expected " + expected + ", got " + shown(*j_),
        message_.id);
  }

 private:
  const json* j_;
  std::string path_;
  Message message_;
};

// The fields of one JSON object; a field that is read must exist (or have a fallback) and have its type.
// Fields the protocol does not know are ignored.
class Fields {
 public:
  Fields(const json& j, std::string path, Message message) : j_(&j), path_(std::move(path)), message_(message) {}

  std::optional<Value> optional(const std::string& key) const {
    auto it = j_->find(key);
    if (it == j_->end()) return std::nullopt;
    return Value(*it, child(key), message_);
  }
  Value at(const std::string& key) const {
    if (auto v = optional(key)) return *v;
    throw ProtocolError(std::string(message_.side) + " has no field '" + child(key) + "'", message_.id);
  }
  std::string string(const std::string& key) const { return at(key).string(); }
  std::string string_or(const std::string& key, std::string fallback) const {
    auto v = optional(key);
    return v ? v->string() : fallback;
  }
  double number_or(const std::string& key, double fallback) const {
    auto v = optional(key);
    return v ? v->number() : fallback;
  }
  int64_t integer_or(const std::string& key, int64_t fallback) const {
    auto v = optional(key);
    return v ? v->integer() : fallback;
  }
  uint64_t unsigned_or(const std::string& key, uint64_t fallback) const {
    auto v = optional(key);
    return v ? v->unsigned_integer() : fallback;
  }
  int integer_in_or(const std::string& key, int low, int high, int fallback) const {
    auto v = optional(key);
    return v ? v->integer_in(low, high) : fallback;
  }
  bool boolean_or(const std::string& key, bool fallback) const {
    auto v = optional(key);
    return v ? v->boolean() : fallback;
  }
  std::vector<std::pair<std::string, Value>> entries() const {
    std::vector<std::pair<std::string, Value>> out;
    for (auto it = j_->begin(); it != j_->end(); ++it)
      out.emplace_back(it.key(), Value(*it, child(it.key()), message_));
    return out;
  }

 private:
  std::string child(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const json* j_;
  std::string path_;
  Message message_;
};

Fields Value::object() const {
  if (!j_->is_object()) fail("an object");
  return Fields(*j_, path_, message_);
}

Fields top_level(const json& j, const char* side) {
  int64_t id = 0;
  if (j.is_object() && j.contains("id") && j["id"].is_number_integer() && !j["id"].is_number_unsigned())
    id = j["id"].get<int64_t>();
  else if (j.is_object() && j.contains("id") && j["id"].is_number_unsigned() && j["id"].get<uint64_t>() <= INT64_MAX)
    id = static_cast<int64_t>(j["id"].get<uint64_t>());
  if (!j.is_object()) throw ProtocolError(std::string(side) + " is not a JSON object: " + shown(j), id);
  return Fields(j, "", Message{side, id});
}

// --- requests -------------------------------------------------------------------------------------

// A bound input dim; the import then checks the tensor sizes they make.
constexpr int kMaxInputDim = std::numeric_limits<int>::max();

void put_model(json& j, const ModelRef& m) {
  j["model"] = m.path;
  j["target"] = m.target;
  j["pass_options"] = m.pass_options.is_null() ? json::object() : m.pass_options;  // `{}` in C++ is null
  if (!m.input_shapes.empty()) {
    json shapes = json::object();
    for (const auto& [name, shape] : m.input_shapes) shapes[name] = shape;
    j["input_shapes"] = shapes;
  }
}

ModelRef model_from(const Fields& f) {
  ModelRef m;
  m.path = f.string("model");
  m.target = f.string_or("target", "");
  if (auto options = f.optional("pass_options")) {
    options->object();  // the type; pipeline_options_from_json checks the keys
    m.pass_options = options->raw();
  }
  if (auto shapes = f.optional("input_shapes"))
    for (const auto& [name, dims] : shapes->object().entries()) {
      Shape shape;
      for (const Value& d : dims.array()) shape.push_back(d.integer_in(0, kMaxInputDim));
      m.input_shapes[name] = std::move(shape);
    }
  return m;
}

struct RequestEncoder {
  json& j;
  void operator()(const MeasureKernelRequest& r) const {
    put_model(j, r.model);
    j["kernel"] = r.kernel;
    j["schedule"] = r.schedule;
    j["seed"] = r.seed;
    j["min_time_ms"] = r.min_time_ms;
    if (!r.artifacts) j["artifacts"] = false;
    if (r.cache != CacheCondition::kWarm)
      j["cache"] = std::string(cache_condition_name(r.cache));  // absent: warm (older readers)
  }
  void operator()(const ProfileModelRequest& r) const {
    put_model(j, r.model);
    j["schedules"] = r.schedules;
    j["seed"] = r.seed;
    j["warmup"] = r.warmup;
    j["repeats"] = r.repeats;
  }
  void operator()(const CeilingsRequest& r) const { j["target"] = r.target; }
  void operator()(const CalibrateRequest& r) const {
    j["target"] = r.target;
    j["quick"] = r.quick;
  }
};

// --- replies --------------------------------------------------------------------------------------

json ceilings_or_null(const std::optional<analysis::MachineCeilings>& c) {
  return c ? analysis::ceilings_json(*c) : json(nullptr);
}

// analysis::ceilings_json's form, its types checked before ceilings_from_json reads it.
std::optional<analysis::MachineCeilings> ceilings_from(const Fields& f) {
  auto v = f.optional("ceilings");
  if (!v || v->is_null()) return std::nullopt;
  Fields c = v->object();
  c.string_or("machine", "");
  c.string_or("target", "");
  c.integer_in_or("threads", 1, 1 << 16, 1);
  for (const char* table : {"compute_gflops", "bandwidth_gbps"})
    if (auto t = c.optional(table))
      for (const auto& [name, value] : t->object().entries()) value.number();
  return analysis::ceilings_from_json(v->raw());
}

// analysis::run_times_json's form, checked likewise.
compile::RunTimes run_times_from(const Value& v) {
  Fields r = v.object();
  if (auto ms = r.optional("kernel_ms"))
    for (const Value& x : ms->array()) x.number();
  if (auto spans = r.optional("spans"))
    for (const Value& span : spans->array())
      for (const Value& x : span.tuple(2, "a [begin, end] pair")) x.number();
  if (auto spans = r.optional("thread_spans"))
    for (const Value& span : spans->array()) {
      std::vector<Value> t = span.tuple(4, "[kernel, thread, begin, end]");
      t[0].integer_in(0, INT_MAX);
      t[1].integer_in(0, INT_MAX);
      t[2].number();
      t[3].number();
    }
  r.number_or("total_ms", 0);
  try {  // the rest (copies, device spans, counters and lanes) is checked as it is read
    return analysis::run_times_from_json(v.raw());
  } catch (const std::exception& e) {
    v.fail(std::string("a run's times as run_times_json writes them (") + e.what() + ")");
  }
}

// analysis::profile_json's form (`tessel profile --json`).
analysis::Profile profile_from(const Fields& reply) {
  analysis::Profile p;
  Fields f = reply.at("profile").object();
  p.target = f.string_or("target", "");
  p.total_ms = f.number_or("total_ms", 0);
  p.repeats = f.integer_in_or("repeats", 0, INT_MAX, 0);
  for (const Value& kernel : f.at("kernels").array()) {
    Fields k = kernel.object();
    analysis::KernelProfile kp;
    kp.name = k.string("name");
    kp.compiled = k.boolean_or("compiled", true);
    kp.ms_min = k.number_or("ms_min", 0);
    kp.ms_median = k.number_or("ms_median", 0);
    kp.ms_q1 = k.number_or("ms_q1", kp.ms_median);
    kp.ms_q3 = k.number_or("ms_q3", kp.ms_median);
    kp.flops = k.integer_or("flops", 0);
    kp.bytes = k.integer_or("bytes", 0);
    kp.gflops = k.number_or("gflops", 0);
    kp.gbps = k.number_or("gbps", 0);
    kp.intensity = k.number_or("intensity", 0);
    if (auto bound = k.optional("bound"); bound && !bound->is_null()) kp.bound = bound->string();
    kp.attainable_gflops = k.number_or("attainable_gflops", 0);
    kp.placement = k.string_or("placement", "");
    kp.schedule = k.string_or("schedule", "");
    p.kernels.push_back(std::move(kp));
  }
  p.threads = reply.integer_in_or("threads", 1, 1 << 16, 1);
  if (auto last = reply.optional("last_run")) p.last_run = run_times_from(*last);
  return p;
}

KernelMeasured measured_from(const Fields& f) {
  KernelMeasured m;
  m.kernel = f.string("kernel");
  m.target = f.string_or("target", "");
  Value verdict = f.at("verdict");
  const std::string v = verdict.string();
  if (v != "correct" && v != "wrong") verdict.fail("\"correct\" or \"wrong\"");
  m.correct = v == "correct";
  m.max_abs_error = f.number_or("max_abs_error", 0);
  m.tolerance = f.number_or("tolerance", 0);
  m.ms_min = f.number_or("ms_min", 0);
  m.ms_median = f.number_or("ms_median", 0);
  m.ms_q1 = f.number_or("ms_q1", m.ms_median);
  m.ms_q3 = f.number_or("ms_q3", m.ms_median);
  m.repeats = f.integer_in_or("repeats", 0, INT_MAX, 0);
  m.flops = f.integer_or("flops", 0);
  m.bytes = f.integer_or("bytes", 0);
  m.gflops = f.number_or("gflops", 0);
  m.gbps = f.number_or("gbps", 0);
  m.intensity = f.number_or("intensity", 0);
  m.attainable_gflops = f.number_or("attainable_gflops", 0);
  m.bound = f.string_or("bound", "");
  m.compile_ms = f.number_or("compile_ms", 0);
  if (auto artifacts = f.optional("artifacts"))
    for (const Value& a : artifacts->array()) {
      std::vector<Value> pair = a.tuple(2, "a [name, text] pair");
      m.artifacts.emplace_back(pair[0].string(), pair[1].string());
    }
  return m;
}

struct ReplyEncoder {
  json& j;
  void operator()(const Failed& r) const {
    j["ok"] = false;
    j["error"] = r.error;
  }
  void operator()(const KernelMeasured& r) const {
    j["ok"] = true;
    j["reply"] = "measure";
    json artifacts = json::array();
    for (const auto& [name, text] : r.artifacts) artifacts.push_back({name, text});
    j.update({{"kernel", r.kernel},
              {"target", r.target},
              {"verdict", r.correct ? "correct" : "wrong"},
              {"max_abs_error", r.max_abs_error},
              {"tolerance", r.tolerance},
              {"ms_min", r.ms_min},
              {"ms_median", r.ms_median},
              {"ms_q1", r.ms_q1},
              {"ms_q3", r.ms_q3},
              {"repeats", r.repeats},
              {"flops", r.flops},
              {"bytes", r.bytes},
              {"gflops", r.gflops},
              {"gbps", r.gbps},
              {"intensity", r.intensity},
              {"attainable_gflops", r.attainable_gflops},
              {"bound", r.bound},
              {"compile_ms", r.compile_ms},
              {"artifacts", artifacts}});
  }
  void operator()(const ModelProfiled& r) const {
    j["ok"] = true;
    j["reply"] = "profile";
    j["profile"] = analysis::profile_json(r.profile);
    j["threads"] = r.profile.threads;
    j["last_run"] = analysis::run_times_json(r.profile.last_run);
    j["ceilings"] = ceilings_or_null(r.ceilings);
  }
  void operator()(const CeilingsKnown& r) const {
    j["ok"] = true;
    j["reply"] = "ceilings";
    j["ceilings"] = ceilings_or_null(r.ceilings);
  }
};

json parse_line(std::string_view line, const char* side) {
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ProtocolError(std::string(side) + " is not JSON: " + line_start(line));
  return j;
}

}  // namespace

std::string_view op_name(const Request& r) {
  static constexpr std::string_view kNames[] = {"measure", "profile", "ceilings", "calibrate"};
  return kNames[r.body.index()];
}

json to_json(const Request& r) {
  json j{{"id", r.id}, {"op", op_name(r)}};
  if (!r.inject.empty()) j["inject"] = r.inject;
  std::visit(RequestEncoder{j}, r.body);
  return j;
}

Request request_from_json(const json& j) {
  Fields f = top_level(j, "request");
  Request r;
  r.id = f.integer_or("id", 0);
  r.inject = f.string_or("inject", "");
  Value op = f.at("op");
  const std::string name = op.string();
  if (name == "measure") {
    MeasureKernelRequest m;
    m.model = model_from(f);
    m.kernel = f.string("kernel");
    m.schedule = f.string_or("schedule", "");
    m.seed = f.unsigned_or("seed", 1);
    m.min_time_ms = f.number_or("min_time_ms", 60);
    m.artifacts = f.boolean_or("artifacts", true);
    if (auto cache = f.optional("cache")) {
      const auto condition = parse_cache_condition(cache->string());
      if (!condition) cache->fail("\"warm\" or \"cold\"");
      m.cache = *condition;
    }
    r.body = std::move(m);
  } else if (name == "profile") {
    ProfileModelRequest p;
    p.model = model_from(f);
    if (auto schedules = f.optional("schedules"))
      for (const auto& [kernel, text] : schedules->object().entries()) p.schedules[kernel] = text.string();
    p.seed = f.unsigned_or("seed", 1);
    p.warmup = f.integer_in_or("warmup", 0, 1000, 2);
    p.repeats = f.integer_in_or("repeats", 1, 100000, 10);
    r.body = std::move(p);
  } else if (name == "ceilings") {
    r.body = CeilingsRequest{f.string_or("target", "")};
  } else if (name == "calibrate") {
    r.body = CalibrateRequest{f.string_or("target", ""), f.boolean_or("quick", false)};
  } else {
    op.fail("one of \"measure\", \"profile\", \"ceilings\", \"calibrate\"");
  }
  return r;
}

json to_json(const Reply& r) {
  json j{{"id", r.id}};
  std::visit(ReplyEncoder{j}, r.body);
  return j;
}

Reply reply_from_json(const json& j) {
  Fields f = top_level(j, "reply");
  Reply r;
  r.id = f.integer_or("id", 0);
  if (!f.at("ok").boolean()) {
    r.body = Failed{f.string("error")};
    return r;
  }
  Value kind = f.at("reply");
  const std::string name = kind.string();
  if (name == "measure")
    r.body = measured_from(f);
  else if (name == "profile")
    r.body = ModelProfiled{profile_from(f), ceilings_from(f)};
  else if (name == "ceilings")
    r.body = CeilingsKnown{ceilings_from(f)};
  else
    kind.fail("one of \"measure\", \"profile\", \"ceilings\"");
  return r;
}

std::string encode_line(const Request& r) {
  return to_json(r).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string encode_line(const Reply& r) {
  return to_json(r).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Request decode_request_line(std::string_view line) { return request_from_json(parse_line(line, "request")); }

Reply decode_reply_line(std::string_view line) { return reply_from_json(parse_line(line, "reply")); }

}  // namespace tessel::measure
