#pragma once
// A Tessel session as saved in a `.tessel` file (JSON): which model, checked by its hash, for which
// target, with which pass options, and the hand schedules of the kernels the user edited (their
// text form, one step per line; kernels on their default schedule are absent).
//
//   {"format": "tessel-session", "version": 1,
//    "model": {"path": "../resources/models/mlp.onnx", "sha256": "9f2c…"},
//    "target": "ref", "pass_options": {"opt_level": 3},
//    "schedules": {"fused_matmul_add_2": "split(C.i, 8)\nparallel(C.i.outer)\n"}}
//
// The model path is written relative to the session file when possible, so a checkout that moves
// keeps working; it is absolute in memory.
#include <nlohmann/json.hpp>
#include <map>
#include <string>

namespace tessel::views {

struct SessionDocument {
  std::string model_path;    // absolute
  std::string model_sha256;  // of the model file when the session was made; empty if unknown
  std::string target = "ref";
  nlohmann::json pass_options = nlohmann::json::object();
  // Kernel name -> schedule text (schedule::to_text form; "#" comment lines such as the schedule
  // editor's "# disabled: STEP" are kept as written). Checked to parse when a session is loaded.
  std::map<std::string, std::string> schedules;

  bool operator==(const SessionDocument&) const = default;
};

// Lowercase hex SHA-256 of a file's bytes; throws Error naming the file when it cannot be read.
std::string file_sha256(const std::string& path);

nlohmann::json session_to_json(const SessionDocument& doc, const std::string& session_dir);
// Throws Error ("session.tessel: missing 'model.path'") on anything malformed.
SessionDocument session_from_json(const nlohmann::json& j, const std::string& session_dir, const std::string& what);

void save_session(const SessionDocument& doc, const std::string& path);  // atomic (write + rename)
SessionDocument load_session(const std::string& path);

}  // namespace tessel::views
