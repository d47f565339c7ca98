#include "core/attrs/attrs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessel {

std::string attr_value_kind(const AttrValue& v) {
  static const char* kNames[] = {"int", "float", "string", "ints", "floats", "strings", "tensor", "graph"};
  return kNames[v.index()];
}

std::string attr_value_str(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, double>) return attr_detail::to_text(static_cast<float>(x));
        else if constexpr (std::is_same_v<T, std::vector<double>>)
          return attr_detail::to_text(std::vector<float>(x.begin(), x.end()));
        else return attr_detail::to_text(x);
      },
      v);
}

AttrMap attr_map_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("attributes must be a JSON object");
  AttrMap map;
  for (const auto& [key, v] : j.items()) {
    if (v.is_number_integer()) {
      map[key] = v.get<int64_t>();
    } else if (v.is_number_float()) {
      map[key] = v.get<double>();
    } else if (v.is_string()) {
      map[key] = v.get<std::string>();
    } else if (v.is_boolean()) {
      map[key] = int64_t{v.get<bool>()};
    } else if (v.is_array()) {
      if (std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_number_integer(); }))
        map[key] = v.get<std::vector<int64_t>>();
      else if (std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_number(); }))
        map[key] = v.get<std::vector<double>>();
      else if (std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_string(); }))
        map[key] = v.get<std::vector<std::string>>();
      else
        throw Error("attribute '" + key + "': arrays must hold only numbers or only strings");
    } else if (v.is_object() && v.contains("dtype") && v.contains("shape") && v.contains("values")) {
      Tensor t(dtype_from_name(v["dtype"].get<std::string>()), v["shape"].get<Shape>());
      const auto& values = v["values"];
      if (static_cast<int64_t>(values.size()) != t.numel())
        throw Error("attribute '" + key + "': tensor has " + std::to_string(values.size()) +
                    " values for shape " + shape_str(t.shape()));
      for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, values[i].get<double>());
      map[key] = t;
    } else {
      throw Error("attribute '" + key + "': unsupported JSON value " + v.dump());
    }
  }
  return map;
}

namespace attr_detail {

namespace {
[[noreturn]] void kind_error(const char* expected, const AttrValue& got) {
  throw Error(std::string("expected ") + expected + ", got " + attr_value_kind(got) + " " + attr_value_str(got));
}
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
}  // namespace

void convert(const AttrValue& in, int64_t& out) {
  if (auto* p = std::get_if<int64_t>(&in)) out = *p;
  else kind_error("int", in);
}
void convert(const AttrValue& in, float& out) {
  if (auto* p = std::get_if<double>(&in)) out = static_cast<float>(*p);
  else if (auto* q = std::get_if<int64_t>(&in)) out = static_cast<float>(*q);
  else kind_error("float", in);
}
void convert(const AttrValue& in, std::string& out) {
  if (auto* p = std::get_if<std::string>(&in)) out = *p;
  else kind_error("string", in);
}
void convert(const AttrValue& in, std::vector<int64_t>& out) {
  if (auto* p = std::get_if<std::vector<int64_t>>(&in)) out = *p;
  else if (auto* d = std::get_if<std::vector<double>>(&in); d && d->empty()) out.clear();
  else if (auto* s = std::get_if<int64_t>(&in)) out = {*s};
  else kind_error("ints", in);
}
void convert(const AttrValue& in, std::vector<float>& out) {
  if (auto* p = std::get_if<std::vector<double>>(&in)) out.assign(p->begin(), p->end());
  else if (auto* q = std::get_if<std::vector<int64_t>>(&in)) out.assign(q->begin(), q->end());
  else if (auto* s = std::get_if<double>(&in)) out = {static_cast<float>(*s)};
  else kind_error("floats", in);
}
void convert(const AttrValue& in, std::vector<std::string>& out) {
  if (auto* p = std::get_if<std::vector<std::string>>(&in)) out = *p;
  else if (auto* q = std::get_if<std::vector<int64_t>>(&in); q && q->empty()) out.clear();
  else kind_error("strings", in);
}
void convert(const AttrValue& in, DataType& out) {
  if (auto* p = std::get_if<std::string>(&in)) out = dtype_from_name(*p);
  else if (auto* q = std::get_if<int64_t>(&in)) out = dtype_from_onnx(*q);
  else kind_error("dtype (name or ONNX type code)", in);
}
void convert(const AttrValue& in, Tensor& out) {
  if (auto* p = std::get_if<Tensor>(&in)) out = *p;
  else kind_error("tensor", in);
}
void convert(const AttrValue& in, GraphPtr& out) {
  if (auto* p = std::get_if<GraphPtr>(&in)) out = *p;
  else kind_error("graph", in);
}

std::string to_text(int64_t v) { return std::to_string(v); }
std::string to_text(float v) { return number_text(v); }
std::string to_text(const std::string& v) { return "\"" + v + "\""; }
std::string to_text(const std::vector<int64_t>& v) { return shape_str(v); }
std::string to_text(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + number_text(v[i]);
  return s + "]";
}
std::string to_text(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + to_text(v[i]);
  return s + "]";
}
std::string to_text(DataType v) { return std::string(dtype_name(v)); }
std::string to_text(const Tensor& v) {
  if (!v.defined()) return "none";
  // Exact values, so the graph text format can read the tensor back.
  std::string s = "tensor<" + std::string(dtype_name(v.dtype())) + shape_str(v.shape()) + ">[";
  for (int64_t i = 0; i < v.numel(); ++i) {
    const bool text = v.dtype() == DataType::kString;
    s += (i ? "," : "") + (text ? nlohmann::json(std::string(v.string_at(i))).dump() : number_text(v.get_double(i)));
  }
  return s + "]";
}

nlohmann::json to_json(int64_t v) { return v; }
nlohmann::json to_json(float v) { return static_cast<double>(v); }
nlohmann::json to_json(const std::string& v) { return v; }
nlohmann::json to_json(const std::vector<int64_t>& v) { return v; }
nlohmann::json to_json(const std::vector<float>& v) { return v; }
nlohmann::json to_json(const std::vector<std::string>& v) { return v; }
nlohmann::json to_json(DataType v) { return std::string(dtype_name(v)); }
nlohmann::json to_json(const Tensor& v) {
  if (!v.defined()) return nullptr;
  if (v.dtype() == DataType::kString)
    return {{"dtype", std::string(dtype_name(v.dtype()))}, {"shape", v.shape()}, {"values", v.strings()}};
  std::vector<double> values(static_cast<size_t>(v.numel()));
  for (int64_t i = 0; i < v.numel(); ++i) values[i] = v.get_double(i);
  return {{"dtype", std::string(dtype_name(v.dtype()))}, {"shape", v.shape()}, {"values", values}};
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

size_t hash_value(int64_t v) { return std::hash<int64_t>()(v); }
size_t hash_value(float v) { return std::hash<float>()(v); }
size_t hash_value(const std::string& v) { return std::hash<std::string>()(v); }
size_t hash_value(const std::vector<int64_t>& v) {
  size_t h = v.size();
  for (int64_t x : v) h = h * 1000003u ^ std::hash<int64_t>()(x);
  return h;
}
size_t hash_value(const std::vector<float>& v) {
  size_t h = v.size();
  for (float x : v) h = h * 1000003u ^ std::hash<float>()(x);
  return h;
}
size_t hash_value(const std::vector<std::string>& v) {
  size_t h = v.size();
  for (const auto& x : v) h = h * 1000003u ^ std::hash<std::string>()(x);
  return h;
}
size_t hash_value(DataType v) { return static_cast<size_t>(v); }
// A sub-graph is compared by identity (two nodes share a body only when they are copies of one
// node), so its address is its hash.
size_t hash_value(const GraphPtr& v) { return std::hash<const void*>()(v.get()); }
size_t hash_value(const Tensor& v) {
  if (!v.defined()) return 0;
  size_t h = hash_value(v.shape());
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.raw_data());
  for (size_t i = 0; i < std::min<size_t>(v.nbytes(), 256); ++i) h = h * 131 + bytes[i];
  return h;
}

std::string range_text(std::optional<double> lo, std::optional<double> hi, const std::vector<const char*>& choices) {
  if (!choices.empty()) {
    std::string s = "one of {";
    for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + std::string(choices[i]);
    return s + "}";
  }
  if (lo && hi) return "[" + number_text(*lo) + ", " + number_text(*hi) + "]";
  if (lo) return ">= " + number_text(*lo);
  if (hi) return "<= " + number_text(*hi);
  return "";
}

namespace {
void check_number(const char* field, double v, std::optional<double> lo, std::optional<double> hi) {
  if ((lo && v < *lo) || (hi && v > *hi) || std::isnan(v))
    throw Error(std::string("attribute '") + field + "': value " + number_text(v) + " is out of range (allowed " +
                range_text(lo, hi, {}) + ")");
}
}  // namespace

void check_bounds(const char* field, int64_t v, std::optional<double> lo, std::optional<double> hi) {
  check_number(field, static_cast<double>(v), lo, hi);
}
void check_bounds(const char* field, float v, std::optional<double> lo, std::optional<double> hi) {
  if (lo || hi) check_number(field, v, lo, hi);
}
void check_bounds(const char* field, const std::vector<int64_t>& v, std::optional<double> lo, std::optional<double> hi) {
  for (int64_t x : v) check_number(field, static_cast<double>(x), lo, hi);
}
void check_bounds(const char* field, const std::vector<float>& v, std::optional<double> lo, std::optional<double> hi) {
  if (lo || hi)
    for (float x : v) check_number(field, x, lo, hi);
}

void check_choice(const char* field, const std::string& v, const std::vector<const char*>& choices) {
  if (choices.empty()) return;
  for (const char* c : choices)
    if (v == c) return;
  throw Error(std::string("attribute '") + field + "': value \"" + v + "\" is not allowed (allowed " +
              range_text({}, {}, choices) + ")");
}

void FromMap::check_no_unknown(const std::vector<std::string>& known_extra) const {
  std::string unknown;
  for (const auto& [key, value] : map_) {
    if (std::find(used_.begin(), used_.end(), key) != used_.end()) continue;
    if (std::find(known_extra.begin(), known_extra.end(), key) != known_extra.end()) continue;
    unknown += (unknown.empty() ? "" : ", ") + key;
  }
  if (!unknown.empty()) throw Error("unknown attribute(s): " + unknown);
}

}  // namespace attr_detail
}  // namespace tessel
