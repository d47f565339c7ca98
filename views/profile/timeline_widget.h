#pragma once
// The last profiled run as a timeline, one lane per thread: the executor runs kernels one after
// another on the calling thread (lane "kernels", each kernel a box from its start to its end), and
// their parallel loops fan out to the pool (lane "thread k": the chunks worker k ran, named by
// their kernel). Hover shows the kernel and its time; a click selects it. Painted by hand: a few
// dozen boxes need no scene.
//
//   0 ms        0.2         0.4         0.6
//   ├───────────┼───────────┼───────────┤
//   kernels  [lt][ conv2d_relu_1 ][ conv2d_add_relu_2 ][mp]...
//   thread 1      [ conv2d_relu_1 ] [conv2d_add_relu_2]
#include <QWidget>
#include <functional>
#include <string>
#include <vector>

#include "core/analysis/profile.h"

namespace tessel::views {

struct TimelineBox {
  std::string kernel;
  double begin_ms = 0, end_ms = 0;
};
struct TimelineLane {
  std::string name;
  std::vector<TimelineBox> boxes;
};
// The lanes of a profile's last run.
std::vector<TimelineLane> timeline_lanes(const analysis::Profile& p);

class TimelineWidget : public QWidget {
 public:
  explicit TimelineWidget(QWidget* parent = nullptr);
  void set_lanes(std::vector<TimelineLane> lanes);
  void set_selected_kernel(const QString& kernel);
  const std::vector<TimelineLane>& lanes() const { return lanes_; }
  std::function<void(const QString& kernel)> on_kernel_clicked;
  QSize sizeHint() const override { return {600, 110}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;

 private:
  QRectF box_rect(size_t lane, const TimelineBox& b) const;
  const TimelineBox* box_at(const QPointF& pos) const;
  double total_ms() const;

  std::vector<TimelineLane> lanes_;
  QString selected_;
};

}  // namespace tessel::views
