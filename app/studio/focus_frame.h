#pragma once
// A highlight-coloured frame drawn over the pane that holds the keyboard focus, so Alt+1…9 and Tab
// show where typing goes. It lets every click through and follows the pane's size.
//
//   auto* frame = new FocusFrame(window);
//   frame->frame(pane);   // moves over `pane` (null: hidden)
#include <QPointer>
#include <QWidget>

namespace tessel::studio {

class FocusFrame final : public QWidget {
 public:
  explicit FocusFrame(QWidget* parent);
  void frame(QWidget* pane);
  QWidget* target() const { return target_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;
  void paintEvent(QPaintEvent*) override;

 private:
  QPointer<QWidget> target_;
};

}  // namespace tessel::studio
