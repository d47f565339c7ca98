#pragma once
// The parts of `tessel inspect --json` the end-to-end test checks, read from its JSON:
//   {"nodes": [{"name": "/fc/Gemm", "op": "Gemm", "flops": 330, ...}, ...], "totals": {"parameters": N, ...}}
#include <QJsonObject>
#include <QMap>
#include <QString>

namespace tessel::testing {

struct InspectReport {
  int node_count = 0;                   // nodes of the imported graph
  QMap<QString, int> op_counts;         // op type -> nodes
  QMap<QString, qint64> flops_by_node;  // node name -> FLOPs
  qint64 parameters = -1;               // weight elements; -1 when not reported
};

InspectReport read_inspect_report(const QJsonObject& json);

}  // namespace tessel::testing
