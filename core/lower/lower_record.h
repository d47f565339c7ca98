#pragma once
// What lowering remembers of one pass (or one schedule step): the loop-program analogue of the
// graph passes' PassRecord (core/pass/pass_record.h) — name, the program after it, whether it
// changed anything, and how long it took. The studio's IR pane and `tessel lower` read these.
#include <memory>
#include <string>

#include "core/loopir/ir.h"

namespace tessel::lower {

struct LowerRecord {
  std::string name;                             // "loop_partition", or a step's text
  std::shared_ptr<const loopir::Func> program;  // after the pass; null when it failed
  std::string text;                             // the printed program (to_string(*program))
  bool changed = false;                         // false: the body is the very node it received
  double wall_ms = 0.0;
  std::string error;  // empty on success

  bool failed() const { return !error.empty(); }
};
using LowerRecordPtr = std::shared_ptr<const LowerRecord>;

}  // namespace tessel::lower
