// Which root loop nests of a lowered function run on a grid, and on which (gpu_launch_plan.h).
#include "core/codegen/gpu_launch_plan.h"

#include <algorithm>
#include <unordered_set>

#include "core/loopir/functor.h"

namespace tessel::codegen {

namespace {

namespace ir = tessel::loopir;

constexpr const char* kTags[6] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                  "threadIdx.x", "threadIdx.y", "threadIdx.z"};

class LaunchAnalysis {
 public:
  LaunchAnalysis(const GpuDialect& dialect, const GpuLimits& limits) : dialect_(dialect), limits_(limits) {}

  LaunchPlan plan(const ir::Stmt& body) {
    walk(body, 0, false);
    LaunchPlan p;
    p.extent = extent_;
    int launched = 0;
    for (int k = 0; k < 6; ++k)
      if (extent_[k] > 0) launched |= 1 << k;
    if (launched == 0) {
      p.why_serial = "no loop is bound to blockIdx or threadIdx";
      return p;
    }
    if (!why_.empty()) return p.why_serial = why_, p;
    // One loop nest under the top-level allocations: root stages side by side would need a
    // synchronization of the whole grid between them.
    ir::Stmt s = body;
    while (true) {
      if (auto* a = ir::as<ir::Allocate>(s))
        s = a->body;
      else if (auto* l = ir::as<ir::LetStmt>(s))
        s = l->body;
      else if (auto* q = ir::as<ir::Seq>(s); q && q->stmts.size() == 1)
        s = q->stmts[0];
      else
        break;
    }
    auto* root = ir::as<ir::For>(s);
    if (!root || root->for_kind != ir::ForKind::kThreadBound)
      return p.why_serial = "several root loop nests (they would need a grid-wide barrier)", p;
    for (int mask : store_masks_)
      if ((mask & launched) != launched)
        return p.why_serial =
                   "a store outside the loops of some bound tag (every " + dialect_.thread + " would make it)",
               p;
    for (int d = 0; d < 3; ++d) {
      const char* axis[3] = {"x", "y", "z"};
      if (extent_[d] > limits_.max_blocks[d])
        return p.why_serial = std::to_string(extent_[d]) + " blocks along " + axis[d] + " exceed the grid's " +
                              std::to_string(limits_.max_blocks[d]),
               p;
      if (extent_[d + 3] > limits_.max_threads[d])
        return p.why_serial = std::to_string(extent_[d + 3]) + " threads along " + axis[d] + " exceed the block's " +
                              std::to_string(limits_.max_threads[d]),
               p;
    }
    int64_t threads =
        std::max<int64_t>(extent_[3], 1) * std::max<int64_t>(extent_[4], 1) * std::max<int64_t>(extent_[5], 1);
    if (threads > limits_.max_threads_per_block)
      return p.why_serial = std::to_string(threads) + " threads per block exceed " + dialect_.threads_limit_option +
                            " " + std::to_string(limits_.max_threads_per_block),
             p;
    if (shared_bytes_ > limits_.shared_memory_bytes)
      return p.why_serial = std::to_string(shared_bytes_) + " bytes of shared buffers exceed " +
                            dialect_.shared_limit_option + " " + std::to_string(limits_.shared_memory_bytes),
             p;
    p.grid = true;
    return p;
  }

 private:
  void refuse(const std::string& why) {
    if (why_.empty()) why_ = why;
  }

  // `mask`: the tags bound by the loops around `s`; `conditional`: under an if or a loop whose
  // bounds are not constant (a barrier there would not be reached by every thread alike).
  void walk(const ir::Stmt& s, int mask, bool conditional) {
    if (!s) return;
    if (auto* n = ir::as<ir::Seq>(s)) {
      for (const auto& x : n->stmts) walk(x, mask, conditional);
    } else if (auto* n = ir::as<ir::For>(s)) {
      int inner = mask;
      bool cooperative = false;
      bool varying = !ir::is_const_int(n->min) || !ir::is_const_int(n->extent);
      if (n->for_kind == ir::ForKind::kThreadBound) {
        int k = tag_index(n->thread_tag);
        int64_t e = 0;
        if (k < 0) {
          refuse("loop bound to '" + n->thread_tag + "', which is not a blockIdx or threadIdx tag");
        } else if (!ir::is_const_int(n->extent, &e) || e < 1) {
          refuse("the extent of the loop bound to " + n->thread_tag + " is not a positive constant");
        } else if (k < 3 && (mask & (1 << k))) {
          refuse("loops bound to " + n->thread_tag + " nested in each other");
        } else if (extent_[k] != 0 && extent_[k] != e) {
          refuse("loops bound to " + n->thread_tag + " with different extents (" + std::to_string(extent_[k]) +
                 " and " + std::to_string(e) + ")");
        } else if (k < 3 && extent_[k] != 0) {
          refuse("two loops bound to " + n->thread_tag);
        } else if (mask & (1 << k)) {
          cooperative = true;  // the same thread index as the loop around it
        } else {
          extent_[k] = e;
          inner |= 1 << k;
        }
        varying = false;  // its bounds are the grid's
      }
      cooperative_depth_ += cooperative;
      walk(n->body, inner, conditional || varying);
      cooperative_depth_ -= cooperative;
    } else if (auto* n = ir::as<ir::Store>(s)) {
      if (n->buffer->scope != "local") store_masks_.push_back(mask);
      if (cooperative_depth_ > 0 && n->buffer->scope != "shared")
        refuse("a store to " + n->buffer->name + " in a threadIdx loop inside one bound to the same tag");
    } else if (auto* n = ir::as<ir::Allocate>(s)) {
      const int64_t bytes =
          std::max<int64_t>(ir::buffer_span(*n->buffer), 1) * static_cast<int64_t>(dtype_size(n->buffer->dtype));
      if (n->buffer->scope == "shared")
        shared_bytes_ += bytes;
      else if (n->buffer->scope == "local" && bytes > kMaxPrivateBytes)
        refuse("the private buffer " + n->buffer->name + " has " + std::to_string(bytes) + " bytes");
      else if (n->buffer->scope != "local" && mask != 0)
        refuse("the " + n->buffer->scope + " buffer " + n->buffer->name + " is allocated inside a thread-bound loop");
      walk(n->body, mask, conditional);
    } else if (auto* n = ir::as<ir::LetStmt>(s)) {
      walk(n->body, mask, conditional);
    } else if (auto* n = ir::as<ir::IfThenElse>(s)) {
      walk(n->then_case, mask, true);
      walk(n->else_case, mask, true);
    } else if (ir::as<ir::Barrier>(s)) {
      // Outside the thread-bound loops every work-item runs the code, so an unconditional
      // barrier there is reached by all of them (a GPU reduction's partials, then their reader).
      if (conditional) refuse("a barrier under a condition");
    }
  }

  const GpuDialect& dialect_;
  const GpuLimits& limits_;
  std::array<int64_t, 6> extent_{0, 0, 0, 0, 0, 0};
  std::vector<int> store_masks_;
  int64_t shared_bytes_ = 0;
  int cooperative_depth_ = 0;  // threadIdx loops inside loops bound to the same tag around the walk
  std::string why_;
};

}  // namespace

int tag_index(const std::string& tag) {
  for (int k = 0; k < 6; ++k)
    if (tag == kTags[k]) return k;
  return -1;
}

LaunchPlan plan_launch(const ir::Stmt& body, const GpuDialect& dialect, const GpuLimits& limits) {
  return LaunchAnalysis(dialect, limits).plan(body);
}

std::vector<bool> written_params(const ir::Func& f) {
  std::unordered_set<std::string> stored;
  std::vector<ir::Stmt> work{f.body};
  while (!work.empty()) {
    ir::Stmt s = work.back();
    work.pop_back();
    if (!s) continue;
    if (auto* n = ir::as<ir::Seq>(s))
      work.insert(work.end(), n->stmts.begin(), n->stmts.end());
    else if (auto* n = ir::as<ir::For>(s))
      work.push_back(n->body);
    else if (auto* n = ir::as<ir::Allocate>(s))
      work.push_back(n->body);
    else if (auto* n = ir::as<ir::LetStmt>(s))
      work.push_back(n->body);
    else if (auto* n = ir::as<ir::IfThenElse>(s))
      work.insert(work.end(), {n->then_case, n->else_case});
    else if (auto* n = ir::as<ir::Store>(s))
      stored.insert(n->buffer->name);
  }
  std::vector<bool> written;
  for (const auto& p : f.params) written.push_back(stored.count(p->name) > 0);
  return written;
}

std::string launch_note(const LaunchPlan& p, const GpuLaunch& l, const GpuDialect& dialect) {
  if (!p.grid) return "one " + dialect.thread + " runs the loop program in order (" + p.why_serial + ")";
  auto dims = [](const std::array<int64_t, 3>& d) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
  };
  return "grid of " + dims(l.blocks) + " " + dialect.block + "s, " + dims(l.threads) + " " + dialect.thread + "s each";
}

}  // namespace tessel::codegen
