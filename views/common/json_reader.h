#pragma once
// Reading JSON that someone else wrote (a session file, the recovery file after a crash, a lesson):
// every value is checked for its type and range before it is used, and every problem is one
// readable line that names the file and the field, never a JSON library's exception:
//
//   session.tessel: field 'schedules.fused_conv_1' must be a string, got number
//   recovery.tessel: not valid JSON: syntax error at line 1, column 7 ...
//
//   nlohmann::json j = parse_json_text(text, "session.tessel");
//   JsonField root(j, "session.tessel");
//   int version = static_cast<int>(root["version"].integer(1, 1));
//   if (auto target = root.find("target")) doc.target = target->string();
//
// Qt-free (nlohmann only), so fuzzers and the command line can use it. Values are never printed
// whole: a hostile file cannot make an error message huge or drive a terminal.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace tessel::views {

// Deeper nesting than this is refused before parsing: the library's comparisons and printing
// recurse, and no file of ours nests more than a few levels.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; throws Error "WHAT: not valid JSON: ..." (with line and column) or "WHAT: nested
// deeper than 64 levels".
nlohmann::json parse_json_text(std::string_view text, const std::string& what);

// "string", "number", "integer", "object", "array", "boolean", "null".
std::string json_type_name(const nlohmann::json& value);

// One value inside a parsed document, with the file it came from and its path from the root.
// Holds a reference: the document must outlive it.
class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string file, std::string path = {});

  const nlohmann::json& json() const { return *value_; }
  const std::string& path() const { return path_; }

  // Members of an object (the value must be one): a missing required member is an error.
  JsonField operator[](std::string_view key) const;
  std::optional<JsonField> find(std::string_view key) const;
  void for_each_member(const std::function<void(const std::string& key, const JsonField& value)>& fn) const;
  // Elements of an array (the value must be one).
  void for_each_element(const std::function<void(const JsonField& value)>& fn) const;

  const JsonField& expect_object() const;
  const JsonField& expect_array() const;
  std::string string() const;
  bool boolean() const;
  int64_t integer(int64_t min, int64_t max) const;

  // Throws Error "FILE: field 'PATH' PROBLEM" ("FILE: the top level PROBLEM" at the root).
  [[noreturn]] void fail(const std::string& problem) const;
  [[noreturn]] void fail_type(const std::string& expected) const;  // "... must be EXPECTED, got TYPE"

 private:
  JsonField child(std::string_view key, const nlohmann::json& value) const;

  const nlohmann::json* value_;
  std::string file_;
  std::string path_;
};

// `text` cut to `max` characters (with "…") and with control bytes escaped, for quoting a value.
std::string quote_for_message(std::string_view text, size_t max = 60);

}  // namespace tessel::views
