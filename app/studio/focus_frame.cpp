#include "app/studio/focus_frame.h"

#include <QEvent>
#include <QPainter>

namespace tessel::studio {

FocusFrame::FocusFrame(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_TransparentForMouseEvents);
  setAttribute(Qt::WA_NoSystemBackground);
  setFocusPolicy(Qt::NoFocus);
  hide();
}

void FocusFrame::frame(QWidget* pane) {
  if (pane == target_) return;
  if (target_) target_->removeEventFilter(this);
  target_ = pane;
  if (!pane) {
    hide();
    return;
  }
  setParent(pane);
  pane->installEventFilter(this);
  setGeometry(pane->rect());
  raise();
  show();
}

bool FocusFrame::eventFilter(QObject* watched, QEvent* e) {
  if (watched == target_ && e->type() == QEvent::Resize) setGeometry(target_->rect());
  if (watched == target_ && e->type() == QEvent::Destroy) target_ = nullptr;
  return false;
}

void FocusFrame::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setPen(QPen(palette().color(QPalette::Highlight), 2));
  p.drawRect(rect().adjusted(1, 1, -1, -1));
}

}  // namespace tessel::studio
