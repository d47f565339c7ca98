#include "studio_window_fixtures.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

#include "studio_fixtures.h"

namespace tessel::views::test {

void isolate_studio(const QString& application, const QString& home) {
  QStandardPaths::setTestModeEnabled(true);  // QSettings and autosave stay out of the user's folders
  QCoreApplication::setOrganizationName("TesselTest");
  QCoreApplication::setApplicationName(application);
  QSettings().clear();
  qputenv("TESSEL_CACHE_DIR", QDir(home).filePath("cache").toUtf8());
#ifdef TESSEL_MEASURE_EXE
  qputenv("TESSEL_MEASURE", TESSEL_MEASURE_EXE);  // inherited by the edit loop's measuring process
#endif
}

studio::MainWindowOptions window_options(const QString& home) {
  studio::MainWindowOptions options;
  options.models_dir = QFileInfo(sample_model()).absolutePath();
  options.lessons_dir = QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons");
  options.recovery_path = QDir(home).filePath("recovery.tessel");
  options.offer_recovery = false;
  return options;
}

std::unique_ptr<studio::MainWindow> show_window(const studio::MainWindowOptions& options) {
  auto w = std::make_unique<studio::MainWindow>(options);
  w->resize(1280, 820);
  w->show();
  return w;
}

bool open_and_wait(studio::MainWindow& w, const QString& model, int timeout_ms) {
  w.open_file(model);
  return w.controller()->wait_until_idle(timeout_ms) && w.panes().graph->wait_for_layout(timeout_ms);
}

}  // namespace tessel::views::test
