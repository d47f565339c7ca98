#include "core/schedule/step.h"

#include <cctype>

#include "core/support/error.h"

namespace tessel::schedule {

const StepKindInfo* find_step_kind(const std::string& name) {
  for (auto& k : step_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

namespace {

std::string arg_text(const StepArg& a) {
  std::string v = a.is_int() ? std::to_string(std::get<int64_t>(a.value)) : std::get<std::string>(a.value);
  return a.key.empty() ? v : a.key + "=" + v;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool is_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return !std::isdigit(static_cast<unsigned char>(s[0])) && s[0] != '.';
}

bool parse_int(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
  try {
    *out = std::stoll(s);
  } catch (...) {
    return false;
  }
  return true;
}

std::string kind_list() {
  std::string out;
  for (auto& k : step_kinds()) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

}  // namespace

std::string to_string(const ScheduleStep& s) {
  std::string out = s.kind + "(";
  for (size_t i = 0; i < s.args.size(); ++i) out += (i ? ", " : "") + arg_text(s.args[i]);
  return out + ")";
}

ScheduleStep parse_step(const std::string& line) {
  std::string text = trim(line);
  auto open = text.find('(');
  if (open == std::string::npos || text.back() != ')')
    throw Error("schedule step '" + text + "': expected KIND(ARG, ...), e.g. split(C.i, 8)");
  ScheduleStep s;
  s.kind = trim(text.substr(0, open));
  if (!find_step_kind(s.kind))
    throw Error("schedule step '" + text + "': unknown step kind '" + s.kind + "' (known: " + kind_list() + ")");
  std::string inner = text.substr(open + 1, text.size() - open - 2);
  if (trim(inner).empty()) return s;
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    std::string piece = trim(inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    StepArg a;
    auto eq = piece.find('=');
    if (eq != std::string::npos) {
      a.key = trim(piece.substr(0, eq));
      piece = trim(piece.substr(eq + 1));
      if (!is_name(a.key)) throw Error("schedule step '" + text + "': bad argument key '" + a.key + "'");
    }
    int64_t v = 0;
    if (parse_int(piece, &v))
      a.value = v;
    else if (is_name(piece))
      a.value = piece;
    else
      throw Error("schedule step '" + text + "': argument '" + piece + "' is neither an integer nor a name");
    s.args.push_back(std::move(a));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return s;
}

nlohmann::json to_json(const ScheduleStep& s) {
  nlohmann::json args = nlohmann::json::array();
  for (auto& a : s.args) {
    nlohmann::json v =
        a.is_int() ? nlohmann::json(std::get<int64_t>(a.value)) : nlohmann::json(std::get<std::string>(a.value));
    if (a.key.empty())
      args.push_back(v);
    else
      args.push_back(nlohmann::json{{a.key, v}});
  }
  return nlohmann::json{{"kind", s.kind}, {"args", args}};
}

ScheduleStep step_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    throw Error("schedule step JSON: expected {\"kind\": ..., \"args\": [...]}, got " + j.dump());
  ScheduleStep s;
  s.kind = j["kind"].get<std::string>();
  if (!find_step_kind(s.kind))
    throw Error("schedule step JSON: unknown step kind '" + s.kind + "' (known: " + kind_list() + ")");
  if (!j.contains("args")) return s;
  if (!j["args"].is_array()) throw Error("schedule step JSON " + s.kind + ": 'args' must be an array");
  for (auto& a : j["args"]) {
    StepArg arg;
    const nlohmann::json* v = &a;
    if (a.is_object()) {
      if (a.size() != 1)
        throw Error("schedule step JSON " + s.kind + ": a keyed argument has exactly one key, got " + a.dump());
      arg.key = a.begin().key();
      v = &a.begin().value();
    }
    if (v->is_number_integer())
      arg.value = v->get<int64_t>();
    else if (v->is_string() && is_name(v->get<std::string>()))
      arg.value = v->get<std::string>();
    else
      throw Error("schedule step JSON " + s.kind + ": argument " + v->dump() + " is neither an integer nor a name");
    s.args.push_back(std::move(arg));
  }
  return s;
}

StepArg arg(int64_t v) { return StepArg{{}, v}; }
StepArg arg(std::string name) { return StepArg{{}, std::move(name)}; }
StepArg arg(const char* name) { return StepArg{{}, std::string(name)}; }
StepArg keyed(std::string key, int64_t v) { return StepArg{std::move(key), v}; }
ScheduleStep step(std::string kind, std::vector<StepArg> args) {
  return ScheduleStep{std::move(kind), std::move(args)};
}

}  // namespace tessel::schedule
