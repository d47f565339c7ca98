#include "views/welcome/welcome_pane.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace tessel::views {

namespace {

// The conventional order of the samples: the ResNet block is the one to show first.
QStringList sample_files(const QString& dir) {
  QStringList files = QDir(dir).entryList({"*.onnx"}, QDir::Files, QDir::Name);
  std::stable_sort(files.begin(), files.end(), [](const QString& a, const QString& b) {
    return a.startsWith("resnet") && !b.startsWith("resnet");
  });
  QStringList out;
  for (const QString& f : files) out << QDir(dir).absoluteFilePath(f);
  return out;
}

}  // namespace

WelcomePane::WelcomePane(QWidget* parent) : QWidget(parent) {
  setObjectName("welcome");
  auto* title = new QLabel(tr("<h1>Tessel Studio</h1><p>A deep-learning compiler you can watch and steer. "
                              "Open a sample to see its graph, every pass, the fusion groups and the memory plan.</p>"),
                           this);
  title->setWordWrap(true);
  samples_ = new QListWidget(this);
  recent_ = new QListWidget(this);
  auto* open = new QPushButton(tr("Open Model or Session…"), this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(40, 24, 40, 24);
  layout->addWidget(title);
  layout->addWidget(new QLabel(tr("<b>Sample models</b>"), this));
  layout->addWidget(samples_, 2);
  layout->addWidget(new QLabel(tr("<b>Recent files</b>"), this));
  layout->addWidget(recent_, 1);
  layout->addWidget(open, 0, Qt::AlignLeft);
  auto activate = [this](QListWidgetItem* item) { on_open(item->data(Qt::UserRole).toString()); };
  connect(samples_, &QListWidget::itemActivated, this, activate);
  connect(recent_, &QListWidget::itemActivated, this, activate);
  connect(samples_, &QListWidget::itemClicked, this, activate);
  connect(recent_, &QListWidget::itemClicked, this, activate);
  connect(open, &QPushButton::clicked, this, [this] { on_open_dialog(); });
}

void WelcomePane::set_samples_dir(const QString& models_dir) {
  samples_->clear();
  for (const QString& path : sample_files(models_dir)) {
    auto* item = new QListWidgetItem(QFileInfo(path).completeBaseName(), samples_);
    item->setData(Qt::UserRole, path);
    item->setToolTip(path);
  }
  if (samples_->count() == 0) samples_->addItem(tr("(no sample models in %1)").arg(models_dir));
}

void WelcomePane::set_recent_files(const QStringList& files) {
  recent_->clear();
  for (const QString& path : files) {
    auto* item = new QListWidgetItem(QFileInfo(path).fileName() + "  —  " + QFileInfo(path).absolutePath(), recent_);
    item->setData(Qt::UserRole, path);
  }
}

QStringList WelcomePane::samples() const {
  QStringList out;
  for (int i = 0; i < samples_->count(); ++i) {
    QString path = samples_->item(i)->data(Qt::UserRole).toString();
    if (!path.isEmpty()) out << path;
  }
  return out;
}

QString WelcomePane::default_sample(const QString& models_dir) {
  QStringList files = sample_files(models_dir);
  return files.isEmpty() ? QString() : files.first();
}

}  // namespace tessel::views
