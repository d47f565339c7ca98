#include "views/pipeline/pipeline_timeline.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>

namespace tessel::views {

namespace {
constexpr int kLabelWidth = 64;
constexpr int kAxisHeight = 22;
constexpr int kLaneHeight = 28;

// The kinds a DAE accelerator runs get fixed colours (loads blue, GEMM orange, ALU green, stores
// purple, token-only NOPs grey); any other kind a stable colour from its name.
QColor kind_color(const std::string& kind) {
  if (kind.starts_with("LOAD")) {
    const int shade = kind.ends_with("wgt") ? 150 : kind.ends_with("acc") ? 120 : 190;
    return QColor::fromHsv(212, 110, std::min(255, shade + 50));
  }
  if (kind == "GEMM") return QColor(245, 160, 70);
  if (kind.starts_with("ALU")) return QColor(120, 195, 110);
  if (kind.starts_with("STORE")) return QColor(175, 130, 210);
  if (kind == "NOP" || kind == "mixed") return QColor(190, 190, 190);
  return QColor::fromHsv(static_cast<int>(std::hash<std::string>{}(kind) % 360), 90, 225);
}

// 1, 2 or 5 times a power of ten, so that about `count` ticks fit.
double tick_step(double range, int count) {
  const double raw = std::max(range, 1e-9) / std::max(count, 1);
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

QString lane_list(const DeviceLanes& d, uint32_t mask) {
  QStringList names;
  for (size_t l = 0; l < d.lanes.size() && l < 32; ++l)
    if (mask & (1u << l)) names << QString::fromStdString(d.lanes[l]);
  return names.join(", ");
}

QString percent(int64_t part, int64_t whole) {
  return QString::number(whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0, 'f', 0) +
         "%";
}
}  // namespace

std::shared_ptr<const DeviceLanes> device_lanes_of(const analysis::Profile& p, const std::string& kernel) {
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    if (p.kernels[k].name != kernel) continue;
    if (p.kernels[k].device_lanes) return p.kernels[k].device_lanes;
    for (const compile::RunTimes::DeviceLaneSet& set : p.last_run.device_lanes)
      if (set.kernel == static_cast<int>(k)) return set.lanes;
  }
  return nullptr;
}

QString pipeline_summary_text(const DeviceLanes& d) {
  const LaneSummary& s = d.summary;
  QStringList parts{QObject::tr("%1 cycles").arg(s.cycles)};
  for (size_t l = 0; l < d.lanes.size() && l < s.busy.size(); ++l)
    parts << QString::fromStdString(d.lanes[l]) + " " + percent(s.busy[l], s.cycles);
  parts << QObject::tr("overlap %1 cycles (%2)").arg(s.overlap_cycles).arg(percent(s.overlap_cycles, s.cycles));
  return parts.join(" · ");
}

QString interval_text(const DeviceLanes& d, const DeviceInterval& i) {
  const QString kind = QString::fromStdString(d.kinds.at(static_cast<size_t>(i.kind)));
  const QString lane = QString::fromStdString(d.lanes.at(static_cast<size_t>(i.lane)));
  QString text =
      i.count == 1
          ? QObject::tr("instruction %1: %2 on %3").arg(i.first).arg(kind, lane)
          : QObject::tr("%1 instructions from %2: %3 on %4 (merged)").arg(i.count).arg(i.first).arg(kind, lane);
  text += QObject::tr("\ncycles %1 to %2 (%3)").arg(i.start).arg(i.end).arg(i.end - i.start);
  if (i.busy != i.end - i.start) text += QObject::tr(", busy %1").arg(i.busy);
  if (i.waits_on) text += QObject::tr("\nwaits for a token from: %1").arg(lane_list(d, i.waits_on));
  if (i.notifies) text += QObject::tr("\ngives a token to: %1").arg(lane_list(d, i.notifies));
  return text;
}

// ── The lanes ──────────────────────────────────────────────────────────────────────────────────

PipelineTimelineWidget::PipelineTimelineWidget(QWidget* parent) : QWidget(parent) {
  setObjectName("pipeline_timeline");
  setMouseTracking(true);
  setMinimumHeight(kAxisHeight + 3 * kLaneHeight + 8);
}

void PipelineTimelineWidget::set_lanes(std::shared_ptr<const DeviceLanes> lanes) {
  lanes_ = std::move(lanes);
  const int count = lanes_ ? static_cast<int>(std::max<size_t>(lanes_->lanes.size(), 1)) : 3;
  setMinimumHeight(kAxisHeight + count * kLaneHeight + 8);
  reset_view();
}

void PipelineTimelineWidget::reset_view() {
  view_begin_ = 0;
  view_end_ = lanes_ ? static_cast<double>(std::max<int64_t>(lanes_->cycles, 1)) : 1;
  update();
}

void PipelineTimelineWidget::set_view(double begin_cycle, double end_cycle) {
  const double total = lanes_ ? static_cast<double>(std::max<int64_t>(lanes_->cycles, 1)) : 1;
  // At least a few cycles wide, never past either end of the call.
  const double span = std::clamp(end_cycle - begin_cycle, std::min(4.0, total), total);
  view_begin_ = std::clamp(begin_cycle, 0.0, total - span);
  view_end_ = view_begin_ + span;
  update();
}

void PipelineTimelineWidget::zoom(double factor, double around_cycle) {
  const double begin = around_cycle - (around_cycle - view_begin_) / factor;
  const double end = around_cycle + (view_end_ - around_cycle) / factor;
  set_view(begin, end);
}

double PipelineTimelineWidget::plot_width() const { return std::max(1, width() - kLabelWidth - 8); }

double PipelineTimelineWidget::cycle_at(double x) const {
  return view_begin_ + (x - kLabelWidth) / plot_width() * (view_end_ - view_begin_);
}

QRectF PipelineTimelineWidget::interval_rect(const DeviceInterval& i) const {
  const double scale = plot_width() / std::max(view_end_ - view_begin_, 1e-9);
  const double x0 = kLabelWidth + (static_cast<double>(i.start) - view_begin_) * scale;
  const double x1 = kLabelWidth + (static_cast<double>(i.end) - view_begin_) * scale;
  return QRectF(x0, kAxisHeight + i.lane * kLaneHeight + 3, std::max(x1 - x0, 1.0), kLaneHeight - 6);
}

const DeviceInterval* PipelineTimelineWidget::interval_at(const QPointF& pos) const {
  if (!lanes_ || pos.x() < kLabelWidth) return nullptr;
  const int lane = static_cast<int>(std::floor((pos.y() - kAxisHeight) / kLaneHeight));
  if (lane < 0 || static_cast<size_t>(lane) >= lanes_->lanes.size()) return nullptr;
  // The lane's intervals are in start order: the last one starting at or before the pointer, if it
  // reaches it (a sliver narrower than a pixel still answers within half a pixel).
  const double cycle = cycle_at(pos.x());
  const double slack = 0.5 * (view_end_ - view_begin_) / plot_width();
  const auto& all = lanes_->intervals;
  auto first =
      std::lower_bound(all.begin(), all.end(), lane, [](const DeviceInterval& i, int l) { return i.lane < l; });
  auto last = std::upper_bound(first, all.end(), lane, [](int l, const DeviceInterval& i) { return l < i.lane; });
  auto after = std::upper_bound(first, last, cycle + slack,
                                [](double c, const DeviceInterval& i) { return c < static_cast<double>(i.start); });
  if (after == first) return nullptr;
  const DeviceInterval& hit = *std::prev(after);
  return static_cast<double>(hit.end) + slack >= cycle ? &hit : nullptr;
}

void PipelineTimelineWidget::paint_axis(QPainter& p) const {
  const double width = plot_width(), span = view_end_ - view_begin_;
  p.setPen(palette().color(QPalette::Text));
  const double step = tick_step(span, std::max(2, static_cast<int>(width / 90)));
  for (double t = std::ceil(view_begin_ / step) * step; t <= view_end_ + 1e-9; t += step) {
    const double x = kLabelWidth + (t - view_begin_) / span * width;
    p.drawLine(QPointF(x, kAxisHeight - 6), QPointF(x, kAxisHeight - 1));
    p.drawText(QPointF(x + 2, kAxisHeight - 8), QString::number(t, 'f', 0));
  }
  p.drawText(QRectF(2, 0, kLabelWidth - 4, kAxisHeight - 2), Qt::AlignBottom | Qt::AlignLeft, tr("cycle"));
  p.drawLine(QPointF(kLabelWidth, kAxisHeight - 1), QPointF(kLabelWidth + width, kAxisHeight - 1));
}

void PipelineTimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (!lanes_) return;
  paint_axis(p);
  const QRectF plot(kLabelWidth, kAxisHeight, plot_width(), static_cast<double>(lanes_->lanes.size()) * kLaneHeight);
  for (size_t l = 0; l < lanes_->lanes.size(); ++l) {
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRectF(2, kAxisHeight + static_cast<double>(l) * kLaneHeight, kLabelWidth - 4, kLaneHeight),
               Qt::AlignVCenter | Qt::AlignLeft, QString::fromStdString(lanes_->lanes[l]));
  }
  p.setClipRect(plot);
  for (const DeviceInterval& i : lanes_->intervals) {
    if (static_cast<double>(i.end) < view_begin_ || static_cast<double>(i.start) > view_end_) continue;
    const QRectF r = interval_rect(i);
    const std::string& kind = lanes_->kinds[static_cast<size_t>(i.kind)];
    p.fillRect(r, kind_color(kind));
    if (r.width() > 6) {
      p.setPen(QPen(QColor(90, 90, 90), 0.5));
      p.drawRect(r);
      // Tokens as markers: a notch at the top left where it waited for one, at the top right
      // where it gave one.
      p.setPen(Qt::NoPen);
      p.setBrush(QColor(60, 60, 60));
      if (i.waits_on) p.drawPolygon(QPolygonF{r.topLeft(), r.topLeft() + QPointF(4, 0), r.topLeft() + QPointF(0, 4)});
      if (i.notifies)
        p.drawPolygon(QPolygonF{r.topRight(), r.topRight() - QPointF(4, 0), r.topRight() + QPointF(0, 4)});
      p.setBrush(Qt::NoBrush);
    }
    if (r.width() > 40) {
      p.setPen(Qt::black);
      p.drawText(
          r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
          p.fontMetrics().elidedText(QString::fromStdString(kind), Qt::ElideRight, static_cast<int>(r.width()) - 5));
    }
  }
}

void PipelineTimelineWidget::wheelEvent(QWheelEvent* e) {
  if (!lanes_) return;
  const double steps = e->angleDelta().y() / 120.0;
  zoom(std::pow(1.25, steps), cycle_at(e->position().x()));
  e->accept();
}

void PipelineTimelineWidget::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  drag_from_ = e->position();
  drag_view_begin_ = view_begin_;
}

void PipelineTimelineWidget::mouseMoveEvent(QMouseEvent* e) {
  if (drag_from_) {
    const double cycles_per_pixel = (view_end_ - view_begin_) / plot_width();
    const double span = view_end_ - view_begin_;
    const double begin = drag_view_begin_ - (e->position().x() - drag_from_->x()) * cycles_per_pixel;
    set_view(begin, begin + span);
    return;
  }
  if (const DeviceInterval* i = interval_at(e->position()))
    QToolTip::showText(e->globalPosition().toPoint(), interval_text(*lanes_, *i), this);
  else
    QToolTip::hideText();
}

void PipelineTimelineWidget::mouseReleaseEvent(QMouseEvent*) { drag_from_.reset(); }

void PipelineTimelineWidget::mouseDoubleClickEvent(QMouseEvent*) { reset_view(); }

// ── The pane ───────────────────────────────────────────────────────────────────────────────────

PipelinePane::PipelinePane(QWidget* parent) : QWidget(parent) {
  setObjectName("pipeline");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 2, 0, 0);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  timeline_ = new PipelineTimelineWidget(this);
  layout->addWidget(summary_);
  layout->addWidget(timeline_, 1);
  show_kernel(nullptr, {});
}

void PipelinePane::show_kernel(const analysis::Profile* profile, const QString& kernel) {
  std::shared_ptr<const DeviceLanes> lanes;
  if (!profile) {
    summary_->setText(tr("No profile yet: profile the model on an accelerator target to see its units' pipeline."));
  } else if (kernel.isEmpty()) {
    summary_->setText(tr("Select a kernel to see its device pipeline."));
  } else if (!(lanes = device_lanes_of(*profile, kernel.toStdString()))) {
    summary_->setText(tr("%1: no device timeline (it did not run on a simulated accelerator).").arg(kernel));
  } else {
    QString text = kernel + ": " + pipeline_summary_text(*lanes);
    if (!lanes->note.empty()) text += "\n" + QString::fromStdString(lanes->note);
    summary_->setText(text);
  }
  timeline_->set_lanes(std::move(lanes));
  timeline_->setVisible(timeline_->lanes() != nullptr);
}

}  // namespace tessel::views
