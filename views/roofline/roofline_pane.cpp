#include "views/roofline/roofline_pane.h"

#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QGraphicsPolygonItem>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QScatterSeries>
#include <QSvgGenerator>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace tessel::views {

namespace {

const QColor kPointColor(52, 101, 164);
const QColor kSelectedColor(204, 0, 0);
// Accelerator: 1 virtual thread hollow, 2 filled, the arrow between them grey.
const QColor kOneThreadColor(117, 80, 123);
const QColor kTwoThreadsColor(32, 74, 135);
const QColor kLayerArrowColor(110, 110, 110);
// Ceilings of one kind share a hue and darken with rank, so the legend pairs them with their lines.
QColor ceiling_color(bool compute, int rank) {
  const QColor base = compute ? QColor(78, 154, 6) : QColor(206, 92, 0);
  return base.darker(100 + 70 * rank);
}

QLineSeries* segment_series(const CeilingSegment& s, int rank) {
  auto* series = new QLineSeries;
  series->setName(QString::fromStdString(s.label));
  series->append(s.x0, s.y0);
  series->append(s.x1, s.y1);
  QPen pen(ceiling_color(s.is_compute, rank));
  pen.setWidthF(1.6);
  pen.setStyle(s.is_compute ? Qt::SolidLine : Qt::DashLine);
  series->setPen(pen);
  return series;
}

QScatterSeries* scatter(const QString& name, const QColor& color, double size, bool hollow) {
  auto* s = new QScatterSeries;
  s->setName(name);
  s->setMarkerSize(size);
  s->setColor(hollow ? QColor(Qt::transparent) : color);
  s->setBorderColor(color);
  QPen pen(color);
  pen.setWidthF(hollow ? 2.0 : 1.0);
  s->setPen(pen);
  return s;
}

// A legend entry wraps as a whole: no break at its spaces or after the '/' of "GFLOP/s".
QString unbreakable(const QString& text) {
  return text.toHtmlEscaped().replace(' ', "&nbsp;").replace('/', QString::fromUtf8("/\u2060"));
}

// One entry per series but those in `skip`: a line's dash, or a point's dot (a ring for `hollow`).
QString legend_text(const QList<QAbstractSeries*>& series, const std::vector<const QAbstractSeries*>& skip,
                    const std::vector<const QAbstractSeries*>& hollow) {
  QStringList entries;
  for (QAbstractSeries* s : series) {
    if (std::find(skip.begin(), skip.end(), s) != skip.end()) continue;
    QString mark = QString::fromUtf8("●");
    QColor color = kPointColor;
    if (auto* line = qobject_cast<QLineSeries*>(s); line && !qobject_cast<QScatterSeries*>(s)) {
      mark = QString::fromUtf8(line->pen().style() == Qt::DashLine ? "╌╌" : "━━");
      color = line->pen().color();
    } else if (auto* points = qobject_cast<QScatterSeries*>(s)) {
      color = points->borderColor();
      if (std::find(hollow.begin(), hollow.end(), s) != hollow.end()) mark = QString::fromUtf8("○");
    }
    entries << QString("<span style=\"color:%1\">%2</span>&nbsp;%3").arg(color.name(), mark, unbreakable(s->name()));
  }
  return entries.join(" &nbsp; ");
}

}  // namespace

RooflinePane::RooflinePane(QWidget* parent) : QWidget(parent) {
  setObjectName("roofline");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  message_bar_ = new QWidget(this);
  auto* bar = new QHBoxLayout(message_bar_);
  bar->setContentsMargins(6, 2, 6, 2);
  message_ = new QLabel(tr("No machine ceilings for this target yet: calibrate once to see what bounds each kernel."),
                        message_bar_);
  message_->setWordWrap(true);
  calibrate_ = new QPushButton(tr("Calibrate"), message_bar_);
  calibrate_->setObjectName("calibrate");
  bar->addWidget(message_, 1);
  bar->addWidget(calibrate_);
  message_bar_->setStyleSheet("background: #fff4ce; color: #333;");
  QObject::connect(calibrate_, &QPushButton::clicked, this, [this] {
    calibrate_->setEnabled(false);
    message_->setText(tr("Calibrating in the measuring process…"));
    if (on_calibrate_requested) on_calibrate_requested();
  });
  layout->addWidget(message_bar_);

  chart_ = new QChart;
  chart_->setTitle(tr("Roofline"));
  // The chart's own legend elides its labels when the pane is narrow; ours wraps instead.
  chart_->legend()->hide();
  chart_->setMargins(QMargins(4, 4, 4, 4));
  x_axis_ = new QLogValueAxis;
  x_axis_->setTitleText(tr("arithmetic intensity (FLOP/byte)"));
  x_axis_->setLabelFormat("%g");
  x_axis_->setBase(10);
  y_axis_ = new QLogValueAxis;
  y_axis_->setTitleText(tr("GFLOP/s"));
  y_axis_->setLabelFormat("%g");
  y_axis_->setBase(10);
  chart_->addAxis(x_axis_, Qt::AlignBottom);
  chart_->addAxis(y_axis_, Qt::AlignLeft);
  view_ = new QChartView(chart_, this);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumHeight(360);  // QLogValueAxis labels collapse to "…" below ~350 px
  layout->addWidget(view_, 1);
  legend_ = new QLabel(this);
  legend_->setObjectName("roofline_legend");
  legend_->setWordWrap(true);
  legend_->setTextFormat(Qt::RichText);
  layout->addWidget(legend_);
  footnote_ = new QLabel(this);
  footnote_->setWordWrap(true);
  footnote_->setStyleSheet("color: gray;");
  layout->addWidget(footnote_);

  arrow_head_ = new QGraphicsPolygonItem(chart_);
  arrow_head_->setBrush(kSelectedColor);
  arrow_head_->setPen(Qt::NoPen);
  arrow_head_->setZValue(20);
  QObject::connect(chart_, &QChart::plotAreaChanged, this, [this] {
    place_arrow_head();
    place_accelerator_decorations();
  });
  rebuild();
}

RooflinePane::~RooflinePane() = default;

void RooflinePane::clear() {
  points_.clear();
  not_shown_.clear();
  previous_.reset();
  accelerator_.reset();
  accelerator_note_.clear();
  rebuild();
}

void RooflinePane::set_accelerator_roofline(analysis::AccelRooflinePtr roofline) {
  accelerator_ = std::move(roofline);
  accelerator_note_.clear();
  if (accelerator_) accelerator_data_ = accelerator_roofline_data(*accelerator_);
  rebuild();
}

void RooflinePane::set_accelerator_pending() {
  accelerator_.reset();
  accelerator_note_ = tr("Simulating every offloaded layer with 1 and with 2 virtual threads…");
  rebuild();
}

void RooflinePane::set_accelerator_error(const QString& error) {
  accelerator_.reset();
  accelerator_note_ = tr("The accelerator's roofline failed: %1").arg(error);
  rebuild();
}

int RooflinePane::arrow_count() const {
  if (accelerator_) return static_cast<int>(layer_arrows_.size());
  return arrow_ ? 1 : 0;
}

QStringList RooflinePane::point_labels() const {
  QStringList out;
  for (const QGraphicsSimpleTextItem* label : layer_labels_) out << label->text();
  return out;
}

QString RooflinePane::footnote() const { return footnote_->text(); }

QString RooflinePane::axis_titles() const { return x_axis_->titleText() + " | " + y_axis_->titleText(); }

QStringList RooflinePane::ceiling_labels() const {
  QStringList out;
  for (QAbstractSeries* s : chart_->series())
    if (auto* line = qobject_cast<QLineSeries*>(s);
        line && !qobject_cast<QScatterSeries*>(s) && line != arrow_ &&
        std::find(layer_arrows_.begin(), layer_arrows_.end(), line) == layer_arrows_.end())
      out << s->name();
  return out;
}

void RooflinePane::set_profile(ModelProfilePtr profile) {
  if (!profile) return;
  if (profile->ceilings) ceilings_ = profile->ceilings;
  RooflineData d = roofline_from_profile(profile->profile, ceilings_);
  points_.clear();
  for (RooflinePoint& p : d.points) points_[QString::fromStdString(p.kernel)] = std::move(p);
  not_shown_ = std::move(d.not_shown);
  previous_.reset();
  rebuild();
}

void RooflinePane::set_measurement(KernelMeasurementPtr m) {
  // Only a verified kernel has a speed worth plotting: a wrong one may skip most of its work.
  if (!m || m->verdict != KernelMeasurement::Verdict::kCorrect) return;
  RooflinePoint p = roofline_point(*m, ceilings_);
  if (!is_plottable(p)) return;
  const QString name = QString::fromStdString(p.kernel);
  auto it = points_.find(name);
  if (it != points_.end() && (it->second.gflops != p.gflops || it->second.intensity != p.intensity))
    previous_ = it->second;
  points_[name] = std::move(p);
  std::erase(not_shown_, m->kernel);
  rebuild();
}

void RooflinePane::set_ceilings(const std::optional<analysis::MachineCeilings>& ceilings) {
  ceilings_ = ceilings;
  calibrate_->setEnabled(true);
  // Points measured without ceilings learn what bounds them now.
  for (auto& [name, p] : points_)
    if (p.attainable_gflops <= 0 && ceilings_ && p.intensity > 0)
      p.attainable_gflops = ceilings_->attainable(p.intensity, &p.bound);
  rebuild();
}

void RooflinePane::set_calibration_canceled() {
  calibrate_->setEnabled(true);
  message_->setText(tr("No machine ceilings for this target yet: calibrate once to see what bounds each kernel."));
  rebuild();
}

void RooflinePane::set_calibration_error(const QString& error) {
  if (error.isEmpty()) return;
  calibrate_->setEnabled(true);
  message_->setText(tr("Calibration failed: %1").arg(error));
  message_bar_->show();
}

void RooflinePane::set_selected_kernel(const QString& kernel) {
  if (kernel == selected_) return;
  selected_ = kernel;
  rebuild();
}

QString RooflinePane::tooltip(const QString& kernel) const {
  if (accelerator_) {
    for (const AcceleratorLayerPoints& l : accelerator_data_.layers)
      if (l.two.kernel == kernel.toStdString())
        return QString::fromStdString(accelerator_point_tooltip(l.one) + "\n\n" + accelerator_point_tooltip(l.two));
    return {};
  }
  auto it = points_.find(kernel);
  return it == points_.end() ? QString() : QString::fromStdString(point_tooltip(it->second));
}

QStringList RooflinePane::not_shown() const {
  QStringList out;
  for (const std::string& k : not_shown_) out << QString::fromStdString(k);
  return out;
}

bool RooflinePane::calibrate_offered() const { return !message_bar_->isHidden() && calibrate_->isEnabled(); }

void RooflinePane::rebuild() {
  chart_->removeAllSeries();  // deletes them
  kernels_ = selected_series_ = previous_series_ = nullptr;
  arrow_ = nullptr;
  layer_arrows_.clear();
  for (QGraphicsPolygonItem* head : layer_heads_) delete head;
  for (QGraphicsSimpleTextItem* label : layer_labels_) delete label;
  layer_heads_.clear();
  layer_labels_.clear();
  if (accelerator_ || !accelerator_note_.isEmpty()) {
    rebuild_accelerator();
    return;
  }
  chart_->setTitle(tr("Roofline"));
  x_axis_->setTitleText(tr("arithmetic intensity (FLOP/byte)"));
  y_axis_->setTitleText(tr("GFLOP/s"));

  std::vector<RooflinePoint> all;
  for (const auto& [name, p] : points_) all.push_back(p);
  if (previous_) all.push_back(*previous_);
  const AxisRange range = axis_range(all, ceilings_);
  x_axis_->setRange(range.x_min, range.x_max);
  y_axis_->setRange(range.y_min, range.y_max);
  auto add = [this](QAbstractSeries* s) {
    chart_->addSeries(s);
    s->attachAxis(x_axis_);
    s->attachAxis(y_axis_);
  };

  if (ceilings_) {
    int compute_rank = 0, bandwidth_rank = 0;
    for (const CeilingSegment& s : ceiling_segments(*ceilings_, range))
      add(segment_series(s, s.is_compute ? compute_rank++ : bandwidth_rank++));
  }
  message_bar_->setVisible(!ceilings_);

  kernels_ = scatter(tr("kernels"), kPointColor, 10, false);
  selected_series_ = scatter(tr("selected"), kSelectedColor, 15, false);
  for (const auto& [name, p] : points_)
    (name == selected_ ? selected_series_ : kernels_)->append(p.intensity, p.gflops);
  if (previous_) {
    previous_series_ = scatter(tr("before the edit"), kSelectedColor, 12, true);
    previous_series_->append(previous_->intensity, previous_->gflops);
    const RooflinePoint& now = points_.at(QString::fromStdString(previous_->kernel));
    arrow_ = new QLineSeries;
    arrow_->setName(tr("edit"));
    arrow_->append(previous_->intensity, previous_->gflops);
    arrow_->append(now.intensity, now.gflops);
    QPen pen(kSelectedColor);
    pen.setWidthF(1.5);
    arrow_->setPen(pen);
    add(arrow_);
    add(previous_series_);
  }
  add(kernels_);
  add(selected_series_);
  for (QScatterSeries* s : {kernels_, selected_series_}) {
    QObject::connect(s, &QScatterSeries::hovered, this, [this](const QPointF& value, bool state) {
      const RooflinePoint* p = point_near(value);
      if (state && p)
        QToolTip::showText(QCursor::pos(), QString::fromStdString(point_tooltip(*p)), view_);
      else
        QToolTip::hideText();
    });
    QObject::connect(s, &QScatterSeries::clicked, this, [this](const QPointF& value) {
      if (const RooflinePoint* p = point_near(value); p && on_kernel_clicked)
        on_kernel_clicked(QString::fromStdString(p->kernel));
    });
  }
  // Only the ceilings and the point kinds need a legend entry; the arrow explains itself.
  legend_->setText(legend_text(chart_->series(), {arrow_}, {previous_series_}));

  QString note;
  if (points_.empty()) note = tr("No kernel measured yet: profile the model or edit a kernel's schedule.");
  if (!not_shown_.empty())
    note += (note.isEmpty() ? "" : " ") + tr("Not on the chart (no arithmetic): %1.").arg(not_shown().join(", "));
  footnote_->setText(note);
  footnote_->setVisible(!note.isEmpty());
  place_arrow_head();
}

void RooflinePane::rebuild_accelerator() {
  arrow_head_->hide();
  message_bar_->hide();  // the roofs come from the machine model: nothing to calibrate
  chart_->setTitle(tr("Roofline of the accelerator: 1 → 2 virtual threads"));
  x_axis_->setTitleText(tr("arithmetic intensity (op/byte)"));
  y_axis_->setTitleText(tr("GOP/s (int8)"));
  std::vector<RooflinePoint> all;
  for (const AcceleratorLayerPoints& l : accelerator_data_.layers) all.push_back(l.one), all.push_back(l.two);
  std::optional<analysis::MachineCeilings> ceilings;
  if (accelerator_) ceilings = accelerator_data_.ceilings;
  const AxisRange range = axis_range(accelerator_ ? all : std::vector<RooflinePoint>{}, ceilings);
  x_axis_->setRange(range.x_min, range.x_max);
  y_axis_->setRange(range.y_min, range.y_max);
  auto add = [this](QAbstractSeries* s) {
    chart_->addSeries(s);
    s->attachAxis(x_axis_);
    s->attachAxis(y_axis_);
  };
  if (ceilings)
    for (const CeilingSegment& s : ceiling_segments(*ceilings, range, "GOP/s")) add(segment_series(s, 0));

  QScatterSeries* one = scatter(tr("1 virtual thread"), kOneThreadColor, 10, true);
  QScatterSeries* two = scatter(tr("2 virtual threads"), kTwoThreadsColor, 10, false);
  if (accelerator_) {
    for (const AcceleratorLayerPoints& l : accelerator_data_.layers) {
      auto* arrow = new QLineSeries;
      arrow->setName(tr("1 → 2 virtual threads"));
      arrow->append(l.one.intensity, l.one.gflops);
      arrow->append(l.two.intensity, l.two.gflops);
      QPen pen(kLayerArrowColor);
      pen.setWidthF(1.2);
      arrow->setPen(pen);
      add(arrow);
      layer_arrows_.push_back(arrow);
      one->append(l.one.intensity, l.one.gflops);
      two->append(l.two.intensity, l.two.gflops);
      auto* head = new QGraphicsPolygonItem(chart_);
      head->setBrush(kLayerArrowColor);
      head->setPen(Qt::NoPen);
      head->setZValue(20);
      layer_heads_.push_back(head);
      auto* label = new QGraphicsSimpleTextItem(
          QString::fromStdString(l.two.kernel) + QString::fromUtf8("  %1×").arg(l.speedup, 0, 'f', 2), chart_);
      label->setZValue(21);
      layer_labels_.push_back(label);
    }
  }
  add(one);
  add(two);
  for (QScatterSeries* series : {one, two}) {
    const bool is_one = series == one;
    QObject::connect(series, &QScatterSeries::hovered, this, [this, is_one](const QPointF& value, bool state) {
      const RooflinePoint* best = nullptr;
      double best_distance = INFINITY;
      for (const AcceleratorLayerPoints& l : accelerator_data_.layers) {
        const RooflinePoint& p = is_one ? l.one : l.two;
        const double dx = std::log10(p.intensity) - std::log10(std::max(value.x(), 1e-12));
        const double dy = std::log10(p.gflops) - std::log10(std::max(value.y(), 1e-12));
        if (dx * dx + dy * dy < best_distance) best_distance = dx * dx + dy * dy, best = &p;
      }
      if (state && best)
        QToolTip::showText(QCursor::pos(), QString::fromStdString(accelerator_point_tooltip(*best)), view_);
      else
        QToolTip::hideText();
    });
  }
  std::vector<const QAbstractSeries*> skip(layer_arrows_.begin(), layer_arrows_.end());
  legend_->setText(legend_text(chart_->series(), skip, {one}) +
                   (layer_arrows_.empty()
                        ? QString()
                        : QString(" &nbsp; <span style=\"color:%1\">→</span>&nbsp;%2")
                              .arg(kLayerArrowColor.name(), unbreakable(tr("1 → 2 virtual threads")))));

  QString note = accelerator_note_;
  if (accelerator_) {
    note = tr("Roofs from the machine model (%1): GEMM core %2×%2 at %3 MHz, DRAM %4 B/cycle. Points: the "
              "simulator's operations, DRAM bytes and cycles of each offloaded layer.")
               .arg(QString::fromStdString(accelerator_->target))
               .arg(accelerator_->gemm)
               .arg(accelerator_->clock_mhz)
               .arg(accelerator_->memory_gbps * 1e3 / accelerator_->clock_mhz);
    if (accelerator_data_.layers.empty()) note += " " + tr("No kernel of this model is offloaded.");
    if (!accelerator_data_.not_shown.empty())
      note += " " + tr("%n kernel(s) run on the host (not on the chart).", "",
                       static_cast<int>(accelerator_data_.not_shown.size()));
  }
  footnote_->setText(note);
  footnote_->setVisible(!note.isEmpty());
  place_accelerator_decorations();
}

void RooflinePane::place_accelerator_decorations() {
  // Labels beside each layer's 2-thread point; layers at the same place stack their labels.
  std::vector<QRectF> placed;
  for (size_t k = 0; k < layer_arrows_.size() && k < accelerator_data_.layers.size(); ++k) {
    const AcceleratorLayerPoints& l = accelerator_data_.layers[k];
    const QPointF from = chart_->mapToPosition(QPointF(l.one.intensity, l.one.gflops), layer_arrows_[k]);
    const QPointF to = chart_->mapToPosition(QPointF(l.two.intensity, l.two.gflops), layer_arrows_[k]);
    const QPointF d = to - from;
    const double length = std::hypot(d.x(), d.y());
    if (length >= 8) {
      const QPointF unit = d / length, normal(-unit.y(), unit.x());
      const QPointF tip = to - unit * 5.5;  // stop at the marker's edge
      layer_heads_[k]->setPolygon(QPolygonF({tip, tip - unit * 8 + normal * 4, tip - unit * 8 - normal * 4}));
      layer_heads_[k]->show();
    } else {
      layer_heads_[k]->hide();  // no visible move: the points overlap
    }
    QGraphicsSimpleTextItem* label = layer_labels_[k];
    QRectF box(to + QPointF(8, -8), label->boundingRect().size());
    for (bool moved = true; moved;) {
      moved = false;
      for (const QRectF& other : placed)
        if (other.intersects(box)) box.moveTop(other.bottom() + 1), moved = true;
    }
    placed.push_back(box);
    label->setPos(box.topLeft());
  }
}

void RooflinePane::place_arrow_head() {
  if (!previous_ || !arrow_) {
    arrow_head_->hide();
    return;
  }
  const RooflinePoint& now = points_.at(QString::fromStdString(previous_->kernel));
  // In scene pixels, so the head keeps its shape on log axes.
  const QPointF from = chart_->mapToPosition(QPointF(previous_->intensity, previous_->gflops), arrow_);
  const QPointF to = chart_->mapToPosition(QPointF(now.intensity, now.gflops), arrow_);
  const QPointF d = to - from;
  const double length = std::hypot(d.x(), d.y());
  if (length < 1) {
    arrow_head_->hide();
    return;
  }
  const QPointF unit = d / length, normal(-unit.y(), unit.x());
  const QPointF tip = to - unit * 7.5;  // stop at the selected marker's edge
  arrow_head_->setPolygon(QPolygonF({tip, tip - unit * 10 + normal * 5, tip - unit * 10 - normal * 5}));
  arrow_head_->show();
}

const RooflinePoint* RooflinePane::point_near(const QPointF& value) const {
  const RooflinePoint* best = nullptr;
  double best_distance = INFINITY;
  for (const auto& [name, p] : points_) {
    // Compare in log space, where the chart draws them.
    const double dx = std::log10(p.intensity) - std::log10(std::max(value.x(), 1e-12));
    const double dy = std::log10(p.gflops) - std::log10(std::max(value.y(), 1e-12));
    const double distance = dx * dx + dy * dy;
    if (distance < best_distance) best_distance = distance, best = &p;
  }
  return best;
}

// Exports hold the chart and its legend.
bool RooflinePane::export_png(const QString& path) const {
  return legend_->parentWidget()->grab(view_->geometry().united(legend_->geometry())).save(path, "PNG");
}

bool RooflinePane::export_svg(const QString& path) const {
  QSvgGenerator svg;
  svg.setFileName(path);
  const QRect area = view_->geometry().united(legend_->geometry());
  svg.setSize(area.size());
  svg.setViewBox(QRect(QPoint(0, 0), area.size()));
  svg.setTitle(tr("Roofline"));
  QPainter painter;
  if (!painter.begin(&svg)) return false;
  view_->render(&painter, QRectF(view_->geometry().translated(-area.topLeft())));
  legend_->render(&painter, legend_->geometry().topLeft() - area.topLeft());
  return painter.end();
}

}  // namespace tessel::views
