#pragma once
// The inspector: everything about the selected node (or fusion kernel) in one table.
#include <QWidget>

#include "views/inspector/inspector_model.h"

class QLabel;
class QTableView;

namespace tessel::views {

class InspectorPane final : public QWidget {
 public:
  explicit InspectorPane(QWidget* parent = nullptr);
  void show_node(const StudioSnapshotPtr& snapshot, int pass, const QString& name);
  void show_kernel(const StudioSnapshotPtr& snapshot, const QString& kernel);
  void clear();
  InspectorModel* model() const { return model_; }
  QTableView* view() const { return view_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;
  // The table's viewport narrows when its vertical scroll bar appears: the columns are refitted.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void refresh();
  // Property, value and default get what they need up to a share of the width; the description
  // gets the rest and wraps, so it is never cut at the pane's edge.
  void fit_columns();
  InspectorModel* model_;
  QLabel* title_;
  QTableView* view_;
  bool fitting_ = false;  // fit_columns is running (its own row resizing can resize the viewport)
};

}  // namespace tessel::views
