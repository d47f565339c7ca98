#include "views/session/session_document.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include "core/schedule/schedule.h"
#include "core/support/error.h"

namespace tessel::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

std::string file_sha256(const std::string& path) {
  QFile f(q(path));
  if (!f.open(QIODevice::ReadOnly)) throw Error(path + ": cannot read the file");
  QCryptographicHash hash(QCryptographicHash::Sha256);
  hash.addData(&f);
  return hash.result().toHex().toStdString();
}

nlohmann::json session_to_json(const SessionDocument& doc, const std::string& session_dir) {
  QString model = q(doc.model_path);
  if (!session_dir.empty()) {
    QString relative = QDir(q(session_dir)).relativeFilePath(model);
    // Only inside-or-near the session's folder; a path climbing to / is no better than absolute.
    if (!relative.startsWith("../../..")) model = relative;
  }
  nlohmann::json j = {{"format", "tessel-session"},
                      {"version", 1},
                      {"model", {{"path", model.toStdString()}, {"sha256", doc.model_sha256}}},
                      {"target", doc.target},
                      {"pass_options", doc.pass_options}};
  if (!doc.schedules.empty()) j["schedules"] = doc.schedules;  // older readers never see an empty member
  return j;
}

SessionDocument session_from_json(const nlohmann::json& j, const std::string& session_dir, const std::string& what) {
  auto fail = [&](const std::string& reason) { return Error(what + ": " + reason); };
  if (!j.is_object()) throw fail("not a JSON object");
  if (j.value("format", "") != "tessel-session") throw fail("'format' is not \"tessel-session\"");
  if (j.value("version", 0) != 1) throw fail("unsupported 'version' (this studio reads version 1)");
  if (!j.contains("model") || !j["model"].is_object() || !j["model"].contains("path") ||
      !j["model"]["path"].is_string())
    throw fail("missing 'model.path'");
  SessionDocument doc;
  QString model = q(j["model"]["path"].get<std::string>());
  if (QFileInfo(model).isRelative() && !session_dir.empty()) model = QDir(q(session_dir)).absoluteFilePath(model);
  doc.model_path = QDir::cleanPath(model).toStdString();
  if (j["model"].contains("sha256") && j["model"]["sha256"].is_string()) doc.model_sha256 = j["model"]["sha256"];
  if (j.contains("target")) {
    if (!j["target"].is_string()) throw fail("'target' is not a string");
    doc.target = j["target"];
  }
  if (j.contains("pass_options")) {
    if (!j["pass_options"].is_object()) throw fail("'pass_options' is not an object");
    doc.pass_options = j["pass_options"];
  }
  if (j.contains("schedules")) {
    if (!j["schedules"].is_object()) throw fail("'schedules' is not an object of kernel name -> schedule text");
    for (auto it = j["schedules"].begin(); it != j["schedules"].end(); ++it) {
      if (!it.value().is_string()) throw fail("schedule of kernel '" + it.key() + "' is not a string");
      std::string text = it.value().get<std::string>();
      try {
        schedule::parse_schedule(text);  // a bad step is named now, not when the kernel is opened
      } catch (const Error& e) {
        throw fail("schedule of kernel '" + it.key() + "': " + e.what());
      }
      doc.schedules[it.key()] = std::move(text);
    }
  }
  return doc;
}

void save_session(const SessionDocument& doc, const std::string& path) {
  std::string dir = QFileInfo(q(path)).absolutePath().toStdString();
  std::string text = session_to_json(doc, dir).dump(2) + "\n";
  QSaveFile f(q(path));
  if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) < 0 || !f.commit())
    throw Error(path + ": cannot write the session (" + f.errorString().toStdString() + ")");
}

SessionDocument load_session(const std::string& path) {
  QFile f(q(path));
  if (!f.open(QIODevice::ReadOnly)) throw Error(path + ": cannot read the session file");
  QByteArray bytes = f.readAll();
  nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(path + ": not valid JSON");
  return session_from_json(j, QFileInfo(q(path)).absolutePath().toStdString(), path);
}

}  // namespace tessel::views
