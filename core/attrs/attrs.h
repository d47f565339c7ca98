#pragma once
// Typed op attributes, declared once.
//
// Each op's attributes are a plain struct with one `visit` function that names every field, its
// default (or that it is required), bounds and a one-line description:
//
//   struct LeakyReluAttrs {
//     float alpha;
//     template <class V> void visit(V& v) {
//       v(alpha, {.name = "alpha", .doc = "Slope for x < 0", .def = 0.01f});
//     }
//   };
//
// Everything else is derived from that declaration by the visitors below: construction from an
// AttrMap (ONNX or JSON) with errors for unknown keys, wrong types, missing required fields and
// out-of-range values; equality; hashing; printing of non-default fields; JSON; documentation.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/attrs/attr_value.h"
#include "core/support/error.h"

namespace tessel {

template <class T> struct Field {
  const char* name;
  const char* doc;
  std::optional<T> def = std::nullopt;  // no default: the field is required
  std::optional<double> min = std::nullopt;  // for numbers and each element of a list
  std::optional<double> max = std::nullopt;
  std::vector<const char*> choices = {};     // for strings: the allowed values
};

// Documentation of one field, as `tessel ops --doc` and the studio's inspector show it.
struct FieldDoc {
  std::string name, type, default_value, doc, range;
  bool required = false;
};

namespace attr_detail {

template <class T> constexpr const char* type_name();
template <> constexpr const char* type_name<int64_t>() { return "int"; }
template <> constexpr const char* type_name<float>() { return "float"; }
template <> constexpr const char* type_name<std::string>() { return "string"; }
template <> constexpr const char* type_name<std::vector<int64_t>>() { return "ints"; }
template <> constexpr const char* type_name<std::vector<float>>() { return "floats"; }
template <> constexpr const char* type_name<std::vector<std::string>>() { return "strings"; }
template <> constexpr const char* type_name<DataType>() { return "dtype"; }
template <> constexpr const char* type_name<Tensor>() { return "tensor"; }
template <> constexpr const char* type_name<GraphPtr>() { return "graph"; }

// Conversions between field values and AttrValue; throw Error on a kind mismatch.
void convert(const AttrValue& in, int64_t& out);
void convert(const AttrValue& in, float& out);
void convert(const AttrValue& in, std::string& out);
void convert(const AttrValue& in, std::vector<int64_t>& out);
void convert(const AttrValue& in, std::vector<float>& out);
void convert(const AttrValue& in, std::vector<std::string>& out);
void convert(const AttrValue& in, DataType& out);
void convert(const AttrValue& in, Tensor& out);
void convert(const AttrValue& in, GraphPtr& out);

std::string to_text(int64_t v);
std::string to_text(float v);
std::string to_text(const std::string& v);
std::string to_text(const std::vector<int64_t>& v);
std::string to_text(const std::vector<float>& v);
std::string to_text(const std::vector<std::string>& v);
std::string to_text(DataType v);
std::string to_text(const Tensor& v);
std::string to_text(const GraphPtr& v);  // defined in core/graph/graph.cpp, which knows Graph

nlohmann::json to_json(int64_t v);
nlohmann::json to_json(float v);
nlohmann::json to_json(const std::string& v);
nlohmann::json to_json(const std::vector<int64_t>& v);
nlohmann::json to_json(const std::vector<float>& v);
nlohmann::json to_json(const std::vector<std::string>& v);
nlohmann::json to_json(DataType v);
nlohmann::json to_json(const Tensor& v);
nlohmann::json to_json(const GraphPtr& v);  // core/graph/graph.cpp

bool equal(const Tensor& a, const Tensor& b);
template <class T> bool equal(const T& a, const T& b) { return a == b; }
size_t hash_value(int64_t v);
size_t hash_value(float v);
size_t hash_value(const std::string& v);
size_t hash_value(const std::vector<int64_t>& v);
size_t hash_value(const std::vector<float>& v);
size_t hash_value(const std::vector<std::string>& v);
size_t hash_value(DataType v);
size_t hash_value(const Tensor& v);
size_t hash_value(const GraphPtr& v);

// Range and choice checks; the message names field, value and the allowed range.
void check_bounds(const char* field, int64_t v, std::optional<double> lo, std::optional<double> hi);
void check_bounds(const char* field, float v, std::optional<double> lo, std::optional<double> hi);
void check_bounds(const char* field, const std::vector<int64_t>& v, std::optional<double> lo, std::optional<double> hi);
void check_bounds(const char* field, const std::vector<float>& v, std::optional<double> lo, std::optional<double> hi);
template <class T> void check_bounds(const char*, const T&, std::optional<double>, std::optional<double>) {}
void check_choice(const char* field, const std::string& v, const std::vector<const char*>& choices);
template <class T> void check_choice(const char*, const T&, const std::vector<const char*>&) {}
std::string range_text(std::optional<double> lo, std::optional<double> hi, const std::vector<const char*>& choices);

// Builds fields from an AttrMap; records which keys it consumed so unknown ones can be reported.
class FromMap {
 public:
  explicit FromMap(const AttrMap& map) : map_(map) {}
  template <class T> void operator()(T& value, const Field<T>& f) {
    auto it = map_.find(f.name);
    if (it == map_.end()) {
      if (!f.def) throw Error(std::string("missing required attribute '") + f.name + "'");
      value = *f.def;
      return;
    }
    used_.push_back(f.name);
    try {
      convert(it->second, value);
    } catch (const Error& e) {
      throw Error(std::string("attribute '") + f.name + "': " + e.what());
    }
    check_bounds(f.name, value, f.min, f.max);
    check_choice(f.name, value, f.choices);
  }
  void check_no_unknown(const std::vector<std::string>& known_extra = {}) const;

 private:
  const AttrMap& map_;
  std::vector<std::string> used_;
};

struct PrintNonDefault {
  std::string out;
  template <class T> void operator()(const T& value, const Field<T>& f) {
    if (f.def && equal(*f.def, value)) return;
    out += (out.empty() ? "" : ", ") + std::string(f.name) + "=" + to_text(value);
  }
};

struct ToJson {
  nlohmann::json out = nlohmann::json::object();
  template <class T> void operator()(const T& value, const Field<T>& f) { out[f.name] = to_json(value); }
};

struct ToAttrMapEntries {  // every field as text, for the inspector
  std::vector<std::pair<std::string, std::string>> out;
  template <class T> void operator()(const T& value, const Field<T>& f) { out.emplace_back(f.name, to_text(value)); }
};

struct CollectSubgraphs {  // the graph fields, for whoever walks nested graphs
  std::vector<std::pair<std::string, GraphPtr>> out;
  template <class T> void operator()(const T& value, const Field<T>& f) {
    if constexpr (std::is_same_v<T, GraphPtr>)
      if (value) out.emplace_back(f.name, value);
  }
};

struct Documenter {
  std::vector<FieldDoc> out;
  template <class T> void operator()(const T&, const Field<T>& f) {
    out.push_back({f.name, type_name<T>(), f.def ? to_text(*f.def) : "", f.doc, range_text(f.min, f.max, f.choices),
                   !f.def});
  }
};

struct Hasher {
  size_t h = 0x9e3779b9;
  template <class T> void operator()(const T& value, const Field<T>&) {
    h ^= hash_value(value) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  }
};

// Visits two structs of the same type in lockstep: the first pass collects field addresses of `b`,
// the second compares each field of `a` against them.
struct CollectFields {
  std::vector<const void*> ptrs;
  template <class T> void operator()(const T& value, const Field<T>&) { ptrs.push_back(&value); }
};
struct CompareFields {
  const std::vector<const void*>& other;
  bool same = true;
  size_t i = 0;
  template <class T> void operator()(const T& value, const Field<T>&) {
    if (!equal(value, *static_cast<const T*>(other[i++]))) same = false;
  }
};
template <class A> bool attrs_equal(const A& a, const A& b) {
  CollectFields cb;
  const_cast<A&>(b).visit(cb);
  CompareFields cmp{cb.ptrs};
  const_cast<A&>(a).visit(cmp);
  return cmp.same;
}

}  // namespace attr_detail

// The type-erased handle nodes hold. Immutable once built.
class AttrsBase {
 public:
  virtual ~AttrsBase() = default;
  virtual const std::type_info& type() const = 0;
  virtual bool equals(const AttrsBase& other) const = 0;
  virtual size_t hash() const = 0;
  virtual std::string print_non_default() const = 0;  // "strides=[2,2], group=32"
  virtual nlohmann::json to_json() const = 0;
  virtual std::vector<std::pair<std::string, std::string>> fields() const = 0;  // every field
  virtual std::vector<FieldDoc> doc() const = 0;
  // The sub-graphs among the fields (If's branches, Loop's body), by field name; usually none.
  virtual std::vector<std::pair<std::string, GraphPtr>> subgraphs() const = 0;
};
using Attrs = std::shared_ptr<const AttrsBase>;

template <class A> class AttrsHolder final : public AttrsBase {
 public:
  explicit AttrsHolder(A value) : value_(std::move(value)) {}
  const A& value() const { return value_; }
  const std::type_info& type() const override { return typeid(A); }
  bool equals(const AttrsBase& other) const override {
    return other.type() == typeid(A) &&
           attr_detail::attrs_equal(value_, static_cast<const AttrsHolder&>(other).value_);
  }
  size_t hash() const override { return run<attr_detail::Hasher>().h; }
  std::string print_non_default() const override { return run<attr_detail::PrintNonDefault>().out; }
  nlohmann::json to_json() const override { return run<attr_detail::ToJson>().out; }
  std::vector<std::pair<std::string, std::string>> fields() const override {
    return run<attr_detail::ToAttrMapEntries>().out;
  }
  std::vector<FieldDoc> doc() const override { return run<attr_detail::Documenter>().out; }
  std::vector<std::pair<std::string, GraphPtr>> subgraphs() const override {
    return run<attr_detail::CollectSubgraphs>().out;
  }

 private:
  template <class V> V run() const {
    V v;
    const_cast<A&>(value_).visit(v);
    return v;
  }
  A value_;
};

// Builds A from `map`; errors name the op: "Conv: attribute 'group': value 0 is below the minimum 1".
template <class A> A attrs_from_map(const std::string& op, const AttrMap& map) {
  A a{};
  try {
    attr_detail::FromMap reader(map);
    a.visit(reader);
    reader.check_no_unknown();
  } catch (const Error& e) {
    throw Error(op + ": " + e.what());
  }
  return a;
}
template <class A> Attrs make_attrs(A a) { return std::make_shared<AttrsHolder<A>>(std::move(a)); }
template <class A> std::vector<FieldDoc> attrs_doc() {
  attr_detail::Documenter d;
  A a{};
  a.visit(d);
  return d.out;
}
// The typed struct behind a handle. The op table guarantees the type matches the node's op.
template <class A> const A& attrs_as(const Attrs& attrs) {
  return static_cast<const AttrsHolder<A>&>(*attrs).value();
}

// For ops without attributes.
struct NoAttrs {
  template <class V> void visit(V&) {}
};

}  // namespace tessel
