#pragma once
// Writing a schedule step by step, each step applied at once so the next decision sees the loops it
// made: what the default schedules are built with. The steps that make loops (split, tile, fuse,
// cache_read/write, rfactor) return handles to them, taken from the state rather than rebuilt as
// text ("C.i.outer").
//
//   ScheduleWriter w(state, schedule);
//   auto [outer, inner] = w.split(w.root("C", 0), 64);   // split(C.i, 64)
//   w.bind(inner, "threadIdx.x");                         // bind(C.i.inner, threadIdx.x)
#include <string>
#include <utility>
#include <vector>

#include "core/schedule/schedule.h"
#include "core/schedule/schedule_state.h"

namespace tessel::schedule {

// A loop of a stage: the stage's name and the axis's index in Stage::axes. Steps only append axes,
// so a handle stays valid across later steps (cache_write rebuilds its stage: handles into that
// stage are taken after it).
struct LoopHandle {
  std::string stage;
  int axis = -1;
};

class ScheduleWriter {
 public:
  ScheduleWriter(ScheduleState& state, Schedule& out) : st_(state), out_(out) {}

  const ScheduleState& state() const { return st_; }
  const Stage& stage(const std::string& name) const { return *st_.find(name); }
  // Data-parallel axis d of the stage's tensor, and its reduction axis q.
  LoopHandle root(const std::string& s, size_t d) const { return {s, static_cast<int>(d)}; }
  LoopHandle reduce_root(const std::string& s, size_t q) const {
    return {s, static_cast<int>(stage(s).op->axes.size() + q)};
  }
  // The loop at position `pos` of the stage's loop order, outermost first.
  LoopHandle leaf(const std::string& s, size_t pos) const { return {s, stage(s).leaf[pos]}; }

  std::pair<LoopHandle, LoopHandle> split(const LoopHandle& l, int64_t factor) {
    add(step("split", {name(l), arg(factor)}));
    const Relation& r = stage(l.stage).relations.back();
    return {{l.stage, r.outer}, {l.stage, r.inner}};
  }
  // tile(first, second): the (outer, inner) loops of each, ordered first.outer, second.outer,
  // first.inner, second.inner.
  std::pair<std::pair<LoopHandle, LoopHandle>, std::pair<LoopHandle, LoopHandle>> tile(const LoopHandle& first,
                                                                                       const LoopHandle& second,
                                                                                       int64_t f1, int64_t f2) {
    add(step("tile", {name(first), name(second), arg(f1), arg(f2)}));
    const std::vector<Relation>& rel = stage(first.stage).relations;
    const Relation &r1 = rel[rel.size() - 2], &r2 = rel.back();
    return {{{first.stage, r1.outer}, {first.stage, r1.inner}}, {{first.stage, r2.outer}, {first.stage, r2.inner}}};
  }
  LoopHandle fuse(const LoopHandle& outer, const LoopHandle& inner) {
    add(step("fuse", {name(outer), name(inner)}));
    return {outer.stage, stage(outer.stage).relations.back().fused};
  }
  void reorder(const std::vector<LoopHandle>& order) {
    std::vector<StepArg> args;
    for (const LoopHandle& l : order) args.push_back(name(l));
    add(step("reorder", std::move(args)));
  }
  void vectorize(const LoopHandle& l) { add(step("vectorize", {name(l)})); }
  void unroll(const LoopHandle& l) { add(step("unroll", {name(l)})); }
  // A kernel too small to share among threads (parallel_work.h) keeps every loop serial: the
  // default CPU schedule says so once, and every `parallel` after it is dropped.
  void parallel(const LoopHandle& l) {
    if (parallel_allowed_) add(step("parallel", {name(l)}));
  }
  void allow_parallel(bool allowed) { parallel_allowed_ = allowed; }
  bool parallel_allowed() const { return parallel_allowed_; }
  void bind(const LoopHandle& l, const char* tag) { add(step("bind", {name(l), arg(tag)})); }
  void vthread(const LoopHandle& l) { add(step("vthread", {name(l)})); }
  void tensorize(const LoopHandle& l, const std::string& intrinsic) {
    add(step("tensorize", {name(l), arg(intrinsic)}));
  }
  void compute_at(const std::string& producer, const LoopHandle& at) {
    add(step("compute_at", {arg(producer), name(at)}));
  }
  void prefetch(const LoopHandle& at, const std::string& tensor, const LoopHandle& ahead, int64_t offset) {
    add(step("prefetch", {name(at), arg(tensor), name(ahead), arg(offset)}));
  }
  void compute_inline(const std::string& s) { add(step("compute_inline", {arg(s)})); }
  void set_scope(const std::string& s, const char* scope) { add(step("set_scope", {arg(s), arg(scope)})); }
  // cache_write, rfactor and cache_read insert their new stage just before the one they serve and
  // return its name (rfactor's: NAME_rf, the partial reductions).
  std::string cache_write(const std::string& s, const char* scope) {
    add(step("cache_write", {arg(s), arg(scope)}));
    return stage_before(s);
  }
  std::string rfactor(const LoopHandle& l) {
    std::string reduction = l.stage;
    add(step("rfactor", {name(l)}));
    return stage_before(reduction);
  }
  std::string cache_read(const std::string& tensor, const char* scope, const std::string& reader) {
    add(step("cache_read", {arg(tensor), arg(scope), arg(reader)}));
    return stage_before(reader);
  }

 private:
  StepArg name(const LoopHandle& l) const {
    const Stage& s = stage(l.stage);
    return arg(s.name + "." + s.axes[static_cast<size_t>(l.axis)].name);
  }
  void add(ScheduleStep step) {
    apply_step(st_, step);
    out_.steps.push_back(std::move(step));
  }
  std::string stage_before(const std::string& name) const {
    for (size_t i = 1; i < st_.stages.size(); ++i)
      if (st_.stages[i].name == name) return st_.stages[i - 1].name;
    return {};
  }

  ScheduleState& st_;
  Schedule& out_;
  bool parallel_allowed_ = true;
};

}  // namespace tessel::schedule
