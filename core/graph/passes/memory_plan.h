#pragma once
// The static memory plan (plan_memory.h) as plain data: the order kernels run in, and for every
// intermediate tensor its storage block, byte offset in the arena and live interval. The studio
// draws it as a time × address chart; the executor allocates one arena of `peak_bytes`.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

struct PlannedTensor {
  ValueId value = kNoValue;
  int storage_id = -1;     // the block it lives in; tensors with disjoint lives share blocks
  int64_t offset = 0;      // bytes from the arena start (the block's offset)
  int64_t size_bytes = 0;  // the tensor's own size (the block may be larger)
  int first_step = 0;      // step that produces it
  int last_step = 0;       // last step that reads it (inclusive); graph outputs live to the end
  ValueId in_place_of = kNoValue;  // the input whose storage it reuses in place, if any
};

struct StorageBlock {
  int id = 0;
  int64_t offset = 0;
  int64_t size_bytes = 0;  // aligned
};

struct MemoryStep {
  std::vector<NodeId> nodes;  // one fused kernel (or one node when fusion did not run)
  int group = -1;             // FusionGroup id, -1 without fusion
};

struct MemoryPlan {
  int64_t alignment = 64;
  std::vector<MemoryStep> steps;         // execution order
  std::vector<PlannedTensor> tensors;    // every planned tensor (graph inputs and constants are not)
  std::vector<StorageBlock> storages;
  int64_t peak_bytes = 0;                // arena size
  int64_t naive_bytes = 0;               // sum of every planned tensor's aligned size

  const PlannedTensor* find(ValueId v) const {
    for (const PlannedTensor& t : tensors)
      if (t.value == v) return &t;
    return nullptr;
  }
};
using MemoryPlanPtr = std::shared_ptr<const MemoryPlan>;

}  // namespace tessel
