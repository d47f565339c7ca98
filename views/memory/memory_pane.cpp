#include "views/memory/memory_pane.h"

#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include "views/graph/graph_items.h"

namespace tessel::views {

QString format_bytes_short(int64_t b) {
  if (b >= (int64_t{1} << 20)) return QString::number(static_cast<double>(b) / (1 << 20), 'f', 2) + " MiB";
  if (b >= 1024) return QString::number(static_cast<double>(b) / 1024, 'f', 1) + " KiB";
  return QString::number(b) + " B";
}

class MemoryChart final : public QWidget {
 public:
  MemoryChart(Selection* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
    setMouseTracking(true);
  }

  void set_snapshot(StudioSnapshotPtr snap) {
    snap_ = std::move(snap);
    bars_.clear();
    if (plan() && snap_->optimized) {
      const Graph& g = *snap_->optimized;
      for (const PlannedTensor& t : plan()->tensors) {
        Bar b;
        b.tensor = &t;
        b.value = QString::fromStdString(g.value(t.value).name);
        NodeId producer = g.value(t.value).producer;
        if (producer >= 0) b.producer = QString::fromStdString(g.nodes[static_cast<size_t>(producer)].name);
        bars_.push_back(b);
      }
    }
    int rows = plan() ? static_cast<int>(plan()->storages.size()) : 0;
    setMinimumSize(kLabelWidth + steps() * kMinStep + 20, kTop + rows * kRow + 30);
    update();
  }
  void set_highlight(const QString& node) {
    highlight_ = node;
    update();
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    p.setPen(palette().color(QPalette::Text));
    if (!plan()) {
      p.drawText(rect(), Qt::AlignCenter, tr("No memory plan (the pipeline did not plan memory)"));
      return;
    }
    const MemoryPlan& m = *plan();
    const double step_w = step_width();
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    QFont f = font();
    f.setPointSizeF(8);
    p.setFont(f);
    for (size_t r = 0; r < m.storages.size(); ++r) {
      int y = kTop + static_cast<int>(r) * kRow;
      if (r % 2) p.fillRect(0, y, width(), kRow, palette().color(QPalette::AlternateBase));
      p.setPen(palette().color(QPalette::Text));
      p.drawText(QRect(4, y, kLabelWidth - 8, kRow), Qt::AlignVCenter | Qt::AlignLeft,
                 tr("storage %1 · %2").arg(m.storages[r].id).arg(format_bytes_short(m.storages[r].size_bytes)));
    }
    for (const Bar& b : bars_) {
      QRectF r = bar_rect(*b.tensor, step_w);
      if (r.isEmpty()) continue;
      QColor c = GraphColors::cluster_color(b.tensor->storage_id, dark);
      c.setAlpha(230);
      bool hot = !highlight_.isEmpty() && b.producer == highlight_;
      p.setPen(QPen(hot ? palette().color(QPalette::Highlight) : c.darker(140), hot ? 2.5 : 1));
      p.setBrush(c);
      p.drawRoundedRect(r, 3, 3);
      p.setPen(palette().color(QPalette::Text));
      p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
                 QFontMetrics(f).elidedText(b.value, Qt::ElideRight, static_cast<int>(r.width()) - 6));
    }
    // Step axis.
    int axis_y = kTop + static_cast<int>(m.storages.size()) * kRow + 4;
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(kLabelWidth, axis_y, kLabelWidth + static_cast<int>(steps() * step_w), axis_y);
    int every = std::max(1, static_cast<int>(40 / step_w));
    p.setPen(palette().color(QPalette::Text));
    for (int s = 0; s < steps(); s += every)
      p.drawText(QPointF(kLabelWidth + s * step_w + 2, axis_y + 14), QString::number(s));
    p.drawText(QPointF(4, axis_y + 14), tr("execution step →"));
  }

  bool event(QEvent* e) override {
    if (e->type() == QEvent::ToolTip) {
      auto* help = static_cast<QHelpEvent*>(e);
      if (const Bar* b = bar_at(help->pos()))
        QToolTip::showText(help->globalPos(), tr("%1 (%2)\nsteps %3–%4, storage %5, offset %6")
                                                  .arg(b->value, format_bytes_short(b->tensor->size_bytes))
                                                  .arg(b->tensor->first_step)
                                                  .arg(b->tensor->last_step)
                                                  .arg(b->tensor->storage_id)
                                                  .arg(b->tensor->offset));
      else
        QToolTip::hideText();
      return true;
    }
    return QWidget::event(e);
  }
  void mousePressEvent(QMouseEvent* e) override {
    if (const Bar* b = bar_at(e->pos()); b && !b->producer.isEmpty()) selection_->set_node(b->producer);
  }

 private:
  struct Bar {
    const PlannedTensor* tensor = nullptr;
    QString value, producer;
  };
  static constexpr int kLabelWidth = 150, kRow = 24, kTop = 6, kMinStep = 14;

  const MemoryPlan* plan() const { return snap_ && snap_->memory_plan ? snap_->memory_plan.get() : nullptr; }
  int steps() const { return plan() ? std::max<int>(1, static_cast<int>(plan()->steps.size())) : 1; }
  double step_width() const { return std::max<double>(kMinStep, (width() - kLabelWidth - 20.0) / steps()); }
  int row_of(int storage_id) const {
    for (size_t r = 0; r < plan()->storages.size(); ++r)
      if (plan()->storages[r].id == storage_id) return static_cast<int>(r);
    return -1;
  }
  QRectF bar_rect(const PlannedTensor& t, double step_w) const {
    int row = row_of(t.storage_id);
    if (row < 0) return {};
    double x0 = kLabelWidth + t.first_step * step_w, x1 = kLabelWidth + (t.last_step + 1) * step_w;
    return QRectF(x0 + 1, kTop + row * kRow + 3, x1 - x0 - 2, kRow - 6);
  }
  const Bar* bar_at(QPoint pos) const {
    if (!plan()) return nullptr;
    double w = step_width();
    for (const Bar& b : bars_)
      if (bar_rect(*b.tensor, w).contains(pos)) return &b;
    return nullptr;
  }

  Selection* selection_;
  StudioSnapshotPtr snap_;
  std::vector<Bar> bars_;
  QString highlight_;
};

MemoryPane::MemoryPane(Selection* selection, QWidget* parent) : QWidget(parent) {
  setObjectName("memory");
  summary_ = new QLabel(this);
  summary_->setContentsMargins(4, 2, 4, 2);
  summary_->setWordWrap(true);  // one long line would set the pane's, and the window's, minimum width
  chart_ = new MemoryChart(selection, this);
  scroll_ = new QScrollArea(this);
  scroll_->setWidget(chart_);
  scroll_->setWidgetResizable(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(summary_);
  layout->addWidget(scroll_, 1);
  show_snapshot(nullptr);
}

void MemoryPane::show_snapshot(const StudioSnapshotPtr& snap) {
  chart_->set_snapshot(snap);
  if (!snap || !snap->memory_plan) {
    summary_->setText(tr("No memory plan"));
    return;
  }
  const MemoryPlan& m = *snap->memory_plan;
  double saved =
      m.naive_bytes > 0 ? 100.0 * (1.0 - static_cast<double>(m.peak_bytes) / static_cast<double>(m.naive_bytes)) : 0;
  summary_->setText(tr("Peak %1 vs naive %2 (%3% saved) · %4 tensors in %5 storage blocks · %6 steps")
                        .arg(format_bytes_short(m.peak_bytes), format_bytes_short(m.naive_bytes))
                        .arg(saved, 0, 'f', 1)
                        .arg(m.tensors.size())
                        .arg(m.storages.size())
                        .arg(m.steps.size()));
}

void MemoryPane::highlight_node(const QString& name) { chart_->set_highlight(name); }

QString MemoryPane::summary() const { return summary_->text(); }

}  // namespace tessel::views
