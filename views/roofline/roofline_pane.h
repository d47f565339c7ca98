#pragma once
// The roofline: a QtCharts log-log chart of achieved GFLOP/s against arithmetic intensity, with the
// machine's ceilings from calibration (each compute ceiling a horizontal line, each bandwidth a
// slope), one point per kernel (hover: name, GFLOP/s, intensity, % of attainable, binding
// ceiling), the selected kernel emphasized, and — after an edit moved it — an arrow from its
// previous position. Without ceilings it says so and offers "Calibrate" (the mediator runs it in the
// measuring process: KernelEditLoop::calibrate). No Q_OBJECT: callbacks are std::function.
//
// Usage (the mediator):
//   pane->on_calibrate_requested = [loop] { loop->calibrate(); };
//   pane->on_kernel_clicked = [selection](const QString& k) { selection->set_kernel(k); };
//   loop->profiled      → pane->set_profile(p)
//   loop->measured      → pane->set_measurement(m)
//   loop->ceilings_ready→ pane->set_ceilings(c->ceilings)   (and set_calibration_error(c->error))
//   selection->kernel_changed → pane->set_selected_kernel(k)
//   runner->started / ready / failed → pane->set_accelerator_pending() / set_accelerator_roofline(r) /
//                                      set_accelerator_error(e)
#include <QLabel>
#include <QPushButton>
#include <QWidget>
#include <functional>
#include <map>
#include <optional>

#include "views/common/kernel_results.h"
#include "views/roofline/roofline_data.h"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QGraphicsPolygonItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
QT_END_NAMESPACE

namespace tessel::views {

class RooflinePane : public QWidget {
 public:
  explicit RooflinePane(QWidget* parent = nullptr);
  ~RooflinePane() override;

  // A whole-model profile: replaces every point (and the ceilings when the profile has them).
  void set_profile(ModelProfilePtr profile);
  // One kernel measured after an edit: moves (or adds) its point; the old position gets an arrow.
  // Only kCorrect measurements move points (a failed or wrong kernel's time means nothing).
  void set_measurement(KernelMeasurementPtr m);
  void set_ceilings(const std::optional<analysis::MachineCeilings>& ceilings);
  void set_calibration_error(const QString& error);  // shown in the message bar
  void set_calibration_canceled();                   // the offer to calibrate comes back
  void set_selected_kernel(const QString& kernel);
  void clear();  // a new model

  // The accelerator's roofline (see above); null: back to kernel points.
  void set_accelerator_roofline(analysis::AccelRooflinePtr roofline);
  void set_accelerator_pending();  // "simulating ..." until the roofline arrives
  void set_accelerator_error(const QString& error);

  std::function<void()> on_calibrate_requested;
  std::function<void(const QString& kernel)> on_kernel_clicked;

  // Inspection (tests, the mediator).
  int point_count() const { return static_cast<int>(points_.size()); }
  bool has_ceilings() const { return ceilings_.has_value(); }
  bool has_arrow() const { return previous_.has_value(); }
  QString tooltip(const QString& kernel) const;  // empty when the kernel has no point
  QStringList not_shown() const;                 // kernels without FLOPs
  bool calibrate_offered() const;
  QLabel* legend() const { return legend_; }  // one entry per ceiling and point kind, wrapped
  bool shows_accelerator() const { return accelerator_ != nullptr; }
  int arrow_count() const;             // accelerator: one per layer; otherwise 0 or 1 (the edit)
  QStringList point_labels() const;    // accelerator: the layer labels drawn beside the points
  QString footnote() const;            // the note under the legend
  QString axis_titles() const;         // "x title | y title"
  QStringList ceiling_labels() const;  // the roofs' legend texts

  bool export_png(const QString& path) const;
  bool export_svg(const QString& path) const;

 private:
  void rebuild();              // series, ceilings and axes from points_ and ceilings_
  void rebuild_accelerator();  // the same from accelerator_
  void place_arrow_head();
  void place_accelerator_decorations();  // arrow heads and labels, in scene pixels
  const RooflinePoint* point_near(const QPointF& value) const;

  std::map<QString, RooflinePoint> points_;
  std::vector<std::string> not_shown_;
  std::optional<analysis::MachineCeilings> ceilings_;
  std::optional<RooflinePoint> previous_;  // the selected kernel's position before its last edit
  QString selected_;
  analysis::AccelRooflinePtr accelerator_;
  AcceleratorRooflineData accelerator_data_;
  QString accelerator_note_;  // pending or error text while there is no accelerator roofline
  std::vector<QGraphicsPolygonItem*> layer_heads_;
  std::vector<QGraphicsSimpleTextItem*> layer_labels_;
  std::vector<QLineSeries*> layer_arrows_;

  QLabel* message_ = nullptr;
  QPushButton* calibrate_ = nullptr;
  QWidget* message_bar_ = nullptr;
  QLabel* footnote_ = nullptr;
  QLabel* legend_ = nullptr;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLogValueAxis* x_axis_ = nullptr;
  QLogValueAxis* y_axis_ = nullptr;
  QScatterSeries* kernels_ = nullptr;
  QScatterSeries* selected_series_ = nullptr;
  QScatterSeries* previous_series_ = nullptr;
  QLineSeries* arrow_ = nullptr;
  QGraphicsPolygonItem* arrow_head_ = nullptr;
};

}  // namespace tessel::views
