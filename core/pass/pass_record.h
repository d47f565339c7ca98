#pragma once
// What the pass manager remembers of one pass: the same record for every graph pass, read by the
// studio's pass pane, the CLI's dumps and the tests. Records are immutable values; the snapshot is
// the graph right after the pass (shared, so keeping all of them costs little: constants share
// their buffers between snapshots).
#include <memory>
#include <string>
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

struct PassRecord {
  std::string name;        // "fold_constants"
  GraphPtr graph;          // the graph after the pass; the unchanged input graph when the pass failed
  bool changed = false;    // false: `graph` is the very snapshot the pass received
  double wall_ms = 0.0;
  int nodes_before = 0;
  int nodes_after = 0;
  std::string error;       // empty on success; otherwise "pass 'X' failed: <reason>"

  bool failed() const { return !error.empty(); }
};
using PassRecordPtr = std::shared_ptr<const PassRecord>;

}  // namespace tessel
