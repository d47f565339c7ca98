#include "core/target/target.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/support/error.h"

namespace tessel {

std::string_view target_option_type_name(TargetOptionSpec::Type t) {
  switch (t) {
    case TargetOptionSpec::Type::kInt: return "int";
    case TargetOptionSpec::Type::kBool: return "bool";
    case TargetOptionSpec::Type::kString: return "string";
  }
  return "?";
}

std::string_view device_class_name(DeviceClass c) {
  switch (c) {
    case DeviceClass::kCpu: return "cpu";
    case DeviceClass::kGpu: return "gpu";
    case DeviceClass::kAccelerator: return "accelerator";
  }
  return "?";
}

const TargetOptionSpec* TargetKind::find_option(std::string_view option) const {
  for (const TargetOptionSpec& o : options)
    if (o.name == option) return &o;
  return nullptr;
}

int64_t host_vector_bits() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 512;
#endif
  return 256;
}

int64_t target_vector_floats(const Target& t) {
  const TargetOptionSpec* spec = t.kind_info().find_option("vector_bits");
  return spec ? std::max<int64_t>(1, t.get_int("vector_bits") / 32) : 1;
}

int target_threads(const Target& t) {
  return t.kind_info().find_option("num_threads") ? static_cast<int>(t.get_int("num_threads")) : 1;
}

namespace {

// The reference target: runs graphs with the op table's reference kernels. Its options describe
// the CPU that later kinds generate code for, so passes behave the same under `ref` and `llvm`.
TargetKind ref_kind() {
  TargetKind k;
  k.name = "ref";
  k.device = "cpu";
  k.doc = "Reference executor on the host CPU (the correctness oracle)";
  k.options.push_back({.name = "vector_bits",
                       .type = TargetOptionSpec::Type::kInt,
                       .doc = "SIMD register width in bits; sets the channel block of NCHW{c}c layouts",
                       .default_value = [] { return TargetOptionValue{host_vector_bits()}; },
                       .min = 32,
                       .max = 2048,
                       .choices = {}});
  k.options.push_back({.name = "num_threads",
                       .type = TargetOptionSpec::Type::kInt,
                       .doc = "Threads for parallel loops",
                       .default_value = [] { return TargetOptionValue{int64_t{1}}; },
                       .min = 1,
                       .max = 1024,
                       .choices = {}});
  return k;
}

std::string list_options(const TargetKind& k) {
  std::string s;
  for (const TargetOptionSpec& o : k.options)
    s += (s.empty() ? "" : ", ") + o.name + " (" + std::string(target_option_type_name(o.type)) + ")";
  return s.empty() ? "none" : s;
}

std::string value_text(const TargetOptionValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::get<std::string>(v);
}

// Converts command-line text to the option's type.
TargetOptionValue parse_option_text(const TargetKind& k, const TargetOptionSpec& spec, const std::string& text) {
  switch (spec.type) {
    case TargetOptionSpec::Type::kInt: {
      size_t used = 0;
      int64_t v = 0;
      try {
        v = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size())
        throw Error("target '" + k.name + "': option '" + spec.name + "' expects an integer, got '" + text + "'");
      return v;
    }
    case TargetOptionSpec::Type::kBool:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      throw Error("target '" + k.name + "': option '" + spec.name + "' expects true or false, got '" + text + "'");
    case TargetOptionSpec::Type::kString: return text;
  }
  return text;
}

}  // namespace

TargetKindRegistry::TargetKindRegistry() { add(ref_kind()); }

TargetKindRegistry& TargetKindRegistry::global() {
  static TargetKindRegistry registry;
  return registry;
}

void TargetKindRegistry::add(TargetKind kind) {
  if (kind.name.empty()) throw Error("a target kind needs a name");
  if (find(kind.name)) throw Error("target kind '" + kind.name + "' is already registered");
  for (const TargetOptionSpec& o : kind.options)
    if (!o.default_value) throw Error("target kind '" + kind.name + "': option '" + o.name + "' has no default");
  kinds_.push_back(std::make_shared<const TargetKind>(std::move(kind)));
}

const TargetKind* TargetKindRegistry::find(std::string_view name) const {
  for (const auto& k : kinds_)
    if (k->name == name) return k.get();
  return nullptr;
}

const TargetKind& TargetKindRegistry::get(std::string_view name) const { return *get_shared(name); }

std::shared_ptr<const TargetKind> TargetKindRegistry::get_shared(std::string_view name) const {
  for (const auto& k : kinds_)
    if (k->name == name) return k;
  std::string known;
  for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown target kind '" + std::string(name) + "' (registered: " + known + ")");
}

std::vector<std::string> TargetKindRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_) out.push_back(k->name);
  return out;
}

Target::Target(std::shared_ptr<const TargetKind> kind) : kind_(std::move(kind)) {
  for (const TargetOptionSpec& o : kind_->options) options_[o.name] = o.default_value();
}

Target Target::of_kind(std::string_view kind) {
  return Target(TargetKindRegistry::global().get_shared(kind));
}

void Target::set(std::string_view option, const TargetOptionValue& value) {
  const TargetOptionSpec* spec = kind_->find_option(option);
  if (!spec)
    throw Error("target '" + kind_->name + "' has no option '" + std::string(option) +
                "' (valid: " + list_options(*kind_) + ")");
  const bool type_ok = (spec->type == TargetOptionSpec::Type::kInt && std::holds_alternative<int64_t>(value)) ||
                       (spec->type == TargetOptionSpec::Type::kBool && std::holds_alternative<bool>(value)) ||
                       (spec->type == TargetOptionSpec::Type::kString && std::holds_alternative<std::string>(value));
  if (!type_ok)
    throw Error("target '" + kind_->name + "': option '" + spec->name + "' expects " +
                std::string(target_option_type_name(spec->type)) + ", got " + value_text(value));
  if (auto* i = std::get_if<int64_t>(&value); i && (*i < spec->min || *i > spec->max))
    throw Error("target '" + kind_->name + "': option '" + spec->name + "' = " + std::to_string(*i) +
                " is outside [" + std::to_string(spec->min) + ", " + std::to_string(spec->max) + "]");
  if (auto* s = std::get_if<std::string>(&value);
      s && !spec->choices.empty() && std::find(spec->choices.begin(), spec->choices.end(), *s) == spec->choices.end()) {
    std::string allowed;
    for (const std::string& c : spec->choices) allowed += (allowed.empty() ? "" : ", ") + c;
    throw Error("target '" + kind_->name + "': option '" + spec->name + "' = '" + *s + "' is not one of " + allowed);
  }
  if (spec->check)
    if (std::string why = spec->check(value); !why.empty())
      throw Error("target '" + kind_->name + "': option '" + spec->name + "': " + why);
  options_[spec->name] = value;
}

Target Target::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("a target in JSON must be an object with a \"kind\"");
  if (!j.contains("kind") || !j["kind"].is_string()) throw Error("target JSON needs a string field \"kind\"");
  Target t = of_kind(j["kind"].get<std::string>());
  for (const auto& [key, v] : j.items()) {
    if (key == "kind") continue;
    if (v.is_boolean()) t.set(key, v.get<bool>());
    else if (v.is_number_integer()) t.set(key, v.get<int64_t>());
    else if (v.is_string()) t.set(key, v.get<std::string>());
    else {
      const TargetOptionSpec* spec = t.kind_->find_option(key);
      if (!spec) t.set(key, int64_t{0});  // reports the unknown option with the valid ones
      throw Error("target '" + t.kind() + "': option '" + key + "' expects " +
                  std::string(target_option_type_name(spec->type)) + ", got " + v.dump());
    }
  }
  return t;
}

Target Target::parse(std::string_view spec) {
  size_t start = spec.find_first_not_of(" \t\n");
  if (start == std::string_view::npos) throw Error("empty target spec (try \"ref\")");
  if (spec[start] == '{') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(spec);
    } catch (const nlohmann::json::exception& e) {
      throw Error("target spec is not valid JSON: " + std::string(e.what()));
    }
    return from_json(j);
  }
  std::vector<std::string> words;
  std::string cur;
  bool quoted = false, in_word = false;
  for (char c : spec) {
    if (c == '"') {
      quoted = !quoted, in_word = true;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(cur));
      cur.clear(), in_word = false;
    } else {
      cur += c, in_word = true;
    }
  }
  if (quoted) throw Error("target spec: a '\"' is not closed");
  if (in_word) words.push_back(cur);
  if (words.empty()) throw Error("empty target spec (try \"ref\")");  // only whitespace such as \v or \f
  Target t = of_kind(words[0]);
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-')
      throw Error("target spec: expected -option=value, got '" + w + "'");
    std::string body = w.substr(w[1] == '-' ? 2 : 1);
    size_t eq = body.find('=');
    std::string name = body.substr(0, eq);
    const TargetOptionSpec* os = t.kind_->find_option(name);
    if (!os)
      throw Error("target '" + t.kind() + "' has no option '" + name + "' (valid: " + list_options(*t.kind_) + ")");
    if (eq == std::string::npos) {
      if (os->type != TargetOptionSpec::Type::kBool)
        throw Error("target '" + t.kind() + "': option '" + name + "' needs a value (-" + name + "=...)");
      t.set(name, true);
    } else {
      t.set(name, parse_option_text(*t.kind_, *os, body.substr(eq + 1)));
    }
  }
  return t;
}

const TargetOptionValue& Target::get(std::string_view option, TargetOptionSpec::Type type) const {
  const TargetOptionSpec* spec = kind_->find_option(option);
  if (!spec || spec->type != type)
    throw Error("target '" + kind_->name + "' has no " + std::string(target_option_type_name(type)) + " option '" +
                std::string(option) + "' (valid: " + list_options(*kind_) + ")");
  return options_.find(option)->second;
}

int64_t Target::get_int(std::string_view option) const {
  return std::get<int64_t>(get(option, TargetOptionSpec::Type::kInt));
}
bool Target::get_bool(std::string_view option) const { return std::get<bool>(get(option, TargetOptionSpec::Type::kBool)); }
const std::string& Target::get_string(std::string_view option) const {
  return std::get<std::string>(get(option, TargetOptionSpec::Type::kString));
}

std::string Target::str() const {
  std::string s = kind_->name;
  for (const auto& [name, v] : options_) {
    std::string text = value_text(v);
    const bool spaced =
        std::any_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
    s += " -" + name + "=" + (spaced ? "\"" + text + "\"" : text);
  }
  return s;
}

nlohmann::json Target::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  j["kind"] = kind_->name;
  // Not a structured binding: clang before 16 cannot capture one in a lambda.
  for (const auto& option : options_) std::visit([&](const auto& x) { j[option.first] = x; }, option.second);
  return j;
}

}  // namespace tessel
