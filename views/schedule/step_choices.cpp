#include "views/schedule/step_choices.h"

#include <algorithm>
#include <optional>

#include "core/support/error.h"
#include "core/te/tensor_intrinsic.h"

namespace tessel::views {

std::string AxisChoice::label() const {
  std::string out = full();
  if (extent > 0) out += "  (extent " + std::to_string(extent) + ")";
  if (is_reduce) out += "  reduce";
  return out;
}

const StageChoice* StepChoices::find(const std::string& stage) const {
  for (const StageChoice& s : stages)
    if (s.name == stage) return &s;
  return nullptr;
}

const AxisChoice* StepChoices::find_axis(const std::string& full_name) const {
  for (const StageChoice& s : stages)
    for (const AxisChoice& a : s.leaf)
      if (a.full() == full_name) return &a;
  return nullptr;
}

std::vector<AxisChoice> StepChoices::all_leaf_axes() const {
  std::vector<AxisChoice> out;
  for (const StageChoice& s : stages) out.insert(out.end(), s.leaf.begin(), s.leaf.end());
  return out;
}

std::vector<std::string> StepChoices::readers_of(const std::string& tensor) const {
  for (const auto& [name, list] : readers)
    if (name == tensor) return list;
  return {};
}

std::vector<int64_t> axis_extents(const schedule::Stage& stage) {
  std::vector<int64_t> ext(stage.axes.size(), 0);
  const auto& op = stage.op;
  size_t r = 0;
  for (; op && r < op->axes.size() && r < ext.size(); ++r) ext[r] = op->axes[r].extent;
  if (op && op->reduction())
    for (size_t q = 0; q < op->reduction()->axes.size() && r < ext.size(); ++q, ++r)
      ext[r] = op->reduction()->axes[q].extent;
  // Relations are kept in the order the steps made them, so a parent is known before its parts.
  auto at = [&](int i) -> int64_t& { return ext[static_cast<size_t>(i)]; };
  auto valid = [&](int i) { return i >= 0 && static_cast<size_t>(i) < ext.size(); };
  for (const schedule::Relation& rel : stage.relations) {
    if (rel.kind == schedule::Relation::Kind::kSplit) {
      if (!valid(rel.parent) || !valid(rel.outer) || !valid(rel.inner) || rel.factor <= 0) continue;
      int64_t e = at(rel.parent);
      if (e <= 0) continue;
      int64_t parts = (e + rel.factor - 1) / rel.factor;
      at(rel.outer) = rel.by_nparts ? rel.factor : parts;
      at(rel.inner) = rel.by_nparts ? parts : rel.factor;
    } else {
      if (!valid(rel.outer) || !valid(rel.inner) || !valid(rel.fused)) continue;
      if (at(rel.outer) > 0 && at(rel.inner) > 0) at(rel.fused) = at(rel.outer) * at(rel.inner);
    }
  }
  return ext;
}

TargetOffer generic_offer() {
  TargetOffer offer;
  offer.scopes = {"global", "shared", "local"};
  for (const te::TensorIntrinsic& t : te::tensor_intrinsics()) offer.intrinsics.push_back(t.name);
  return offer;
}

TargetOffer target_offer(const std::string& target_spec) {
  TargetOffer offer = generic_offer();
  if (target_spec.empty()) return offer;
  std::optional<Target> target;
  try {
    target = Target::parse(target_spec);
  } catch (const Error&) {
    return offer;  // its plugin is not loaded in this process
  }
  const TargetKind& kind = target->kind_info();
  if (!kind.memory_scopes.empty()) {
    offer.scopes = {"global"};
    offer.scopes.insert(offer.scopes.end(), kind.memory_scopes.begin(), kind.memory_scopes.end());
  }
  if (kind.tensor_intrinsics) {
    // Only names the registry declares: tensorize can name nothing else.
    const std::vector<std::string> runs = kind.tensor_intrinsics(*target);
    std::erase_if(offer.intrinsics,
                  [&](const std::string& name) { return std::find(runs.begin(), runs.end(), name) == runs.end(); });
  }
  return offer;
}

StepChoices step_choices(const te::ComputeDag& dag, const schedule::Schedule& s, size_t count,
                         const TargetOffer& offer) {
  StepChoices out;
  out.scopes = offer.scopes;
  out.thread_tags = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  out.intrinsics = offer.intrinsics;
  schedule::ScheduleState state;
  try {
    state = schedule::initial_state(dag);
  } catch (const Error& e) {
    out.error = e.what();
    return out;
  }
  for (size_t k = 0; k < count && k < s.steps.size(); ++k) {
    // Applied to a copy, so a step that fails half-way leaves the state of the steps before it.
    schedule::ScheduleState next = state;
    try {
      schedule::apply_step(next, s.steps[k]);
    } catch (const Error& e) {
      out.error = "step " + std::to_string(k + 1) + " " + schedule::to_string(s.steps[k]) + ": " + e.what();
      break;
    }
    state = std::move(next);
    ++out.applied;
  }
  auto readers = [&](const std::string& name) {
    std::vector<std::string> list;
    for (const schedule::Stage* reader : state.consumers(name)) list.push_back(reader->name);
    return list;
  };
  for (const te::Tensor& t : dag.inputs()) {
    out.tensors.push_back(t->name);
    out.readers.emplace_back(t->name, readers(t->name));
  }
  for (const schedule::Stage& st : state.stages) {
    StageChoice c;
    c.name = st.name;
    c.is_output = st.is_output;
    c.attach = st.attach == schedule::Attach::kRoot     ? "root"
               : st.attach == schedule::Attach::kInline ? "inline"
                                                        : "at " + st.attach_stage;
    if (st.attach == schedule::Attach::kAt && st.attach_axis >= 0) {
      if (const schedule::Stage* host = state.find(st.attach_stage))
        if (static_cast<size_t>(st.attach_axis) < host->axes.size())
          c.attach += "." + host->axes[static_cast<size_t>(st.attach_axis)].name;
    }
    std::vector<int64_t> ext = axis_extents(st);
    auto choice = [&](int i) {
      const schedule::AxisState& a = st.axes[static_cast<size_t>(i)];
      return AxisChoice{st.name, a.name, ext[static_cast<size_t>(i)], a.is_reduce};
    };
    // An inlined stage has no loops left to schedule; its formula lives in its consumers.
    if (st.attach != schedule::Attach::kInline)
      for (int i : st.leaf) c.leaf.push_back(choice(i));
    for (int i = 0; i < st.num_root; ++i) c.roots.push_back(choice(i));
    c.consumers = readers(st.name);
    out.tensors.push_back(st.name);
    out.readers.emplace_back(st.name, c.consumers);
    out.stages.push_back(std::move(c));
  }
  return out;
}

}  // namespace tessel::views
