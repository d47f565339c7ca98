#include "core/tune/features.h"

#include <algorithm>
#include <cmath>

namespace tessel::tune {

namespace {

enum Feature : size_t {
  kStoreIterations,  // log2 of every store's iterations, summed over stores
  kHeaviestStore,    // log2 of the iterations of the store executed most often
  kParallel,         // log2 of the largest parallel loop's extent
  kVectorLanes,      // the widest vectorized loop
  kVectorizedShare,  // share of store iterations inside a vectorized loop
  kUnrolled,         // log2 of the unrolled iterations around the heaviest store
  kSerialAround,     // log2 of the serial iterations around the heaviest store
  kInnermostExtent,  // log2 of the innermost loop's extent around the heaviest store
  kLoops,            // number of loops
  kDepth,            // deepest loop nest
  kLocalBytes,       // log2 of the bytes of local/register buffers allocated
  kAllocations,      // number of allocations
};

constexpr std::string_view kNames[kNumFeatures] = {
    "store_iterations_log2", "heaviest_store_log2", "parallel_log2",         "vector_lanes", "vectorized_share",
    "unrolled_log2",         "serial_around_log2",  "innermost_extent_log2", "loops",        "depth",
    "local_bytes_log2",      "allocations"};

struct Context {
  double iterations = 1, unrolled = 1, serial = 1;
  double innermost = 1;
  bool vectorized = false;
  int depth = 0;
};

class Walker {
 public:
  Features result() {
    double total = 0;
    for (double s : stores_) total += s;
    f_[kStoreIterations] = std::log2(std::max(1.0, total));
    f_[kHeaviestStore] = std::log2(std::max(1.0, heaviest_.iterations));
    f_[kVectorizedShare] = total > 0 ? vectorized_ / total : 0;
    f_[kUnrolled] = std::log2(heaviest_.unrolled);
    f_[kSerialAround] = std::log2(heaviest_.serial);
    f_[kInnermostExtent] = std::log2(heaviest_.innermost);
    f_[kLocalBytes] = std::log2(1.0 + local_bytes_);
    return f_;
  }

  void walk(const loopir::Stmt& s, Context c) {
    if (!s) return;
    using namespace loopir;
    if (const auto* f = as<For>(s)) {
      const auto* imm = as<IntImm>(f->extent);
      const double extent = imm ? static_cast<double>(std::max<int64_t>(1, imm->value)) : 16.0;
      c.iterations *= extent;
      c.innermost = extent;
      c.depth += 1;
      f_[kLoops] += 1;
      f_[kDepth] = std::max(f_[kDepth], static_cast<double>(c.depth));
      switch (f->for_kind) {
        case ForKind::kParallel:
          f_[kParallel] = std::max(f_[kParallel], std::log2(extent));
          break;
        case ForKind::kVectorized:
          f_[kVectorLanes] = std::max(f_[kVectorLanes], extent);
          c.vectorized = true;
          break;
        case ForKind::kUnrolled:
          c.unrolled *= extent;
          break;
        default:
          c.serial *= extent;
          break;
      }
      walk(f->body, c);
    } else if (const auto* a = as<Allocate>(s)) {
      f_[kAllocations] += 1;
      local_bytes_ += static_cast<double>(buffer_span(*a->buffer)) * 4;
      walk(a->body, c);
    } else if (const auto* seq = as<Seq>(s)) {
      for (const Stmt& x : seq->stmts) walk(x, c);
    } else if (const auto* l = as<LetStmt>(s)) {
      walk(l->body, c);
    } else if (const auto* i = as<IfThenElse>(s)) {
      walk(i->then_case, c);
      walk(i->else_case, c);
    } else if (as<Store>(s)) {
      stores_.push_back(c.iterations);
      if (c.vectorized) vectorized_ += c.iterations;
      if (c.iterations > heaviest_.iterations) heaviest_ = c;
    }
  }

 private:
  Features f_{};
  std::vector<double> stores_;
  double vectorized_ = 0, local_bytes_ = 0;
  Context heaviest_{0, 1, 1, 1, false, 0};
};

}  // namespace

Features loop_features(const loopir::Func& f) {
  Walker w;
  w.walk(f.body, {});
  return w.result();
}

std::string_view feature_name(size_t index) { return index < kNumFeatures ? kNames[index] : "?"; }

}  // namespace tessel::tune
