#pragma once
// The memory plan as a Gantt chart: one row per storage block, execution steps left to right,
// a bar for every tensor while it is live. The header compares the planned peak with the naive
// sum (every intermediate in its own buffer). Clicking a bar selects the node that produces it.
//
//   storage 0  64 KiB |■■■conv_out■■■|    |■■add_out■■|
//   storage 1  32 KiB      |■relu■■■■■■■■■■■■■|
//                     0    1    2    3    4    5   steps
#include <QWidget>

#include "views/common/selection.h"
#include "views/common/snapshot.h"

class QLabel;
class QScrollArea;

namespace tessel::views {

class MemoryChart;

class MemoryPane final : public QWidget {
 public:
  explicit MemoryPane(Selection* selection, QWidget* parent = nullptr);
  void show_snapshot(const StudioSnapshotPtr& snapshot);
  void highlight_node(const QString& name);
  QString summary() const;

 private:
  QLabel* summary_;
  QScrollArea* scroll_;
  MemoryChart* chart_;
};

QString format_bytes_short(int64_t bytes);

}  // namespace tessel::views
