#include "views/common/json_reader.h"

#include <cctype>

#include "core/support/error.h"

namespace tessel::views {

namespace {

// The deepest nesting of [ and { outside strings, stopping early once past `limit`. Linear, no
// recursion; malformed text is the parser's business, not this scan's.
int nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

bool is_identifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

}  // namespace

std::string quote_for_message(std::string_view text, size_t max) {
  if (text.size() <= max) return printable(text);
  return printable(text.substr(0, max)) + "…";
}

nlohmann::json parse_json_text(std::string_view text, const std::string& what) {
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    throw Error(what + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 6: syntax error ..." without
    // the library's tag; the rest quotes the file, so it is escaped and cut.
    std::string message = e.what();
    if (size_t tag = message.find("] "); message.rfind("[json.exception", 0) == 0 && tag != std::string::npos)
      message = message.substr(tag + 2);
    throw Error(what + ": not valid JSON: " + quote_for_message(message, 240));
  }
}

std::string json_type_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  return value.type_name();
}

JsonField::JsonField(const nlohmann::json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

JsonField JsonField::child(std::string_view key, const nlohmann::json& value) const {
  std::string path = path_;
  if (is_identifier(key))
    path += (path.empty() ? "" : ".") + std::string(key);
  else
    path += "[\"" + quote_for_message(key, 40) + "\"]";
  return JsonField(value, file_, std::move(path));
}

JsonField JsonField::operator[](std::string_view key) const {
  if (std::optional<JsonField> member = find(key)) return *member;
  JsonField missing = child(key, *value_);
  throw Error(file_ + ": field '" + missing.path_ + "' is missing");
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return child(key, *it);
}

void JsonField::for_each_member(const std::function<void(const std::string&, const JsonField&)>& fn) const {
  expect_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) fn(it.key(), child(it.key(), it.value()));
}

void JsonField::for_each_element(const std::function<void(const JsonField&)>& fn) const {
  expect_array();
  for (size_t i = 0; i < value_->size(); ++i) fn(JsonField((*value_)[i], file_, path_ + "[" + std::to_string(i) + "]"));
}

const JsonField& JsonField::expect_object() const {
  if (!value_->is_object()) fail_type("an object");
  return *this;
}

const JsonField& JsonField::expect_array() const {
  if (!value_->is_array()) fail_type("a list");
  return *this;
}

std::string JsonField::string() const {
  if (!value_->is_string()) fail_type("a string");
  return value_->get<std::string>();
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail_type("true or false");
  return value_->get<bool>();
}

int64_t JsonField::integer(int64_t min, int64_t max) const {
  if (!value_->is_number_integer()) fail_type("an integer");
  // Unsigned values above INT64_MAX are out of every range we accept.
  if (value_->is_number_unsigned() && value_->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail("must be at most " + std::to_string(max));
  const int64_t v = value_->get<int64_t>();
  if (v < min || v > max)
    fail(min == max
             ? "must be " + std::to_string(min) + ", got " + std::to_string(v)
             : "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + std::to_string(v));
  return v;
}

void JsonField::fail(const std::string& problem) const {
  throw Error(file_ + ": " + (path_.empty() ? "the top level" : "field '" + path_ + "'") + " " + problem);
}

void JsonField::fail_type(const std::string& expected) const {
  fail("must be " + expected + ", got " + json_type_name(*value_));
}

}  // namespace tessel::views
