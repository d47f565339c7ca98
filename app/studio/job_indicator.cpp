#include "app/studio/job_indicator.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

namespace tessel::studio {

JobIndicator::JobIndicator(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  label_ = new QLabel(this);
  bar_ = new QProgressBar(this);
  bar_->setRange(0, 0);  // busy: the job reports no fraction
  bar_->setMaximumWidth(120);
  bar_->setTextVisible(false);
  cancel_ = new QToolButton(this);
  cancel_->setText(tr("Cancel"));
  cancel_->setToolTip(tr("Stop this job; what it would have replaced stays as it was"));
  layout->addWidget(label_);
  layout->addWidget(bar_);
  layout->addWidget(cancel_);
  connect(cancel_, &QToolButton::clicked, this, [this] {
    finish();
    on_cancel();
  });
  connect(&timer_, &QTimer::timeout, this, [this] { tick(); });
  hide();
}

void JobIndicator::start(const QString& what) {
  what_ = what;
  running_ = true;
  elapsed_.start();
  timer_.start(1000);
  tick();
  show();
}

void JobIndicator::finish() {
  running_ = false;
  timer_.stop();
  hide();
}

QString JobIndicator::text() const { return label_->text(); }

void JobIndicator::tick() { label_->setText(tr("%1… %2 s").arg(what_).arg(elapsed_.elapsed() / 1000)); }

}  // namespace tessel::studio
