#include "core/schedule/step.h"

#include <cctype>

#include "core/support/error.h"

namespace tessel::schedule {

const std::vector<StepKindInfo>& step_kinds() {
  static const std::vector<StepKindInfo> kinds = {
      {"split", "split(axis, factor) | split(axis, nparts=N)", "splits a loop into an outer and an inner loop"},
      {"tile", "tile(axis_x, axis_y, factor_x, factor_y)",
       "splits two loops and orders them x.outer, y.outer, x.inner, y.inner"},
      {"fuse", "fuse(axis_outer, axis_inner)", "merges two adjacent loops into one"},
      {"reorder", "reorder(axis, axis, ...)", "puts the listed loops, in this order, where they stood"},
      {"vectorize", "vectorize(axis)", "runs a loop as vector lanes"},
      {"unroll", "unroll(axis)", "replicates a loop's body"},
      {"parallel", "parallel(axis)", "runs a loop's iterations on threads"},
      {"bind", "bind(axis, blockIdx.x|blockIdx.y|blockIdx.z|threadIdx.x|threadIdx.y|threadIdx.z)",
       "binds a loop to a GPU block/thread index"},
      {"vthread", "vthread(axis)", "makes a loop virtual threads, interleaved into one instruction stream"},
      {"compute_at", "compute_at(stage, axis)", "computes a stage inside a consumer's loop, only the region it needs"},
      {"compute_inline", "compute_inline(stage)", "substitutes a stage's formula into its consumers"},
      {"compute_root", "compute_root(stage)", "computes a stage fully at the top level (the default)"},
      {"cache_read", "cache_read(tensor, scope, reader, ...)",
       "copies a tensor into a new stage TENSOR_SCOPE that the readers use"},
      {"cache_write", "cache_write(stage, scope)", "computes a stage into a new stage STAGE_SCOPE, then copies it out"},
      {"storage_align", "storage_align(axis, factor, offset)", "pads the stride of a root axis to factor*k + offset"},
      {"double_buffer", "double_buffer(stage)", "gives a compute_at stage two buffers used alternately"},
      {"pragma", "pragma(axis, auto_unroll_max_step=N)",
       "annotates a loop (unroll inner loops of at most N iterations)"},
      {"rfactor", "rfactor(reduction_axis)",
       "makes a reduction axis data-parallel in a new stage STAGE_rf, then reduces over it"},
      {"tensorize", "tensorize(axis, intrinsic)",
       "replaces the loop nest under a loop by a call of a declared tensor intrinsic"},
  };
  return kinds;
}

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
