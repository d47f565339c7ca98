#pragma once
// The profile as a table model: one row per kernel, in execution order. Columns carry a numeric
// sort role (Qt::UserRole), so a QSortFilterProxyModel sorts times as numbers, not text. Also the
// CSV export (the same columns). No Q_OBJECT: it emits only QAbstractItemModel's own signals.
//
// Usage:
//   ProfileTableModel model;  model.set_profile(p);
//   QSortFilterProxyModel proxy;  proxy.setSourceModel(&model);  proxy.setSortRole(Qt::UserRole);
#include <QAbstractTableModel>
#include <string>

#include "views/common/kernel_results.h"

namespace tessel::views {

class ProfileTableModel : public QAbstractTableModel {
 public:
  enum Column { kKernel, kTime, kPercent, kGflops, kGbps, kAttainable, kBound, kSchedule, kColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void set_profile(ModelProfilePtr profile);
  ModelProfilePtr profile() const { return profile_; }
  int row_of(const QString& kernel) const;  // -1 when absent
  QString kernel_at(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  ModelProfilePtr profile_;
  double sum_ms_ = 0;
};

// kernel,ms_median,ms_min,percent,gflops,gbps,intensity,attainable_gflops,bound,compiled
std::string profile_csv(const analysis::Profile& p);

}  // namespace tessel::views
