#include "tests/e2e/inspect_report.h"

#include <QJsonArray>

namespace tessel::testing {

InspectReport read_inspect_report(const QJsonObject& json) {
  InspectReport report;
  const QJsonArray nodes = json["nodes"].toArray();
  report.node_count = static_cast<int>(nodes.size());
  for (const QJsonValue& v : nodes) {
    const QJsonObject node = v.toObject();
    report.op_counts[node["op"].toString()] += 1;
    report.flops_by_node[node["name"].toString()] = node["flops"].toInteger();
  }
  const QJsonObject totals = json["totals"].toObject();
  if (totals.contains("parameters")) report.parameters = totals["parameters"].toInteger();
  return report;
}

}  // namespace tessel::testing
