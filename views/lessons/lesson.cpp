#include "views/lessons/lesson.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/support/error.h"

namespace tessel::views {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string string_field(const json& j, const char* key, bool required) {
  if (!j.contains(key)) {
    if (required) throw Error(std::string("missing \"") + key + "\"");
    return {};
  }
  if (!j[key].is_string()) throw Error(std::string("\"") + key + "\" must be a string");
  return j[key].get<std::string>();
}

bool bool_field(const json& j, const char* key) {
  if (!j.contains(key)) return false;
  if (!j[key].is_boolean()) throw Error(std::string("\"") + key + "\" must be true or false");
  return j[key].get<bool>();
}

LessonPage parse_page(const json& j, const fs::path& dir) {
  if (!j.is_object()) throw Error("a page must be an object");
  LessonPage p;
  p.title = string_field(j, "title", true);
  p.text = string_field(j, "text", true);
  if (j.contains("open_model")) {
    const json& m = j["open_model"];
    if (!m.is_object()) throw Error("\"open_model\" must be an object with a \"path\"");
    fs::path model = dir / string_field(m, "path", true);
    if (!fs::exists(model)) throw Error("model " + model.string() + " does not exist");
    p.model_path = fs::weakly_canonical(model).string();
    if (m.contains("pass_options")) {
      if (!m["pass_options"].is_object()) throw Error("\"pass_options\" must be an object");
      p.pass_options = m["pass_options"];
    }
  }
  p.target = string_field(j, "target", false);
  p.kernel = string_field(j, "select_kernel", false);
  if (j.contains("schedule")) {
    const json& s = j["schedule"];
    if (p.kernel.empty()) throw Error("\"schedule\" needs \"select_kernel\" (whose schedule?)");
    if (s.is_string() && s.get<std::string>() == "default") {
      p.schedule_action = LessonPage::ScheduleAction::kDefault;
    } else if (s.is_array()) {
      std::string text;
      for (const json& line : s) {
        if (!line.is_string()) throw Error("\"schedule\" lines must be strings");
        text += line.get<std::string>() + "\n";
      }
      try {
        p.schedule = schedule::parse_schedule(text);
      } catch (const Error& e) {
        rethrow_with_context(e, "schedule");
      }
      p.schedule_action = LessonPage::ScheduleAction::kHand;
    } else {
      throw Error("\"schedule\" must be a list of steps or \"default\"");
    }
  }
  p.profile = bool_field(j, "profile");
  p.baseline = bool_field(j, "baseline");
  return p;
}

}  // namespace

std::string Lesson::model_at(size_t page) const {
  for (size_t k = std::min(page + 1, pages.size()); k-- > 0;)
    if (pages[k].model_path) return *pages[k].model_path;
  return {};
}

std::string Lesson::target_at(size_t page) const {
  for (size_t k = std::min(page + 1, pages.size()); k-- > 0;)
    if (!pages[k].target.empty()) return pages[k].target;
  return {};
}

Lesson load_lesson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the lesson");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(path + ": not a JSON object");
  if (!j.contains("format") || j["format"] != "tessel-lesson")
    throw Error(path + ": \"format\" is not \"tessel-lesson\"");
  Lesson lesson;
  lesson.path = path;
  try {
    lesson.title = string_field(j, "title", true);
    lesson.summary = string_field(j, "summary", false);
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
  if (!j.contains("pages") || !j["pages"].is_array() || j["pages"].empty()) throw Error(path + ": no \"pages\"");
  const fs::path dir = fs::path(path).parent_path();
  for (size_t k = 0; k < j["pages"].size(); ++k) {
    const json& page = j["pages"][k];
    const std::string where = path + ": page " + std::to_string(k + 1) +
                              (page.is_object() && page.contains("title") && page["title"].is_string()
                                   ? " '" + page["title"].get<std::string>() + "'"
                                   : "");
    try {
      lesson.pages.push_back(parse_page(page, dir));
      if (!lesson.pages.back().kernel.empty() && lesson.model_at(k).empty())
        throw Error("selects kernel '" + lesson.pages.back().kernel + "' before any page opens a model");
    } catch (const Error& e) {
      rethrow_with_context(e, where);
    }
  }
  return lesson;
}

std::vector<std::string> lesson_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tessel::views
