#include "views/session/session_document.h"

#include <filesystem>

#include "core/graph/passes/pipeline_options_json.h"
#include "core/schedule/schedule.h"
#include "core/support/error.h"
#include "views/common/json_reader.h"

namespace tessel::views {

namespace fs = std::filesystem;

namespace {

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

std::string non_empty_string(const JsonField& field) {
  std::string s = field.string();
  if (s.empty()) field.fail("must not be empty");
  return s;
}

// Relative to the session's folder when that is inside or near it; a path climbing to / is no
// better than absolute.
std::string path_for_session_file(const std::string& path, const std::string& session_dir) {
  if (session_dir.empty()) return path;
  const std::string relative = fs::path(path).lexically_relative(session_dir).generic_string();
  return !relative.empty() && relative.rfind("../../..", 0) != 0 ? relative : path;
}

std::string path_from_session_file(const std::string& path, const std::string& session_dir) {
  fs::path p = path;
  if (p.is_relative() && !session_dir.empty()) p = fs::path(session_dir) / p;
  return p.lexically_normal().string();
}

SessionDocument read_session(const JsonField& root, const std::string& session_dir) {
  root.expect_object();
  const JsonField format = root["format"];
  if (format.string() != "tessel-session")
    format.fail("must be \"tessel-session\", got \"" + quote_for_message(format.string()) + "\"");
  root["version"].integer(1, 1);  // the only version there is

  SessionDocument doc;
  const JsonField model = root["model"].expect_object();
  doc.model_path = path_from_session_file(non_empty_string(model["path"]), session_dir);
  if (auto sha = model.find("sha256")) {
    doc.model_sha256 = sha->string();
    if (!doc.model_sha256.empty() && !is_sha256_hex(doc.model_sha256)) sha->fail("must be 64 hexadecimal digits");
  }
  if (auto target = root.find("target")) doc.target = non_empty_string(*target);
  if (auto options = root.find("pass_options")) {
    options->expect_object();
    try {
      pipeline_options_from_json(options->json());  // a value of the wrong type is named now
    } catch (const Error& e) {
      options->fail("is wrong: " + std::string(e.what()));
    }
    doc.pass_options = options->json();
  }
  if (auto schedules = root.find("schedules")) {
    schedules->for_each_member([&](const std::string& kernel, const JsonField& text_field) {
      std::string text = text_field.string();
      try {
        schedule::parse_schedule(text);  // a bad step is named now, not when the kernel is opened
      } catch (const Error& e) {
        text_field.fail("is not a valid schedule: " + std::string(e.what()));
      }
      doc.schedules[kernel] = std::move(text);
    });
  }
  if (auto records = root.find("tuning_records"))
    doc.tuning_records = path_from_session_file(non_empty_string(*records), session_dir);
  return doc;
}

}  // namespace

nlohmann::json session_to_json(const SessionDocument& doc, const std::string& session_dir) {
  const std::string model = path_for_session_file(doc.model_path, session_dir);
  nlohmann::json j = {{"format", "tessel-session"},
                      {"version", 1},
                      {"model", {{"path", model}, {"sha256", doc.model_sha256}}},
                      {"target", doc.target},
                      {"pass_options", doc.pass_options}};
  if (!doc.schedules.empty()) j["schedules"] = doc.schedules;  // older readers never see an empty member
  if (!doc.tuning_records.empty()) j["tuning_records"] = path_for_session_file(doc.tuning_records, session_dir);
  return j;
}

SessionDocument session_from_json(const nlohmann::json& j, const std::string& session_dir, const std::string& what) {
  return read_session(JsonField(j, what), session_dir);
}

SessionDocument parse_session_text(std::string_view text, const std::string& session_dir, const std::string& what) {
  const nlohmann::json j = parse_json_text(text, what);
  return session_from_json(j, session_dir, what);
}

nlohmann::json recovery_to_json(const RecoveryRecord& record) {
  nlohmann::json j = {{"session", session_to_json(record.doc, "")},
                      {"session_path", record.session_path},
                      {"modified", record.modified}};
  if (!record.lesson_path.empty()) j["lesson"] = {{"path", record.lesson_path}, {"page", record.lesson_page}};
  for (const auto& [kernel, h] : record.histories)
    j["history"][kernel] = {{"states", h.states}, {"labels", h.labels}, {"index", h.index}};
  return j;
}

RecoveryRecord parse_recovery_text(std::string_view text, const std::string& what) {
  const nlohmann::json j = parse_json_text(text, what);
  const JsonField root(j, what);
  root.expect_object();
  RecoveryRecord r;
  r.doc = read_session(root["session"], "");
  if (auto path = root.find("session_path")) r.session_path = path->string();
  if (auto modified = root.find("modified")) r.modified = modified->boolean();
  if (auto lesson = root.find("lesson")) {
    r.lesson_path = non_empty_string((*lesson)["path"]);
    r.lesson_page = static_cast<int>((*lesson)["page"].integer(0, 9999));
  }
  if (auto history = root.find("history")) {
    history->for_each_member([&](const std::string& kernel, const JsonField& field) {
      ScheduleHistory h;
      field["labels"].for_each_element([&](const JsonField& label) { h.labels.push_back(label.string()); });
      if (h.labels.size() > kMaxHistoryEdits)
        field["labels"].fail("holds more than " + std::to_string(kMaxHistoryEdits) + " edits");
      field["states"].for_each_element([&](const JsonField& state) {
        std::string text = state.string();
        try {
          schedule::parse_schedule(text);
        } catch (const Error& e) {
          state.fail("is not a valid schedule: " + std::string(e.what()));
        }
        h.states.push_back(std::move(text));
      });
      if (h.states.size() != h.labels.size() + 1)
        field["states"].fail("must hold one more state than there are labels");
      h.index = static_cast<int>(field["index"].integer(0, static_cast<int64_t>(h.labels.size())));
      r.histories[kernel] = std::move(h);
    });
  }
  return r;
}

}  // namespace tessel::views
