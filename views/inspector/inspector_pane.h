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

 private:
  void refresh();
  InspectorModel* model_;
  QLabel* title_;
  QTableView* view_;
};

}  // namespace tessel::views
