#include "views/profile/timeline_widget.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <cmath>

namespace tessel::views {

namespace {
constexpr int kLabelWidth = 64;
constexpr int kAxisHeight = 22;
constexpr int kLaneHeight = 28;

QColor kernel_color(const std::string& name) {
  // Stable per name: the same kernel keeps its colour across profiles.
  const size_t h = std::hash<std::string>{}(name);
  return QColor::fromHsv(static_cast<int>(h % 360), 90, 225);
}

// 1, 2 or 5 times a power of ten, so that about `count` ticks fit.
double tick_step(double range, int count) {
  const double raw = range / std::max(count, 1);
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}
}  // namespace

std::vector<TimelineLane> timeline_lanes(const analysis::Profile& p) {
  TimelineLane lane;
  lane.name = "kernels";  // the calling thread runs the kernels one after another
  for (size_t k = 0; k < p.kernels.size() && k < p.last_run.kernel_spans_ms.size(); ++k)
    lane.boxes.push_back(
        {p.kernels[k].name, p.last_run.kernel_spans_ms[k].first, p.last_run.kernel_spans_ms[k].second});
  if (lane.boxes.empty()) return {};
  // Pool threads: the chunks of parallel loops they ran, named by their kernel. The calling
  // thread's own chunks sit inside its kernel boxes already.
  std::vector<TimelineLane> lanes{lane};
  for (const compile::RunTimes::ThreadSpan& t : p.last_run.thread_spans) {
    if (t.thread <= 0 || t.kernel < 0 || static_cast<size_t>(t.kernel) >= p.kernels.size()) continue;
    if (lanes.size() <= static_cast<size_t>(t.thread)) lanes.resize(static_cast<size_t>(t.thread) + 1);
    TimelineLane& worker = lanes[static_cast<size_t>(t.thread)];
    worker.name = "thread " + std::to_string(t.thread);
    worker.boxes.push_back({p.kernels[static_cast<size_t>(t.kernel)].name, t.begin_ms, t.end_ms});
  }
  std::erase_if(lanes, [](const TimelineLane& l) { return l.boxes.empty(); });
  return lanes;
}

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
  setObjectName("timeline");
  setMouseTracking(true);
  setMinimumHeight(kAxisHeight + kLaneHeight + 12);
}

void TimelineWidget::set_lanes(std::vector<TimelineLane> lanes) {
  lanes_ = std::move(lanes);
  setMinimumHeight(kAxisHeight + kLaneHeight * static_cast<int>(std::max<size_t>(lanes_.size(), 1)) + 12);
  update();
}

void TimelineWidget::set_selected_kernel(const QString& kernel) {
  selected_ = kernel;
  update();
}

double TimelineWidget::total_ms() const {
  double end = 0;
  for (const TimelineLane& l : lanes_)
    for (const TimelineBox& b : l.boxes) end = std::max(end, b.end_ms);
  return end;
}

QRectF TimelineWidget::box_rect(size_t lane, const TimelineBox& b) const {
  const double width = std::max(1, this->width() - kLabelWidth - 8);
  const double scale = width / std::max(total_ms(), 1e-9);
  const double x0 = kLabelWidth + b.begin_ms * scale;
  const double x1 = kLabelWidth + b.end_ms * scale;
  return QRectF(x0, kAxisHeight + static_cast<double>(lane) * kLaneHeight + 3, std::max(x1 - x0, 1.5), kLaneHeight - 6);
}

const TimelineBox* TimelineWidget::box_at(const QPointF& pos) const {
  for (size_t l = 0; l < lanes_.size(); ++l)
    for (const TimelineBox& b : lanes_[l].boxes)
      if (box_rect(l, b).adjusted(-1, 0, 1, 0).contains(pos)) return &b;
  return nullptr;
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (lanes_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("No run yet: profile the model to see its timeline."));
    return;
  }
  const double total = total_ms();
  const double width = std::max(1, this->width() - kLabelWidth - 8);
  // Time axis.
  p.setPen(palette().color(QPalette::Text));
  const double step = tick_step(total, std::max(2, static_cast<int>(width / 90)));
  for (double t = 0; t <= total + 1e-12; t += step) {
    const double x = kLabelWidth + t / std::max(total, 1e-9) * width;
    p.drawLine(QPointF(x, kAxisHeight - 6), QPointF(x, kAxisHeight - 1));
    p.drawText(QPointF(x + 2, kAxisHeight - 8), QString::number(t, 'g', 3) + (t == 0 ? " ms" : ""));
  }
  p.drawLine(QPointF(kLabelWidth, kAxisHeight - 1), QPointF(kLabelWidth + width, kAxisHeight - 1));
  // Lanes.
  for (size_t l = 0; l < lanes_.size(); ++l) {
    const double y = kAxisHeight + static_cast<double>(l) * kLaneHeight;
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRectF(2, y, kLabelWidth - 4, kLaneHeight), Qt::AlignVCenter | Qt::AlignLeft,
               QString::fromStdString(lanes_[l].name));
    for (const TimelineBox& b : lanes_[l].boxes) {
      const QRectF r = box_rect(l, b);
      const bool selected = QString::fromStdString(b.kernel) == selected_;
      p.fillRect(r, kernel_color(b.kernel));
      p.setPen(selected ? QPen(QColor(204, 0, 0), 2) : QPen(QColor(90, 90, 90), 0.5));
      p.drawRect(r);
      if (r.width() > 40) {
        p.setPen(Qt::black);
        p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   p.fontMetrics().elidedText(QString::fromStdString(b.kernel), Qt::ElideRight,
                                              static_cast<int>(r.width()) - 5));
      }
    }
  }
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
  if (const TimelineBox* b = box_at(e->position()))
    QToolTip::showText(e->globalPosition().toPoint(),
                       QString("%1\n%2 ms (from %3 to %4 ms)")
                           .arg(QString::fromStdString(b->kernel))
                           .arg(b->end_ms - b->begin_ms, 0, 'f', 4)
                           .arg(b->begin_ms, 0, 'f', 4)
                           .arg(b->end_ms, 0, 'f', 4),
                       this);
  else
    QToolTip::hideText();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
  if (const TimelineBox* b = box_at(e->position()); b && on_kernel_clicked)
    on_kernel_clicked(QString::fromStdString(b->kernel));
}

}  // namespace tessel::views
