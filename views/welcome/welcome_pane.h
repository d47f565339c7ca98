#pragma once
// The welcome page: the bundled sample models and the recent files, each one click from open.
#include <QWidget>
#include <functional>

class QListWidget;
class QListWidgetItem;

namespace tessel::views {

class WelcomePane final : public QWidget {
 public:
  explicit WelcomePane(QWidget* parent = nullptr);
  // Lists the *.onnx files of `models_dir`, sorted by name.
  void set_samples_dir(const QString& models_dir);
  void set_recent_files(const QStringList& files);
  QStringList samples() const;
  std::function<void(const QString& path)> on_open = [](const QString&) {};
  std::function<void()> on_open_dialog = [] {};

  // The model opened when the studio starts without a file: the bundled sample listed first.
  static QString default_sample(const QString& models_dir);

 private:
  QListWidget* samples_;
  QListWidget* recent_;
};

}  // namespace tessel::views
