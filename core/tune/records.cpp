#include "core/tune/records.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/support/error.h"

namespace tessel::tune {

using nlohmann::json;

std::string kernel_key(const te::ComputeDag& dag) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : te::to_string(dag)) h = (h ^ c) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string record_line(const TuningRecord& r) {
  json j{{"kernel_key", r.kernel_key}, {"kernel", r.kernel},
         {"target", r.target},         {"schedule", r.schedule},
         {"ms_min", r.ms_min},         {"ms_median", r.ms_median},
         {"error", r.error},           {"cache", std::string(measure::cache_condition_name(r.cache))}};
  if (r.verified) j["verified"] = true;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

const json& field(const json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end()) throw Error(where + ": field '" + name + "' is missing");
  return *it;
}

std::string string_field(const json& j, const char* name, const std::string& where) {
  const json& v = field(j, name, where);
  if (!v.is_string()) throw Error(where + ": field '" + name + "': expected a string, got " + v.dump());
  return v.get<std::string>();
}

double time_field(const json& j, const char* name, const std::string& where) {
  const json& v = field(j, name, where);
  if (!v.is_number() || v.get<double>() < 0 || !std::isfinite(v.get<double>()))
    throw Error(where + ": field '" + name + "': expected a time in ms (a number ≥ 0), got " + v.dump());
  return v.get<double>();
}

}  // namespace

TuningRecord parse_record_line(const std::string& line, const std::string& where) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception&) {
    throw Error(where + ": not a JSON object (a tuning record is one JSON object per line)");
  }
  if (!j.is_object()) throw Error(where + ": expected a JSON object, got " + j.dump());
  TuningRecord r;
  r.kernel_key = string_field(j, "kernel_key", where);
  r.kernel = string_field(j, "kernel", where);
  r.target = string_field(j, "target", where);
  r.schedule = string_field(j, "schedule", where);
  r.ms_min = time_field(j, "ms_min", where);
  r.ms_median = time_field(j, "ms_median", where);
  r.error = string_field(j, "error", where);
  if (j.contains("cache")) {  // absent in logs written before it existed: warm
    const std::string cache = string_field(j, "cache", where);
    const auto condition = measure::parse_cache_condition(cache);
    if (!condition) throw Error(where + ": field 'cache': expected \"warm\" or \"cold\", got \"" + cache + "\"");
    r.cache = *condition;
  }
  if (auto v = j.find("verified"); v != j.end()) {
    if (!v->is_boolean()) throw Error(where + ": field 'verified': expected true or false, got " + v->dump());
    r.verified = v->get<bool>();
  }
  if (r.ok() && r.ms_min <= 0) throw Error(where + ": field 'ms_min': a record without an error needs a time > 0");
  return r;
}

void append_record(const std::filesystem::path& log, const TuningRecord& r) {
  std::ofstream out(log, std::ios::app);
  if (!out) throw Error(log.string() + ": cannot open the tuning log for appending");
  out << record_line(r) << '\n';
  out.flush();
  if (!out) throw Error(log.string() + ": cannot write the tuning log");
}

std::vector<TuningRecord> read_records(const std::filesystem::path& log) {
  std::ifstream in(log);
  if (!in) throw Error(log.string() + ": cannot read the tuning log");
  std::vector<TuningRecord> records;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line.size() > (16u << 20))
      throw Error(log.string() + ":" + std::to_string(number) + ": line longer than 16 MiB");
    records.push_back(parse_record_line(line, log.string() + ":" + std::to_string(number)));
  }
  return records;
}

BestRecords::BestRecords(const std::vector<TuningRecord>& records) {
  for (const TuningRecord& r : records) {
    if (!r.ok()) continue;
    auto [it, inserted] = best_.try_emplace({r.kernel_key, r.target}, r);
    if (inserted) continue;
    // Ranked by condition (cold first), then verified first, then time.
    auto rank = [](const TuningRecord& x) {
      return std::make_tuple(x.cache == measure::CacheCondition::kCold ? 0 : 1, x.verified ? 0 : 1, x.ms_min);
    };
    if (rank(r) < rank(it->second)) it->second = r;
  }
}

const TuningRecord* BestRecords::best(const std::string& kernel_key, const std::string& target) const {
  auto it = best_.find({kernel_key, target});
  return it == best_.end() ? nullptr : &it->second;
}

std::optional<schedule::Schedule> BestRecords::schedule_for(const te::ComputeDag& dag,
                                                            const std::string& target) const {
  const TuningRecord* r = best(kernel_key(dag), target);
  if (!r) return std::nullopt;
  return schedule::parse_schedule(r->schedule);
}

}  // namespace tessel::tune
