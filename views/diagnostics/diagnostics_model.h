#pragma once
// The diagnostics of the current snapshot (import errors, failing passes, session warnings) plus
// studio-level messages (a session file that would not load), newest last.
#include <QAbstractTableModel>
#include <vector>

#include "views/common/snapshot.h"

namespace tessel::views {

class DiagnosticsModel final : public QAbstractTableModel {
 public:
  enum Column { kSeverity, kStage, kMessage, kColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void set_snapshot_diagnostics(const std::vector<Diagnostic>& diagnostics);  // replaces the previous snapshot's
  void add(const Diagnostic& d);                                              // a studio message; kept until cleared
  void clear();
  const std::vector<Diagnostic>& diagnostics() const { return all_; }
  int error_count() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  void rebuild();
  std::vector<Diagnostic> from_snapshot_, from_studio_, all_;
};

QString severity_name(Diagnostic::Severity s);

}  // namespace tessel::views
