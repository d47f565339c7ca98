#pragma once
// A Tessel session as saved in a `.tessel` file (JSON): which model, checked by its hash, for which
// target, with which pass options, and the hand schedules of the kernels the user edited (their
// text form, one step per line; kernels on their default schedule are absent).
//
//   {"format": "tessel-session", "version": 1,
//    "model": {"path": "../resources/models/mlp.onnx", "sha256": "9f2c…"},
//    "target": "ref", "pass_options": {"opt_level": 3},
//    "schedules": {"fused_matmul_add_2": "split(C.i, 8)\nparallel(C.i.outer)\n"},
//    "tuning_records": "mlp.records.jsonl"}
//
// The model and tuning-log paths are written relative to the session file when possible, so a
// checkout that moves keeps working; they are absolute in memory.
//
// A session file may come from anywhere: reading one checks every field's type and range, and an
// error names the file and the field ("s.tessel: field 'schedules.k' must be a string, got
// integer"). The JSON half (session_document.cpp) is Qt-free and never touches the disk:
// parse_session_text and parse_recovery_text take the file's text, so a fuzzer can drive them
// with nothing but the core library. The file half (session_file.cpp) uses QtCore.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::views {

struct SessionDocument {
  std::string model_path;    // absolute
  std::string model_sha256;  // of the model file when the session was made; empty if unknown
  std::string target = "ref";
  nlohmann::json pass_options = nlohmann::json::object();
  // Kernel name -> schedule text (schedule::to_text form; "#" comment lines such as the schedule
  // editor's "# disabled: STEP" are kept as written). Checked to parse when a session is loaded.
  std::map<std::string, std::string> schedules;
  // The Tuning pane's records log (absolute; core/tune/records.h's JSON lines, what `tessel tune
  // --records` writes, so `tessel build --records` applies it); empty: never tuned.
  std::string tuning_records;

  bool operator==(const SessionDocument&) const = default;
};

// One kernel's undo history in the schedule editor, as schedule texts (disabled steps as comments).
struct ScheduleHistory {
  std::vector<std::string> states;  // before the first edit, then after each edit
  std::vector<std::string> labels;  // the edits ("Add split(C.i, 8)"): one fewer than states
  int index = 0;                    // how many edits are done (the others were undone)

  bool operator==(const ScheduleHistory&) const = default;
};

// What the studio autosaves after every edit (the recovery file), and what a studio that was
// killed leaves for the next one:
//
//   {"session": {...a session, model path absolute...}, "session_path": "/home/u/s.tessel",
//    "modified": true, "lesson": {"path": "/…/lessons/optimize_matmul.json", "page": 2},
//    "history": {"fused_conv2d_0": {"states": ["", "split(C.i, 8)\n"], "labels": ["Add split"], "index": 1}}}
struct RecoveryRecord {
  SessionDocument doc;
  std::string session_path;  // the .tessel file the session was saved in; empty: never saved
  bool modified = true;
  std::string lesson_path;  // the lesson that was running; empty: none
  int lesson_page = 0;
  std::map<std::string, ScheduleHistory> histories;  // kernel -> undo history

  bool operator==(const RecoveryRecord&) const = default;
};

// Largest session or recovery file read (a real one is a few kilobytes).
inline constexpr size_t kMaxSessionFileBytes = size_t{16} << 20;
inline constexpr size_t kMaxHistoryEdits = 1000;  // per kernel, in a recovery file

// --- Qt-free (session_document.cpp) ---
nlohmann::json session_to_json(const SessionDocument& doc, const std::string& session_dir);
// Checks every field; throws Error naming `what` (the file) and the field on anything malformed.
// Relative model paths are resolved against `session_dir` (absolute, or empty: left as written).
SessionDocument session_from_json(const nlohmann::json& j, const std::string& session_dir, const std::string& what);
// The text of a .tessel file -> the document, or an Error naming the file and the field.
SessionDocument parse_session_text(std::string_view text, const std::string& session_dir, const std::string& what);

nlohmann::json recovery_to_json(const RecoveryRecord& record);
RecoveryRecord parse_recovery_text(std::string_view text, const std::string& what);

// --- QtCore (session_file.cpp) ---
// Lowercase hex SHA-256 of a file's bytes; throws Error naming the file when it cannot be read.
std::string file_sha256(const std::string& path);
void save_session(const SessionDocument& doc, const std::string& path);  // atomic (write + rename)
// Throws Error naming the file: unreadable, not a regular file, too large, or malformed.
SessionDocument load_session(const std::string& path);

}  // namespace tessel::views
