#pragma once
// The recorded graph passes of a snapshot as a table: #, pass, changed, time, nodes. Row 0 is the
// imported graph (pass index -1), so "before the first pass" can be selected like any pass. With
// hide_unchanged, passes that changed nothing are left out (the imported row always stays).
#include <QAbstractTableModel>
#include <vector>

#include "views/common/snapshot.h"

namespace tessel::views {

class PassListModel final : public QAbstractTableModel {
 public:
  enum Column { kIndex, kName, kChanged, kTime, kNodes, kColumnCount };
  static constexpr int kPassIndexRole = Qt::UserRole + 1;  // int: the pass index (-1: imported)

  using QAbstractTableModel::QAbstractTableModel;

  void set_snapshot(StudioSnapshotPtr snapshot);
  void set_hide_unchanged(bool hide);
  bool hide_unchanged() const { return hide_unchanged_; }

  int row_of_pass(int pass) const;  // -1 when hidden or absent
  int pass_of_row(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  void rebuild();
  StudioSnapshotPtr snapshot_;
  bool hide_unchanged_ = false;
  std::vector<int> rows_;  // pass index per row
};

}  // namespace tessel::views
