#include "core/tune/records.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/support/error.h"
#include "core/support/file_io.h"

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

namespace {

constexpr size_t kMaxLineBytes = size_t(16) << 20;
constexpr const char* kWhat = "tuning log";  // for file_io's messages: "PATH: is a FIFO, not a tuning log file"

// Whether the file's last byte is something other than a newline.
bool ends_torn(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) return false;
  char last = '\n';
  return ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

// Calls `line(number, text, ended, too_long)` for every line of a regular file (file_io refuses
// anything else before reading), in blocks: a line longer than kMaxLineBytes is passed on cut at
// that length with too_long set, never held whole.
template <class LineFn>
void for_each_line(const std::filesystem::path& log, LineFn&& line) {
  UniqueFd in(open_regular_file(log.string(), kWhat));
  std::string current;
  bool too_long = false;
  int number = 1;
  char block[65536];
  for (;;) {
    const ssize_t n = ::read(in.get(), block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(log.string() + ": read error: " + std::strerror(errno));
    if (n == 0) break;
    for (const char* p = block; p < block + n;) {
      const char* end = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(block + n - p)));
      const char* stop = end ? end : block + n;
      const size_t room = kMaxLineBytes - current.size();
      current.append(p, std::min(room, static_cast<size_t>(stop - p)));
      too_long = too_long || static_cast<size_t>(stop - p) > room;
      if (end) {
        line(number++, current, true, too_long);
        current.clear();
        too_long = false;
      }
      p = end ? end + 1 : stop;
    }
  }
  if (!current.empty() || too_long) line(number, current, false, too_long);
}

void write_line(const std::filesystem::path& log, int fd, const std::string& bytes) {
  if (!write_all(fd, bytes)) throw Error(log.string() + ": cannot write the tuning log: " + std::strerror(errno));
}

}  // namespace

bool repair_torn_tail(const std::filesystem::path& log) {
  std::error_code ec;
  if (!std::filesystem::exists(log, ec)) return false;
  UniqueFd out(open_regular_file_for_append(log.string(), kWhat));
  if (!ends_torn(out.get())) return false;
  write_line(log, out.get(), "\n");
  return true;
}

void append_record(const std::filesystem::path& log, const TuningRecord& r) {
  UniqueFd out(open_regular_file_for_append(log.string(), kWhat));
  write_line(log, out.get(), (ends_torn(out.get()) ? "\n" : "") + record_line(r) + '\n');
}

RecordLog read_record_log(const std::filesystem::path& log) {
  RecordLog result;
  for_each_line(log, [&](int number, const std::string& text, bool ended, bool too_long) {
    if (text.find_first_not_of(" \t\r") == std::string::npos && !too_long) return;
    const std::string where = log.string() + ":" + std::to_string(number);
    try {
      if (too_long) throw Error(where + ": line longer than 16 MiB");
      TuningRecord r = parse_record_line(text, where);
      try {
        schedule::parse_schedule(r.schedule);
      } catch (const Error& e) {
        throw Error(where + ": field 'schedule': " + e.what());
      }
      result.records.push_back(std::move(r));
    } catch (const Error& e) {
      result.skipped.push_back(std::string(e.what()) +
                               (ended ? "" : " (the last line is cut off: a tune killed while writing it?)"));
    }
  });
  return result;
}

std::vector<TuningRecord> read_records(const std::filesystem::path& log) {
  std::vector<TuningRecord> records;
  for_each_line(log, [&](int number, const std::string& text, bool, bool too_long) {
    if (text.find_first_not_of(" \t\r") == std::string::npos && !too_long) return;
    const std::string where = log.string() + ":" + std::to_string(number);
    if (too_long) throw Error(where + ": line longer than 16 MiB");
    records.push_back(parse_record_line(text, where));
  });
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
