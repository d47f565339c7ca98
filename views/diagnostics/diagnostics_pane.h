#pragma once
// The diagnostics pane: every error and warning of the session, one per line.
#include <QWidget>

#include "views/diagnostics/diagnostics_model.h"

class QTableView;

namespace tessel::views {

class DiagnosticsPane final : public QWidget {
 public:
  explicit DiagnosticsPane(QWidget* parent = nullptr);
  DiagnosticsModel* model() const { return model_; }

 private:
  DiagnosticsModel* model_;
  QTableView* view_;
};

}  // namespace tessel::views
