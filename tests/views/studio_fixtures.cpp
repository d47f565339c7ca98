#include "studio_fixtures.h"

#include <QDir>
#include <QProcessEnvironment>
#include <QSet>

#include "views/session/compile_model.h"

namespace tessel::views::test {

QString sample_model(const QString& name) {
  return QDir(QStringLiteral(TESSEL_SOURCE_DIR "/resources/models")).absoluteFilePath(name + ".onnx");
}

StudioSnapshotPtr compile_now(const QString& path, const std::string& target, const nlohmann::json& pass_options) {
  SessionDocument doc;
  doc.model_path = path.toStdString();
  doc.target = target;
  doc.pass_options = pass_options;
  return compile_model(doc, CompileProgress{});
}

nlohmann::json direct_convs() { return {{"disabled_passes", {"winograd_convs"}}}; }

int pass_index(const StudioSnapshot& snap, const std::string& name) {
  for (size_t i = 0; i < snap.passes.size(); ++i)
    if (snap.passes[i]->name == name) return static_cast<int>(i);
  return -1;
}

int distinct_colors(const QImage& image, int limit) {
  QSet<QRgb> seen;
  for (int y = 0; y < image.height(); y += 3)
    for (int x = 0; x < image.width(); x += 3) {
      seen.insert(image.pixel(x, y));
      if (seen.size() >= limit) return limit;
    }
  return static_cast<int>(seen.size());
}

QStringList child_environment(const QString& home) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  env.insert("XDG_CONFIG_HOME", home + "/config");
  env.insert("XDG_DATA_HOME", home + "/data");
  env.insert("XDG_RUNTIME_DIR", home + "/runtime");
  env.insert("TESSEL_CACHE_DIR", home + "/cache");  // machine ceilings: none unless the test calibrates
  QDir().mkpath(home + "/runtime");
  QFile::setPermissions(home + "/runtime", QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  return env.toStringList();
}

}  // namespace tessel::views::test
