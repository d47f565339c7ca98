#pragma once
// The accelerator's pipeline during one kernel call: one lane per unit (load, compute, store), each
// instruction a box from its start to its end cycle, coloured by its kind. Where the lanes' boxes
// stand above one another the units overlap (latency hidden); where only one lane is busy at a
// time they do not. The summary line states both in numbers.
//
//   5120 cycles · load 62% · compute 48% · store 9% · overlap 2900 cycles (57%)
//   cycle 0        1000       2000       3000
//   load     [LI][LW][LI][LW]   [LI][LW]
//   compute        [GEMM....][GEMM....][GEMM...]
//   store                        [ST]        [ST]
//
// Wheel: zoom on the cycle axis around the pointer; drag: pan; double-click: the whole call.
// Hover: the instruction (index, kind, cycles, tokens). Boxes wide enough carry the dependence
// tokens as notches: top left, it waited for one; top right, it gave one. The data are the profile's values
// (analysis::Profile::last_run.device_lanes, made by the measuring process); this only paints.
#include <QLabel>
#include <QWidget>
#include <memory>
#include <optional>
#include <string>

#include "core/analysis/profile.h"

namespace tessel::views {

// The device lanes of `kernel` in a profile: the kernel's own, else its last run's; null when it
// has none (it ran on the host, or the profile came from a CPU target).
std::shared_ptr<const DeviceLanes> device_lanes_of(const analysis::Profile& p, const std::string& kernel);

// "5120 cycles · load 62% · compute 48% · store 9% · overlap 2900 cycles (57%)", from the lanes'
// summary (taken before any merging, so exact).
QString pipeline_summary_text(const DeviceLanes& lanes);

// The tooltip of one interval: "instruction 12: GEMM on compute\ncycles 340 to 356 (16)\n...".
QString interval_text(const DeviceLanes& lanes, const DeviceInterval& interval);

class PipelineTimelineWidget : public QWidget {
 public:
  explicit PipelineTimelineWidget(QWidget* parent = nullptr);
  void set_lanes(std::shared_ptr<const DeviceLanes> lanes);  // null: nothing to draw
  const std::shared_ptr<const DeviceLanes>& lanes() const { return lanes_; }

  // The visible cycle range [begin, end); set_view clamps it into the call.
  void set_view(double begin_cycle, double end_cycle);
  double view_begin() const { return view_begin_; }
  double view_end() const { return view_end_; }
  void zoom(double factor, double around_cycle);  // factor > 1 zooms in
  void reset_view();

  // Geometry (tests): the cycle at widget x, and the interval under a point (null: none).
  double cycle_at(double x) const;
  const DeviceInterval* interval_at(const QPointF& pos) const;
  QRectF interval_rect(const DeviceInterval& i) const;

  QSize sizeHint() const override { return {600, 120}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;

 private:
  double plot_width() const;
  void paint_axis(QPainter& p) const;

  std::shared_ptr<const DeviceLanes> lanes_;
  double view_begin_ = 0, view_end_ = 1;
  std::optional<QPointF> drag_from_;
  double drag_view_begin_ = 0;
};

// The pane: the summary line above the lanes, or one line saying why there are none.
class PipelinePane : public QWidget {
 public:
  explicit PipelinePane(QWidget* parent = nullptr);
  // Shows `kernel` of the profile (null profile or empty kernel: a prompt).
  void show_kernel(const analysis::Profile* profile, const QString& kernel);
  QString summary_text() const { return summary_->text(); }
  PipelineTimelineWidget* timeline() const { return timeline_; }

 private:
  QLabel* summary_ = nullptr;
  PipelineTimelineWidget* timeline_ = nullptr;
};

}  // namespace tessel::views
