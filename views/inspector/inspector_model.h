#pragma once
// What the inspector lists for the selected node or fusion kernel, as a four-column table
// (property, value, default, description) with section rows ("Inputs", "Attributes", …).
// Attribute rows come from the op's attribute reflection: every field, set or not, with its
// default and documentation, so nothing is re-described here.
#include <QAbstractTableModel>
#include <vector>

#include "views/common/snapshot.h"

namespace tessel::views {

struct InspectorRow {
  bool section = false;  // a heading spanning the row
  QString property, value, default_value, description;
};

class InspectorModel final : public QAbstractTableModel {
 public:
  enum Column { kProperty, kValue, kDefault, kDescription, kColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  // The node named `name` in the graph after `pass`; empty rows when there is none.
  void show_node(const StudioSnapshotPtr& snapshot, int pass, const QString& name);
  // A fusion group of the optimized graph, by kernel name.
  void show_kernel(const StudioSnapshotPtr& snapshot, const QString& kernel);
  void clear();
  QString title() const { return title_; }

  const std::vector<InspectorRow>& rows() const { return rows_; }
  // The value column of the first row (after `section`, when given) whose property is `property`.
  QString value_of(const QString& property, const QString& section = {}) const;
  const InspectorRow* find(const QString& property, const QString& section = {}) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  void set_rows(QString title, std::vector<InspectorRow> rows);
  std::vector<InspectorRow> rows_;
  QString title_;
};

}  // namespace tessel::views
