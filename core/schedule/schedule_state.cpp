#include "core/schedule/schedule_state.h"

#include <algorithm>
#include <set>

#include "core/loopir/functor.h"
#include "core/schedule/step_apply.h"
#include "core/support/error.h"
#include "core/te/tensor_intrinsic.h"

namespace tessel::schedule {
using loopir::ForKind;

int Stage::find_axis(const std::string& axis_name) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == axis_name) return static_cast<int>(i);
  return -1;
}

std::string Stage::leaf_names() const {
  std::string out;
  for (int a : leaf) out += (out.empty() ? "" : ", ") + axes[a].name;
  return out;
}

Stage* ScheduleState::find(const std::string& name) {
  for (auto& s : stages)
    if (s.name == name) return &s;
  return nullptr;
}
const Stage* ScheduleState::find(const std::string& name) const {
  for (auto& s : stages)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<const Stage*> ScheduleState::consumers(const std::string& name) const {
  std::vector<const Stage*> out;
  for (auto& s : stages)
    for (auto& in : s.op->inputs)
      if (in->name == name) {
        out.push_back(&s);
        break;
      }
  return out;
}

std::vector<const Stage*> ScheduleState::effective_consumers(const std::string& name) const {
  std::vector<const Stage*> out;
  for (const Stage* s : consumers(name)) {
    if (s->attach != Attach::kInline) {
      out.push_back(s);
      continue;
    }
    for (const Stage* t : effective_consumers(s->name))
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

// Reads the arguments of one step with messages that name the argument (what the table rows'
// apply functions see; declared in step.h).
class StepArgs {
 public:
  StepArgs(const ScheduleStep& s, const char* signature) : s_(s), sig_(signature) {}

  void count(size_t lo, size_t hi) const {
    if (s_.args.size() < lo || s_.args.size() > hi) {
      std::string want = lo == hi   ? std::to_string(lo)
                         : hi > 100 ? "at least " + std::to_string(lo)
                                    : std::to_string(lo) + " to " + std::to_string(hi);
      throw Error("expects " + want + " arguments (" + sig_ + "), got " + std::to_string(s_.args.size()));
    }
  }
  const std::string& name(size_t i, const char* what) const {
    const StepArg& a = s_.args.at(i);
    if (a.is_int())
      throw Error("argument " + std::to_string(i + 1) + " (" + what + ") must be a name, got " +
                  std::to_string(std::get<int64_t>(a.value)));
    if (!a.key.empty())
      throw Error("argument " + std::to_string(i + 1) + " (" + what + ") takes no key, got '" + a.key + "='");
    return std::get<std::string>(a.value);
  }
  int64_t integer(size_t i, const char* what) const {
    const StepArg& a = s_.args.at(i);
    if (!a.is_int())
      throw Error("argument " + std::to_string(i + 1) + " (" + what + ") must be an integer, got '" +
                  std::get<std::string>(a.value) + "'");
    return std::get<int64_t>(a.value);
  }
  const std::string& key(size_t i) const { return s_.args.at(i).key; }
  size_t size() const { return s_.args.size(); }

 private:
  const ScheduleStep& s_;
  std::string sig_;
};

namespace {

Stage make_stage(const te::Tensor& op, bool is_output) {
  Stage s;
  s.name = op->name;
  s.op = op;
  s.is_output = is_output;
  for (auto& iv : op->axes) s.axes.push_back(AxisState{iv.var->name, false, ForKind::kSerial, {}, {}});
  if (auto* r = op->reduction())
    for (auto& iv : r->axes) s.axes.push_back(AxisState{iv.var->name, true, ForKind::kSerial, {}, {}});
  s.num_root = static_cast<int>(s.axes.size());
  for (int i = 0; i < s.num_root; ++i) s.leaf.push_back(i);
  return s;
}

std::string stage_list(const ScheduleState& st) {
  std::string out;
  for (auto& s : st.stages) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

Stage& stage_by_name(ScheduleState& st, const std::string& name) {
  if (Stage* s = st.find(name)) return *s;
  for (auto& t : st.dag.ops)
    if (t->name == name && t->is_placeholder)
      throw Error(name + " is an input placeholder; only computed stages can be scheduled (stages: " + stage_list(st) +
                  ")");
  throw Error("no stage named '" + name + "' (stages: " + stage_list(st) + ")");
}

struct AxisRef {
  Stage* stage;
  int axis;
  int leaf_pos;
};

AxisRef leaf_axis(ScheduleState& st, const std::string& ref) {
  auto dot = ref.find('.');
  if (dot == std::string::npos) throw Error("'" + ref + "' is not an axis; write STAGE.AXIS, e.g. C.i");
  Stage& s = stage_by_name(st, ref.substr(0, dot));
  std::string axis_name = ref.substr(dot + 1);
  int a = s.find_axis(axis_name);
  if (a < 0) throw Error("stage " + s.name + " has no axis '" + axis_name + "' (its loops: " + s.leaf_names() + ")");
  auto it = std::find(s.leaf.begin(), s.leaf.end(), a);
  if (it == s.leaf.end())
    throw Error("axis " + ref + " was already split or fused; it is no longer a loop (loops of " + s.name + ": " +
                s.leaf_names() + ")");
  return AxisRef{&s, a, static_cast<int>(it - s.leaf.begin())};
}

void check_not_inline(const Stage& s) {
  if (s.attach == Attach::kInline) throw Error("stage " + s.name + " is inlined and has no loops of its own");
}

int add_axis(Stage& s, std::string name, bool is_reduce) {
  s.axes.push_back(AxisState{std::move(name), is_reduce, ForKind::kSerial, {}, {}});
  return static_cast<int>(s.axes.size()) - 1;
}

// Stages computed at loop `from` of `s` move to loop `to`, which replaces it (split: the inner
// loop, whose iterations are those of the loop it came from; fuse: the fused loop, one iteration
// per pair). Left behind, they would hang off a loop that no longer exists and vanish from the
// program.
void reattach(ScheduleState& st, const Stage& s, int from, int to) {
  for (Stage& c : st.stages)
    if (c.attach == Attach::kAt && c.attach_stage == s.name && c.attach_axis == from) c.attach_axis = to;
}

// Returns the positions (in leaf order) of the new outer and inner axes.
std::pair<int, int> do_split(AxisRef r, int64_t factor, bool nparts) {
  Stage& s = *r.stage;
  const std::string parent = s.axes[r.axis].name;
  bool red = s.axes[r.axis].is_reduce;
  int outer = add_axis(s, parent + ".outer", red);
  int inner = add_axis(s, parent + ".inner", red);
  s.relations.push_back(Relation{Relation::Kind::kSplit, r.axis, outer, inner, -1, factor, nparts});
  s.leaf[r.leaf_pos] = outer;
  s.leaf.insert(s.leaf.begin() + r.leaf_pos + 1, inner);
  return {outer, inner};
}

void reorder_axes(Stage& s, const std::vector<int>& order) {
  std::vector<int> positions;
  for (int a : order)
    positions.push_back(static_cast<int>(std::find(s.leaf.begin(), s.leaf.end(), a) - s.leaf.begin()));
  std::sort(positions.begin(), positions.end());
  for (size_t i = 0; i < order.size(); ++i) s.leaf[positions[i]] = order[i];
}

int64_t factor_arg(const StepArgs& a, size_t i, bool* nparts) {
  const std::string& k = a.key(i);
  if (!k.empty() && k != "nparts" && k != "factor")
    throw Error("argument " + std::to_string(i + 1) + ": unknown key '" + k + "' (allowed: factor, nparts)");
  *nparts = k == "nparts";
  int64_t f = a.integer(i, *nparts ? "nparts" : "factor");
  if (f < 1) throw Error(std::string(*nparts ? "nparts" : "factor") + " must be >= 1, got " + std::to_string(f));
  return f;
}

void annotate(ScheduleState& st, const StepArgs& a, ForKind kind, const std::string& tag, const char* what) {
  AxisRef r = leaf_axis(st, a.name(0, "axis"));
  check_not_inline(*r.stage);
  AxisState& ax = r.stage->axes[r.axis];
  // A reduction axis bound to threadIdx means "the block's threads reduce together" (the lowering
  // makes it a cross-thread reduction, core/lower/lower_thread_allreduce.h); a block index cannot
  // share one result between blocks.
  const bool threads_reduce = kind == ForKind::kThreadBound && tag.rfind("threadIdx", 0) == 0;
  if (ax.is_reduce && kind != ForKind::kUnrolled && !threads_reduce)
    throw Error(r.stage->name + "." + ax.name + " is a reduction axis; " + what + " needs a data-parallel axis" +
                (kind == ForKind::kThreadBound ? " (a reduction axis binds to threadIdx only)" : ""));
  if (ax.kind != ForKind::kSerial && (ax.kind != kind || ax.thread_tag != tag)) {
    std::string now =
        ax.kind == ForKind::kThreadBound ? "bound to " + ax.thread_tag : std::string(loopir::for_kind_name(ax.kind));
    throw Error(r.stage->name + "." + ax.name + " is already " + now);
  }
  ax.kind = kind;
  ax.thread_tag = tag;
}

bool is_known_scope(const std::string& scope) {
  // global, shared and local everywhere; a target declares its own scopes with a dotted name
  // (e.g. "accel.scratchpad").
  return scope == "global" || scope == "shared" || scope == "local" ||
         (scope.find('.') != std::string::npos && scope.front() != '.' && scope.back() != '.');
}

std::string fresh_stage_name(const ScheduleState& st, const std::string& base) {
  std::string name = base;
  for (int k = 1; st.find(name) || st.dag.find(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// Rewrites reads of buffer `from` into reads of `to` (same indices).
class RedirectLoads : public loopir::IRMutator {
 public:
  RedirectLoads(std::string from, loopir::Buffer to) : from_(std::move(from)), to_(std::move(to)) {}

 protected:
  loopir::Expr mutate_Load(const loopir::Load& n, const loopir::Expr& self) override {
    loopir::Expr e = IRMutator::mutate_Load(n, self);
    auto* l = loopir::as<loopir::Load>(e);
    if (l->buffer->name == from_) return loopir::make_load(to_, l->indices);
    return e;
  }

 private:
  std::string from_;
  loopir::Buffer to_;
};

te::Tensor find_tensor(const ScheduleState& st, const std::string& name) {
  if (auto* s = st.find(name)) return s->op;
  if (auto* t = st.dag.find(name)) return *t;
  return nullptr;
}

void insert_stage_before(ScheduleState& st, Stage stage, size_t pos) {
  st.stages.insert(st.stages.begin() + static_cast<long>(pos), std::move(stage));
}

size_t stage_index(const ScheduleState& st, const std::string& name) {
  for (size_t i = 0; i < st.stages.size(); ++i)
    if (st.stages[i].name == name) return i;
  return st.stages.size();
}

}  // namespace

// ---------------------------------------------------------------- the step kinds
// Each applies one step to the state (declared in step_apply.h for the table in step_kinds.cpp).

namespace step_apply {

void apply_split(ScheduleState& st, const StepArgs& a) {
  AxisRef r = leaf_axis(st, a.name(0, "axis"));
  check_not_inline(*r.stage);
  bool nparts = false;
  int64_t f = factor_arg(a, 1, &nparts);
  const int parent = r.axis;
  reattach(st, *r.stage, parent, do_split(r, f, nparts).second);
}

void apply_tile(ScheduleState& st, const StepArgs& a) {
  AxisRef x = leaf_axis(st, a.name(0, "axis_x"));
  AxisRef y = leaf_axis(st, a.name(1, "axis_y"));
  if (x.stage != y.stage)
    throw Error("axis_x and axis_y belong to different stages (" + x.stage->name + ", " + y.stage->name + ")");
  if (x.axis == y.axis) throw Error("axis_x and axis_y are the same axis");
  check_not_inline(*x.stage);
  bool np = false;
  int64_t fx = factor_arg(a, 2, &np);
  if (np) throw Error("argument 3: tile takes factors, not nparts");
  int64_t fy = factor_arg(a, 3, &np);
  if (np) throw Error("argument 4: tile takes factors, not nparts");
  auto [xo, xi] = do_split(x, fx, false);
  reattach(st, *x.stage, x.axis, xi);
  y = leaf_axis(st, a.name(1, "axis_y"));
  auto [yo, yi] = do_split(y, fy, false);
  reattach(st, *y.stage, y.axis, yi);
  reorder_axes(*x.stage, {xo, yo, xi, yi});
}

void apply_fuse(ScheduleState& st, const StepArgs& a) {
  AxisRef o = leaf_axis(st, a.name(0, "axis_outer"));
  AxisRef i = leaf_axis(st, a.name(1, "axis_inner"));
  if (o.stage != i.stage)
    throw Error("the two axes belong to different stages (" + o.stage->name + ", " + i.stage->name + ")");
  check_not_inline(*o.stage);
  Stage& s = *o.stage;
  if (i.leaf_pos != o.leaf_pos + 1)
    throw Error(s.axes[i.axis].name + " must come right after " + s.axes[o.axis].name + " to fuse them (loops of " +
                s.name + ": " + s.leaf_names() + ")");
  if (s.axes[o.axis].is_reduce != s.axes[i.axis].is_reduce)
    throw Error("cannot fuse a data-parallel axis with a reduction axis");
  int f = add_axis(s, s.axes[o.axis].name + "." + s.axes[i.axis].name + ".fused", s.axes[o.axis].is_reduce);
  s.relations.push_back(Relation{Relation::Kind::kFuse, -1, o.axis, i.axis, f, 0, false});
  s.leaf[o.leaf_pos] = f;
  s.leaf.erase(s.leaf.begin() + i.leaf_pos);
  reattach(st, s, o.axis, f);
  reattach(st, s, i.axis, f);
}

void apply_reorder(ScheduleState& st, const StepArgs& a) {
  std::vector<int> order;
  Stage* stage = nullptr;
  for (size_t k = 0; k < a.size(); ++k) {
    AxisRef r = leaf_axis(st, a.name(k, "axis"));
    if (stage && r.stage != stage)
      throw Error("argument " + std::to_string(k + 1) + ": all axes must belong to one stage (" + stage->name + ")");
    stage = r.stage;
    if (std::find(order.begin(), order.end(), r.axis) != order.end())
      throw Error("argument " + std::to_string(k + 1) + ": axis " + a.name(k, "axis") + " is listed twice");
    order.push_back(r.axis);
  }
  check_not_inline(*stage);
  reorder_axes(*stage, order);
}

void apply_bind(ScheduleState& st, const StepArgs& a) {
  static const std::set<std::string> tags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                             "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  const std::string& tag = a.name(1, "thread tag");
  if (!tags.count(tag))
    throw Error("argument 2: unknown thread tag '" + tag + "' (allowed: blockIdx.x/y/z, threadIdx.x/y/z)");
  AxisRef r = leaf_axis(st, a.name(0, "axis"));
  for (auto& ax : r.stage->axes)
    if (ax.thread_tag == tag && &ax != &r.stage->axes[r.axis])
      throw Error(tag + " is already bound to " + r.stage->name + "." + ax.name);
  annotate(st, a, ForKind::kThreadBound, tag, "bind");
}

void apply_compute_at(ScheduleState& st, const StepArgs& a) {
  Stage& p = stage_by_name(st, a.name(0, "stage"));
  AxisRef r = leaf_axis(st, a.name(1, "axis"));
  Stage& c = *r.stage;
  if (&p == &c) throw Error("a stage cannot be computed at its own loop");
  if (p.is_output) throw Error(p.name + " is an output of the kernel; it is computed at the root");
  check_not_inline(c);
  // Every reader runs inside the loop: the consumer itself, or a stage computed at that same loop
  // (its nest follows p's there) or at a loop of c further in (a packed panel of B computed at a
  // column-block loop, read by a register tile computed at the tile loop inside it), or one nested
  // in those. Lowering sizes p's region for all of them.
  auto inside = [&](const Stage* reader) {
    for (const Stage* s = reader; s; s = st.find(s->attach_stage)) {
      if (s == &c) return true;
      if (s->attach != Attach::kAt) return false;
      if (s->attach_stage == c.name) {
        auto at = std::find(c.leaf.begin(), c.leaf.end(), s->attach_axis);
        return at != c.leaf.end() && at - c.leaf.begin() >= r.leaf_pos;
      }
    }
    return false;
  };
  auto readers = st.effective_consumers(p.name);
  if (readers.empty() || !std::all_of(readers.begin(), readers.end(), inside)) {
    std::string names;
    for (auto* s : readers) names += (names.empty() ? "" : ", ") + s->name;
    throw Error("compute_at needs every reader of " + p.name + " to be " + c.name + " or computed at " +
                a.name(1, "axis") + " or a loop inside it (readers: " + (names.empty() ? "none" : names) + ")");
  }
  for (const Stage* s = &c; s && s->attach == Attach::kAt; s = st.find(s->attach_stage))
    if (s->attach_stage == p.name)
      throw Error(c.name + " is itself computed inside " + p.name + "; that would be a cycle");
  p.attach = Attach::kAt;
  p.attach_stage = c.name;
  p.attach_axis = r.axis;
}

void apply_compute_inline(ScheduleState& st, const StepArgs& a) {
  Stage& p = stage_by_name(st, a.name(0, "stage"));
  if (p.is_output) throw Error(p.name + " is an output of the kernel and cannot be inlined");
  if (p.op->reduction()) throw Error(p.name + " is a reduction; only injective stages can be inlined");
  if (st.consumers(p.name).empty()) throw Error(p.name + " has no readers to inline into");
  for (auto& s : st.stages)
    if (s.attach == Attach::kAt && s.attach_stage == p.name)
      throw Error(s.name + " is computed at " + p.name + "; move it first");
  p.attach = Attach::kInline;
}

void apply_compute_root(ScheduleState& st, const StepArgs& a) {
  Stage& p = stage_by_name(st, a.name(0, "stage"));
  p.attach = Attach::kRoot;
  p.attach_stage.clear();
  p.attach_axis = -1;
}

void apply_cache_read(ScheduleState& st, const StepArgs& a) {
  const std::string& tname = a.name(0, "tensor");
  te::Tensor t = find_tensor(st, tname);
  if (!t) throw Error("no tensor named '" + tname + "' (stages: " + stage_list(st) + ")");
  const std::string& scope = a.name(1, "scope");
  if (!is_known_scope(scope))
    throw Error("argument 2: unknown memory scope '" + scope +
                "' (global, shared, local, or a target's dotted scope such as accel.scratchpad)");
  std::vector<Stage*> readers;
  for (size_t k = 2; k < a.size(); ++k) {
    Stage& r = stage_by_name(st, a.name(k, "reader"));
    bool reads = false;
    for (auto& in : r.op->inputs) reads = reads || in->name == tname;
    if (!reads) throw Error("argument " + std::to_string(k + 1) + ": " + r.name + " does not read " + tname);
    readers.push_back(&r);
  }
  std::string name = fresh_stage_name(
      st, tname + "_" + std::string(scope == "global" ? "global" : scope.substr(scope.rfind('.') + 1)));
  std::vector<std::string> axis_names;
  for (size_t d = 0; d < t->shape.size(); ++d) axis_names.push_back("ax" + std::to_string(d));
  te::Tensor copy = te::compute(
      name, t->shape, [&](const std::vector<loopir::Expr>& i) { return te::at(t, i); }, axis_names);
  auto buf = copy->buffer;
  std::vector<std::string> reader_names;
  for (Stage* r : readers) reader_names.push_back(r->name);
  size_t pos = st.stages.size();
  for (auto& rn : reader_names) {
    Stage& r = *st.find(rn);
    RedirectLoads redirect(tname, buf);
    std::vector<te::Tensor> inputs;
    for (auto& in : r.op->inputs) inputs.push_back(in->name == tname ? copy : in);
    r.op = te::with_body(r.op, redirect.mutate(r.op->body), inputs);
    pos = std::min(pos, stage_index(st, rn));
  }
  Stage s = make_stage(copy, false);
  s.scope = scope;
  insert_stage_before(st, std::move(s), pos);
}

void apply_cache_write(ScheduleState& st, const StepArgs& a) {
  Stage& c = stage_by_name(st, a.name(0, "stage"));
  const std::string& scope = a.name(1, "scope");
  if (!is_known_scope(scope))
    throw Error("argument 2: unknown memory scope '" + scope +
                "' (global, shared, local, or a target's dotted scope such as accel.scratchpad)");
  bool untouched = c.relations.empty() && c.attach == Attach::kRoot;
  for (int i = 0; i < c.num_root; ++i) untouched = untouched && c.leaf[i] == i && c.axes[i].kind == ForKind::kSerial;
  if (!untouched) throw Error("cache_write must come before " + c.name + " is split, reordered, annotated or moved");
  for (auto& s : st.stages)
    if (s.attach == Attach::kAt && s.attach_stage == c.name)
      throw Error(s.name + " is computed at " + c.name + "; cache_write must come first");
  std::string name = fresh_stage_name(st, c.name + "_" + std::string(scope.substr(scope.rfind('.') + 1)));
  auto inner = std::make_shared<te::OperationNode>(*c.op);
  inner->name = name;
  inner->buffer = loopir::make_buffer(name, inner->dtype, inner->shape);
  te::Tensor inner_op = inner;
  std::vector<std::string> axis_names;
  for (auto& iv : c.op->axes) axis_names.push_back(iv.var->name);
  te::Tensor outer = te::compute(
      c.name, c.op->shape, [&](const std::vector<loopir::Expr>& i) { return te::at(inner_op, i); }, axis_names);
  size_t pos = stage_index(st, c.name);
  bool out = c.is_output;
  Stage new_outer = make_stage(outer, out);
  Stage new_inner = make_stage(inner_op, false);
  new_inner.scope = scope;
  st.stages[pos] = std::move(new_outer);
  insert_stage_before(st, std::move(new_inner), pos);
  for (auto& o : st.dag.outputs)
    if (o->name == outer->name) o = outer;
}

void apply_storage_align(ScheduleState& st, const StepArgs& a) {
  const std::string& ref = a.name(0, "axis");
  auto dot = ref.find('.');
  if (dot == std::string::npos) throw Error("'" + ref + "' is not an axis; write STAGE.AXIS");
  Stage& s = stage_by_name(st, ref.substr(0, dot));
  int axis = s.find_axis(ref.substr(dot + 1));
  int rank = static_cast<int>(s.op->axes.size());
  if (axis < 0 || axis >= rank)
    throw Error(ref + " is not a dimension of " + s.name +
                "'s storage (its dimensions are its root data-parallel axes)");
  if (axis == rank - 1) throw Error(ref + " is the innermost dimension (stride 1); align an outer dimension");
  int64_t factor = a.integer(1, "factor"), offset = a.integer(2, "offset");
  if (factor < 1) throw Error("factor must be >= 1, got " + std::to_string(factor));
  if (offset < 0 || offset >= factor) throw Error("offset must be in [0, factor), got " + std::to_string(offset));
  s.align.push_back(StorageAlign{axis, factor, offset});
}

// set_scope(stage, scope): where a computed intermediate lives (TVM's set_scope). A GPU
// reduction's partial results in `shared` are written by every thread of the block and read by
// all of them; its final value in `local` is a register each thread computes for itself.
void apply_set_scope(ScheduleState& st, const StepArgs& a) {
  Stage& s = stage_by_name(st, a.name(0, "stage"));
  const std::string& scope = a.name(1, "scope");
  if (!is_known_scope(scope))
    throw Error("argument 2: unknown memory scope '" + scope +
                "' (global, shared, local, or a target's dotted scope such as accel.scratchpad)");
  if (s.is_output) throw Error(s.name + " is an output of the kernel: it lives where the caller's buffer is");
  s.scope = scope;
}

void apply_double_buffer(ScheduleState& st, const StepArgs& a) {
  Stage& s = stage_by_name(st, a.name(0, "stage"));
  if (s.attach != Attach::kAt)
    throw Error(s.name + " must be computed at a loop (compute_at) before it can be double-buffered");
  s.double_buffer = true;
}

void apply_pragma(ScheduleState& st, const StepArgs& a) {
  AxisRef r = leaf_axis(st, a.name(0, "axis"));
  const std::string& key = a.key(1);
  if (key != "auto_unroll_max_step")
    throw Error("argument 2: unknown pragma '" + (key.empty() ? std::string("(no key)") : key) +
                "' (known: auto_unroll_max_step=N)");
  int64_t v = a.integer(1, "auto_unroll_max_step");
  if (v < 0) throw Error("auto_unroll_max_step must be >= 0, got " + std::to_string(v));
  r.stage->axes[r.axis].pragmas.emplace_back(key, v);
}

// prefetch(C.k.outer, W, O.o, 1): see PrefetchHint. The tensor must be one the stage reads; the
// loop to look ahead along must enclose the hinted loop when the program is built (lowering says
// so when it does not: compute_at may still move the stage after this step).
void apply_prefetch(ScheduleState& st, const StepArgs& a) {
  AxisRef r = leaf_axis(st, a.name(0, "axis"));
  const std::string& tensor = a.name(1, "tensor");
  // What it does read, for the message, sorted: op->inputs lists tensors in the order the body's
  // reads were evaluated, which C++ leaves to the compiler for `A(i) * B(j)` (GCC: B first).
  std::vector<std::string> names;
  for (const te::Tensor& in : r.stage->op->inputs) names.push_back(in->name);
  std::sort(names.begin(), names.end());
  const bool reads = std::find(names.begin(), names.end(), tensor) != names.end();
  std::string read;
  for (const std::string& n : names) read += (read.empty() ? "" : ", ") + n;
  if (!reads)
    throw Error("argument 2: " + r.stage->name + " does not read '" + tensor + "' (it reads " +
                (read.empty() ? std::string("no tensor") : read) + ")");
  if (r.stage->axes[r.axis].kind == ForKind::kVectorized)
    throw Error(a.name(0, "axis") + " is vectorized: put the hints in a loop around the vector lanes");
  AxisRef ahead = leaf_axis(st, a.name(2, "ahead axis"));
  const int64_t offset = a.integer(3, "offset");
  if (offset < 1 || offset > 4096) throw Error("offset must be in [1, 4096], got " + std::to_string(offset));
  r.stage->prefetches.push_back(
      {r.axis, tensor, a.name(2, "ahead axis"), ahead.stage->axes[ahead.axis].name, offset});
}

// rfactor(C.k.inner): the reduction over k.inner becomes a data-parallel axis of a new stage
// C_rf, which reduces over the rest; C then reduces C_rf over that axis.
//
//   C[i, j] = sum(A[i, k] * B[k, j], k)      split(C.k, 4); rfactor(C.k.inner)
//   ->  C_rf[k.inner, i, j] = sum(A[i, k.outer*4 + k.inner] * B[...], k.outer)
//       C[i, j] = sum(C_rf[k.inner, i, j], k.inner)
void apply_rfactor(ScheduleState& st, const StepArgs& a) {
  AxisRef r = leaf_axis(st, a.name(0, "axis"));
  Stage& c = *r.stage;
  const loopir::Reduce* red = c.op->reduction();
  if (!red || !c.axes[r.axis].is_reduce)
    throw Error(a.name(0, "axis") + " is not a reduction axis; rfactor factors a reduction axis out");
  if (c.attach != Attach::kRoot) throw Error("rfactor needs " + c.name + " computed at the root");
  for (auto& s : st.stages)
    if (s.attach == Attach::kAt && s.attach_stage == c.name)
      throw Error(s.name + " is computed at " + c.name + "; rfactor must come first");
  // Which root reduction axis, and how the factored axis relates to it.
  const Relation* split = nullptr;
  for (auto& rel : c.relations) {
    bool ours =
        rel.kind == Relation::Kind::kSplit && (rel.outer == r.axis || rel.inner == r.axis) && rel.parent < c.num_root;
    if (!ours)
      throw Error("rfactor must come right after splitting the reduction axis (" + c.name +
                  " has other splits, fuses or tiles)");
    split = &rel;
  }
  for (auto& ax : c.axes)
    if (ax.kind != ForKind::kSerial) throw Error("rfactor must come before " + c.name + "'s loops are annotated");
  int spatial = static_cast<int>(c.op->axes.size());
  int root = split ? split->parent : r.axis;
  int root_reduce = root - spatial;
  int64_t extent = red->axes[root_reduce].extent;
  int64_t inner_ext = 0, outer_ext = 0;
  if (split) {
    inner_ext = split->by_nparts ? (extent + split->factor - 1) / split->factor : split->factor;
    outer_ext = split->by_nparts ? split->factor : (extent + split->factor - 1) / split->factor;
  }
  bool factor_is_inner = split && split->inner == r.axis;
  int64_t factored_extent = !split ? extent : factor_is_inner ? inner_ext : outer_ext;
  std::string factored_name = c.axes[r.axis].name;

  Shape rf_shape = {factored_extent};
  rf_shape.insert(rf_shape.end(), c.op->shape.begin(), c.op->shape.end());
  std::vector<std::string> names = {factored_name};
  for (auto& iv : c.op->axes) names.push_back(iv.var->name);
  te::Tensor old = c.op;
  std::string rf_name = fresh_stage_name(st, c.name + "_rf");
  te::Tensor rf = te::compute(
      rf_name, rf_shape,
      [&](const std::vector<loopir::Expr>& idx) {
        loopir::VarMap m;
        for (int d = 0; d < spatial; ++d) m[old->axes[d].var.get()] = idx[d + 1];
        std::vector<loopir::IterVar> rest;
        loopir::Expr k_value = idx[0];
        if (split) {
          std::string other_name = c.axes[factor_is_inner ? split->outer : split->inner].name;
          loopir::IterVar other = te::reduce_axis(factor_is_inner ? outer_ext : inner_ext, other_name);
          rest.push_back(other);
          k_value = factor_is_inner ? other.var * inner_ext + idx[0] : idx[0] * inner_ext + other.var;
        }
        m[red->axes[root_reduce].var.get()] = k_value;
        for (size_t q = 0; q < red->axes.size(); ++q) {
          if (static_cast<int>(q) == root_reduce) continue;
          loopir::IterVar fresh = te::reduce_axis(red->axes[q].extent, red->axes[q].var->name);
          m[red->axes[q].var.get()] = fresh.var;
          rest.push_back(fresh);
        }
        loopir::Expr source = loopir::substitute(red->source, m);
        if (split && outer_ext * inner_ext != extent)
          source = loopir::make_select(loopir::lt(k_value, loopir::make_int(extent)), source, red->combiner->identity);
        if (rest.empty()) return source;
        return te::reduce(red->combiner, source, rest);
      },
      names);
  rf = te::with_body(rf, rf->body, old->inputs);  // the substituted formula reads what C read
  loopir::IterVar over = te::reduce_axis(factored_extent, factored_name);
  std::vector<std::string> out_names;
  for (auto& iv : old->axes) out_names.push_back(iv.var->name);
  te::Tensor merged = te::compute(
      c.name, old->shape,
      [&](const std::vector<loopir::Expr>& idx) {
        std::vector<loopir::Expr> at_idx = {over.var};
        at_idx.insert(at_idx.end(), idx.begin(), idx.end());
        return te::reduce(red->combiner, te::at(rf, at_idx), {over});
      },
      out_names);
  size_t pos = stage_index(st, c.name);
  bool out = c.is_output;
  st.stages[pos] = make_stage(merged, out);
  insert_stage_before(st, make_stage(rf, false), pos);
  for (auto& o : st.dag.outputs)
    if (o->name == merged->name) o = merged;
}

// tensorize(C.i.inner, gemm_16x16x16_f32): the loops from C.i.inner inward must each be the
// innermost (step-1) part of a distinct root axis, without a split tail, and the stage's update
// over those root axes must be the intrinsic's computation (same formula, operands accessed the
// same way, extents equal). The lowering pass `tensorize` replaces the nest by the call.
void apply_tensorize(ScheduleState& st, const StepArgs& a) {
  AxisRef r = leaf_axis(st, a.name(0, "axis"));
  Stage& s = *r.stage;
  check_not_inline(s);
  const std::string& name = a.name(1, "intrinsic");
  const te::TensorIntrinsic* in = te::find_tensor_intrinsic(name);
  if (!in) throw Error("unknown tensor intrinsic '" + name + "' (declared: " + te::tensor_intrinsic_names() + ")");
  if (s.tensorize_axis >= 0)
    throw Error(s.name + " is already tensorized at " + s.name + "." + s.axes[s.tensorize_axis].name);
  const loopir::Reduce* red = s.op->reduction();
  if (!red) throw Error(s.name + " is not a reduction, but " + in->name + " computes one");
  // Extents of every axis, as lowering computes them for a stage at the root. A stage computed at
  // a loop covers a region known only when lowering (-1 here); the tensorize pass checks those.
  std::vector<int64_t> extent(s.axes.size(), 0);
  int spatial = static_cast<int>(s.op->axes.size());
  for (int q = 0; q < s.num_root; ++q)
    extent[q] = q >= spatial ? red->axes[q - spatial].extent : s.attach == Attach::kAt ? -1 : s.op->axes[q].extent;
  for (auto& rel : s.relations) {
    if (rel.kind == Relation::Kind::kFuse) {
      bool known = extent[rel.outer] >= 0 && extent[rel.inner] >= 0;
      extent[rel.fused] = known ? extent[rel.outer] * extent[rel.inner] : -1;
      continue;
    }
    int64_t parent = extent[rel.parent];
    int64_t parts = parent < 0 ? -1 : (parent + rel.factor - 1) / rel.factor;
    extent[rel.outer] = rel.by_nparts ? rel.factor : parts;
    extent[rel.inner] = rel.by_nparts ? parts : rel.factor;
  }
  std::string names;
  for (size_t q = static_cast<size_t>(r.leaf_pos); q < s.leaf.size(); ++q)
    names += (names.empty() ? "" : ", ") + s.axes[s.leaf[q]].name;
  size_t want = te::intrinsic_axes(*in).size(), have = s.leaf.size() - static_cast<size_t>(r.leaf_pos);
  if (have != want)
    throw Error("the loops under " + a.name(0, "axis") + " are " + names + " (" + std::to_string(have) + "), but " +
                in->name + " computes over " + std::to_string(want) + " axes");
  std::vector<te::TensorizedLoop> loops;
  std::vector<int> roots;
  for (size_t q = static_cast<size_t>(r.leaf_pos); q < s.leaf.size(); ++q) {
    int leaf = s.leaf[q];
    for (auto& c : st.stages)
      if (c.attach == Attach::kAt && c.attach_stage == s.name && c.attach_axis == leaf)
        throw Error(c.name + " is computed at " + s.name + "." + s.axes[leaf].name +
                    ", inside the nest a tensor intrinsic would replace");
    int cur = leaf;
    while (cur >= s.num_root) {
      const Relation* up = nullptr;
      for (auto& rel : s.relations)
        if ((rel.kind == Relation::Kind::kSplit && (rel.inner == cur || rel.outer == cur)) ||
            (rel.kind == Relation::Kind::kFuse && rel.fused == cur))
          up = &rel;
      if (up->kind == Relation::Kind::kFuse || up->outer == cur)
        throw Error(s.name + "." + s.axes[leaf].name +
                    " does not walk its data with step 1 (only the inner parts of splits can be tensorized)");
      if (extent[up->parent] >= 0 && extent[up->outer] * extent[up->inner] != extent[up->parent])
        throw Error("the split of " + s.name + "." + s.axes[up->parent].name + " has a tail; " + in->name +
                    " needs whole tiles");
      cur = up->parent;
    }
    if (std::find(roots.begin(), roots.end(), cur) != roots.end())
      throw Error("two loops under " + a.name(0, "axis") + " walk root axis " + s.axes[cur].name);
    roots.push_back(cur);
    loopir::VarRef v = cur < spatial ? s.op->axes[cur].var : red->axes[cur - spatial].var;
    loops.push_back(te::TensorizedLoop{v, extent[leaf], s.name + "." + s.axes[leaf].name});
  }
  // The stage's update in root-axis terms, with the tensorized roots named by their loops' extents.
  std::vector<loopir::Expr> out_idx;
  for (auto& iv : s.op->axes) out_idx.push_back(iv.var);
  loopir::VarMap m{{red->combiner->lhs.get(), loopir::make_load(s.op->buffer, out_idx)},
                   {red->combiner->rhs.get(), red->source}};
  loopir::Expr update = loopir::substitute(red->combiner->combine, m);
  te::IntrinsicMatch match;
  std::string why = te::match_tensor_intrinsic(*in, s.op->buffer, out_idx, update, loops, &match);
  if (!why.empty()) throw Error(s.name + " does not compute " + in->name + ": " + why);
  s.tensorize_axis = r.axis;
  s.tensor_intrinsic = in->name;
}

void apply_vectorize(ScheduleState& st, const StepArgs& a) { annotate(st, a, ForKind::kVectorized, {}, "vectorize"); }
void apply_unroll(ScheduleState& st, const StepArgs& a) { annotate(st, a, ForKind::kUnrolled, {}, "unroll"); }
void apply_parallel(ScheduleState& st, const StepArgs& a) { annotate(st, a, ForKind::kParallel, {}, "parallel"); }
void apply_vthread(ScheduleState& st, const StepArgs& a) {
  annotate(st, a, ForKind::kVirtualThread, "vthread", "vthread");
}

}  // namespace step_apply

ScheduleState initial_state(const te::ComputeDag& dag) {
  ScheduleState st;
  st.dag = dag;
  for (auto& t : dag.ops) {
    if (t->is_placeholder) continue;
    bool out = false;
    for (auto& o : dag.outputs) out = out || o == t;
    st.stages.push_back(make_stage(t, out));
  }
  return st;
}

void apply_step(ScheduleState& st, const ScheduleStep& step) {
  const StepKindInfo* info = find_step_kind(step.kind);
  if (!info) throw Error("unknown step kind '" + step.kind + "'");
  StepArgs a(step, info->signature);
  a.count(info->min_args, info->max_args);
  info->apply(st, a);
}

}  // namespace tessel::schedule
