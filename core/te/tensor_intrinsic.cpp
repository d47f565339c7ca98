#include "core/te/tensor_intrinsic.h"

#include <algorithm>

#include "core/arith/simplify.h"
#include "core/loopir/equal.h"
#include "core/loopir/functor.h"
#include "core/loopir/interpreter.h"
#include "core/loopir/printer.h"
#include "core/support/error.h"

namespace tessel::te {
using namespace loopir;

namespace {

// C[i, j] += A[i, k] * B[k, j] on n x n row blocks with leading strides. int8 operands accumulate
// in int32 (an accelerator's GEMM core: int8 x int8 -> int32).
TensorIntrinsic declare_gemm(int64_t n, DataType in_type) {
  const bool int8 = in_type == DataType::kInt8;
  Tensor a = placeholder("A", {n, n}, in_type);
  Tensor b = placeholder("B", {n, n}, in_type);
  IterVar k = reduce_axis(n, "k");
  Tensor c = compute("C", {n, n},
                     [&](const std::vector<Expr>& i) {
                       Expr x = at(a, {i[0], k.var}), y = at(b, {k.var, i[1]});
                       if (int8) return sum(cast(DataType::kInt32, x) * cast(DataType::kInt32, y), {k});
                       return sum(x * y, {k});
                     },
                     {"i", "j"});
  std::string size = std::to_string(n);
  TensorIntrinsic in;
  in.name = "gemm_" + size + "x" + size + "x" + size + (int8 ? "_i8" : "_f32");
  in.computation = make_dag(in.name, {c});
  in.update_call = std::string(loopir::kTensorIntrinsicPrefix) + in.name;
  in.reset_call = in.update_call + "_reset";
  return in;
}

// C[j] += Σ_k A[k] · B[j, k] for 16 lanes j, 4 bytes k: one VNNI dot step (x86 vpdpbusd), u8 × s8
// summed into s32 without saturation. A is 4 consecutive bytes (broadcast to every lane), B a
// 16 × 4 block of weights, row j the 4 bytes lane j multiplies.
TensorIntrinsic declare_dot_16x4_u8i8() {
  Tensor a = placeholder("A", {4}, DataType::kUInt8);
  Tensor b = placeholder("B", {16, 4}, DataType::kInt8);
  IterVar k = reduce_axis(4, "k");
  Tensor c =
      compute("C", {16},
              [&](const std::vector<Expr>& j) {
                return sum(cast(DataType::kInt32, at(a, {k.var})) * cast(DataType::kInt32, at(b, {j[0], k.var})), {k});
              },
              {"j"});
  TensorIntrinsic in;
  in.name = "dot_16x4_u8i8_i32";
  in.computation = make_dag(in.name, {c});
  in.update_call = std::string(loopir::kTensorIntrinsicPrefix) + in.name;
  in.reset_call = in.update_call + "_reset";
  return in;
}

// The output's update as a loop-IR value: combine(out[axes], source).
Expr update_pattern(const TensorIntrinsic& in) {
  const OperationNode& out = in.output();
  const Reduce* red = out.reduction();
  std::vector<Expr> idx;
  for (auto& iv : out.axes) idx.push_back(iv.var);
  VarMap m{{red->combiner->lhs.get(), make_load(out.buffer, idx)}, {red->combiner->rhs.get(), red->source}};
  return substitute(red->combiner->combine, m);
}

class Matcher {
 public:
  Matcher(const TensorIntrinsic& in, const std::vector<TensorizedLoop>& loops, IntrinsicMatch* m) : in_(in), m_(m) {
    for (auto& l : loops) {
      loops_[l.var.get()] = l.extent;
      handles_[l.var.get()] = l.var;
      names_[l.var.get()] = l.name.empty() ? l.var->name : l.name;
    }
    auto axes = intrinsic_axes(in);
    for (size_t a = 0; a < axes.size(); ++a) axis_of_[axes[a].var.get()] = static_cast<int>(a);
    m_->axis_vars.assign(axes.size(), nullptr);
  }

  std::string error;

  bool access(const Buffer& pat, const std::vector<Expr>& pat_idx, const Buffer& prog,
              const std::vector<Expr>& prog_idx) {
    if (prog->dtype != pat->dtype)
      return fail(prog->name + " holds " + std::string(dtype_name(prog->dtype)) + ", but " + in_.name + "'s " +
                  pat->name + " is " + std::string(dtype_name(pat->dtype)));
    auto bound = m_->operands.find(pat->name);
    if (bound != m_->operands.end()) {
      const OperandAccess& prev = bound->second;
      bool same = prev.buffer->name == prog->name && prev.indices.size() == prog_idx.size();
      for (size_t d = 0; same && d < prog_idx.size(); ++d) same = structural_equal(prev.indices[d], prog_idx[d]);
      if (!same)
        return fail(in_.name + "'s operand " + pat->name + " is accessed as " + access_text(prev.buffer, prev.indices) +
                    " and as " + access_text(prog, prog_idx));
      return true;
    }
    for (auto& [name, acc] : m_->operands)
      if (acc.buffer->name == prog->name)
        return fail(prog->name + " would be both " + name + " and " + pat->name + " of " + in_.name);
    OperandAccess acc{prog, prog_idx, {}};
    std::vector<const Var*> walked;
    for (auto& e : prog_idx) {
      std::vector<const Var*> used;
      uses_var(e, [&](const Var* v) {
        if (loops_.count(v) && std::find(used.begin(), used.end(), v) == used.end()) used.push_back(v);
        return false;
      });
      if (used.empty()) {
        acc.walk.push_back(-1);
        continue;
      }
      Expr rest = arith::simplify(e - Expr(handles_.at(used[0])));
      bool unit = used.size() == 1 && !uses_var(rest, [&](const Var* v) { return loops_.count(v) > 0; });
      if (!unit)
        return fail("index " + loopir::to_string(e) + " of " + prog->name +
                    " does not walk one tensorized loop with step 1 (as " + in_.name + "'s " + pat->name + " does)");
      walked.push_back(used[0]);
      acc.walk.push_back(0);  // fixed below, once the axis is known
    }
    if (walked.size() != pat_idx.size())
      return fail(access_text(prog, prog_idx) + " walks " + std::to_string(walked.size()) + " tensorized loops, but " +
                  in_.name + "'s " + pat->name + " has " + std::to_string(pat_idx.size()) + " dimensions");
    size_t w = 0;
    for (size_t d = 0; d < acc.walk.size(); ++d) {
      if (acc.walk[d] < 0) continue;
      auto* pv = as<Var>(pat_idx[w]);
      auto it = pv ? axis_of_.find(pv) : axis_of_.end();
      if (it == axis_of_.end()) return fail(in_.name + "'s " + pat->name + " is not indexed by its axes");
      int axis = it->second;
      const Var* prog_var = walked[w++];
      const Var*& slot = m_->axis_vars[static_cast<size_t>(axis)];
      if (slot && slot != prog_var)
        return fail(access_text(prog, prog_idx) + " does not match " + in_.name + "'s " + access_text(pat, pat_idx) +
                    ": " + pv->name + " would be both " + names_.at(slot) + " and " + names_.at(prog_var));
      for (size_t other = 0; other < m_->axis_vars.size(); ++other)
        if (static_cast<int>(other) != axis && m_->axis_vars[other] == prog_var)
          return fail(access_text(prog, prog_idx) + " does not match " + in_.name + "'s " + access_text(pat, pat_idx) +
                      ": loop " + names_.at(prog_var) + " would be two axes");
      slot = prog_var;
      acc.walk[d] = axis;
    }
    m_->operands[pat->name] = std::move(acc);
    return true;
  }

  bool expr(const Expr& pat, const Expr& prog) {
    if (pat->kind != prog->kind || pat->dtype != prog->dtype) return mismatch(pat, prog);
    switch (pat->kind) {
      case NodeKind::kIntImm:
        return as<IntImm>(pat)->value == as<IntImm>(prog)->value || mismatch(pat, prog);
      case NodeKind::kFloatImm:
        return as<FloatImm>(pat)->value == as<FloatImm>(prog)->value || mismatch(pat, prog);
      case NodeKind::kBinary: {
        auto *a = as<Binary>(pat), *b = as<Binary>(prog);
        return (a->op == b->op || mismatch(pat, prog)) && expr(a->a, b->a) && expr(a->b, b->b);
      }
      case NodeKind::kNot:
        return expr(as<Not>(pat)->a, as<Not>(prog)->a);
      case NodeKind::kCast:
        return expr(as<Cast>(pat)->value, as<Cast>(prog)->value);
      case NodeKind::kSelect: {
        auto *a = as<Select>(pat), *b = as<Select>(prog);
        return expr(a->cond, b->cond) && expr(a->true_value, b->true_value) && expr(a->false_value, b->false_value);
      }
      case NodeKind::kCall: {
        auto *a = as<Call>(pat), *b = as<Call>(prog);
        if (a->name != b->name || a->args.size() != b->args.size()) return mismatch(pat, prog);
        for (size_t q = 0; q < a->args.size(); ++q)
          if (!expr(a->args[q], b->args[q])) return false;
        return true;
      }
      case NodeKind::kLoad: {
        auto *a = as<Load>(pat), *b = as<Load>(prog);
        return access(a->buffer, a->indices, b->buffer, b->indices);
      }
      default:
        return mismatch(pat, prog);
    }
  }

  // `count`: how many of the intrinsic's axes the matched statement covers (all, or the spatial
  // ones for the initialization).
  bool extents(size_t count) {
    auto axes = intrinsic_axes(in_);
    for (size_t a = 0; a < count; ++a) {
      const Var* v = m_->axis_vars[a];
      if (!v) return fail("no tensorized loop walks " + in_.name + "'s axis " + axes[a].var->name);
      int64_t ext = loops_.at(v);
      if (ext >= 0 && ext != axes[a].extent)
        return fail("loop " + names_.at(v) + " has extent " + std::to_string(ext) + ", but " + in_.name + "'s axis " +
                    axes[a].var->name + " has extent " + std::to_string(axes[a].extent));
    }
    for (auto& [v, ext] : loops_)
      if (std::find(m_->axis_vars.begin(), m_->axis_vars.end(), v) == m_->axis_vars.end())
        return fail("loop " + names_.at(v) + " is not an axis of " + in_.name + "'s computation");
    return true;
  }

 private:
  std::string axes_name(int axis) const { return intrinsic_axes(in_)[static_cast<size_t>(axis)].var->name; }
  bool fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }
  bool mismatch(const Expr& pat, const Expr& prog) {
    return fail("the program computes " + loopir::to_string(prog) + " where " + in_.name + " computes " +
                loopir::to_string(pat));
  }
  static std::string access_text(const Buffer& b, const std::vector<Expr>& idx) {
    return loopir::to_string(make_load(b, idx));
  }
  const TensorIntrinsic& in_;
  std::map<const Var*, int64_t> loops_;
  std::map<const Var*, VarRef> handles_;
  std::map<const Var*, std::string> names_;
  IntrinsicMatch* m_;
  std::map<const Var*, int> axis_of_;
};

// Rewrites reads of the declaration's operands into flat accesses of the call's buffers.
class FlatOperands : public IRMutator {
 public:
  FlatOperands(const std::vector<Tensor>& ops, const std::vector<Buffer>& buffers, const std::vector<int64_t>& base,
               const std::vector<std::vector<int64_t>>& strides)
      : ops_(ops), buffers_(buffers), base_(base), strides_(strides) {}

  Expr flat(size_t t, const std::vector<Expr>& idx) const {
    Expr e = make_int(base_[t]);
    for (size_t d = 0; d < idx.size(); ++d) e = e + idx[d] * strides_[t][d];
    return arith::simplify(e);
  }
  size_t operand(const std::string& name) const {
    for (size_t t = 0; t < ops_.size(); ++t)
      if (ops_[t]->name == name) return t;
    throw Error("tensor intrinsic: no operand named " + name);
  }

 protected:
  Expr mutate_Load(const Load& n, const Expr& self) override {
    Expr e = IRMutator::mutate_Load(n, self);
    auto* l = as<Load>(e);
    size_t t = operand(l->buffer->name);
    return make_load(buffers_[t], {flat(t, l->indices)});
  }

 private:
  const std::vector<Tensor>& ops_;
  const std::vector<Buffer>& buffers_;
  const std::vector<int64_t>& base_;
  const std::vector<std::vector<int64_t>>& strides_;
};

// What one call of `in` does where it runs: the call's arguments (`address_of(T[first element])`
// and strides per operand, the rule in the header) give the regions, and the declared computation
// runs over them.
Stmt call_semantics(const TensorIntrinsic& in, bool reset, const Call& n, CallSite& site) {
  std::vector<Tensor> ops = in.operands();
  if (reset) ops = {ops.back()};
  std::vector<Buffer> buffers;
  std::vector<int64_t> base;
  std::vector<std::vector<int64_t>> strides;
  size_t k = 0;
  for (auto& op : ops) {
    const Load* l = k < n.args.size() ? address_of_load(n.args[k]) : nullptr;
    if (!l)
      throw Error("interpreter: argument " + std::to_string(k + 1) + " of " + n.name +
                  " must be address_of(BUFFER[index])");
    ++k;
    buffers.push_back(l->buffer);
    base.push_back(site.element_offset(*l));
    std::vector<int64_t> st;
    for (size_t d = 0; d + 1 < op->shape.size(); ++d, ++k) {
      if (k >= n.args.size()) throw Error("interpreter: " + n.name + " is missing the strides of " + op->name);
      st.push_back(site.integer(n.args[k]));
    }
    st.push_back(1);
    strides.push_back(std::move(st));
  }
  if (k != n.args.size()) throw Error("interpreter: " + n.name + " takes " + std::to_string(k) + " arguments");
  if (reset) {
    // The reset fills the output: the semantics builder takes every operand, only the last is used.
    size_t inputs = in.operands().size() - 1;
    Buffer out_buffer = buffers.back();
    int64_t out_base = base.back();
    std::vector<int64_t> out_strides = strides.back();
    buffers.insert(buffers.begin(), inputs, out_buffer);
    base.insert(base.begin(), inputs, out_base);
    strides.insert(strides.begin(), inputs, out_strides);
  }
  return tensor_intrinsic_semantics(in, reset, buffers, base, strides);
}

bool register_call_evaluators(const std::vector<TensorIntrinsic>& table) {
  for (const TensorIntrinsic& in : table) {
    register_call_evaluator(in.update_call,
                            [&in](const Call& call, CallSite& site) { return call_semantics(in, false, call, site); });
    register_call_evaluator(in.reset_call,
                            [&in](const Call& call, CallSite& site) { return call_semantics(in, true, call, site); });
  }
  return true;
}

}  // namespace

std::vector<Tensor> TensorIntrinsic::operands() const {
  std::vector<Tensor> out = computation.inputs();
  out.push_back(computation.outputs[0]);
  return out;
}

const std::vector<TensorIntrinsic>& tensor_intrinsics() {
  static const std::vector<TensorIntrinsic> table = {
      declare_gemm(16, DataType::kFloat32), declare_gemm(8, DataType::kFloat32), declare_gemm(16, DataType::kInt8),
      declare_gemm(8, DataType::kInt8), declare_dot_16x4_u8i8()};
  // Declaring an intrinsic teaches the loop-IR interpreter its calls, once. A program holds such a
  // call only after tensorize found the intrinsic here, so the interpreter always knows it in time.
  [[maybe_unused]] static const bool interpretable = register_call_evaluators(table);
  return table;
}

const TensorIntrinsic* find_tensor_intrinsic(const std::string& name) {
  for (auto& in : tensor_intrinsics())
    if (in.name == name) return &in;
  return nullptr;
}

const TensorIntrinsic* find_tensor_intrinsic_call(const std::string& call_name, bool* reset) {
  for (auto& in : tensor_intrinsics()) {
    if (in.update_call == call_name || in.reset_call == call_name) {
      if (reset) *reset = in.reset_call == call_name;
      return &in;
    }
  }
  return nullptr;
}

std::string tensor_intrinsic_names() {
  std::string out;
  for (auto& in : tensor_intrinsics()) out += (out.empty() ? "" : ", ") + in.name;
  return out;
}

std::vector<IterVar> intrinsic_axes(const TensorIntrinsic& in) {
  std::vector<IterVar> axes = in.output().axes;
  if (auto* red = in.output().reduction()) axes.insert(axes.end(), red->axes.begin(), red->axes.end());
  return axes;
}

std::string match_tensor_intrinsic(const TensorIntrinsic& in, const Buffer& out, const std::vector<Expr>& out_idx,
                                   const Expr& value, const std::vector<TensorizedLoop>& loops, IntrinsicMatch* match) {
  *match = IntrinsicMatch{};
  Matcher m(in, loops, match);
  const OperationNode& decl = in.output();
  std::vector<Expr> decl_idx;
  for (auto& iv : decl.axes) decl_idx.push_back(iv.var);
  bool ok = m.access(decl.buffer, decl_idx, out, out_idx) && m.expr(update_pattern(in), value) &&
            m.extents(intrinsic_axes(in).size());
  return ok ? std::string() : m.error;
}

std::string match_tensor_intrinsic_reset(const TensorIntrinsic& in, const Buffer& out, const std::vector<Expr>& out_idx,
                                         const std::vector<TensorizedLoop>& loops, IntrinsicMatch* match) {
  *match = IntrinsicMatch{};
  Matcher m(in, loops, match);
  const OperationNode& decl = in.output();
  std::vector<Expr> decl_idx;
  for (auto& iv : decl.axes) decl_idx.push_back(iv.var);
  bool ok = m.access(decl.buffer, decl_idx, out, out_idx) && m.extents(decl.axes.size());
  return ok ? std::string() : m.error;
}

Stmt tensor_intrinsic_semantics(const TensorIntrinsic& in, bool reset, const std::vector<Buffer>& buffers,
                                const std::vector<int64_t>& base, const std::vector<std::vector<int64_t>>& strides) {
  std::vector<Tensor> ops = in.operands();
  if (buffers.size() != ops.size() || base.size() != ops.size() || strides.size() != ops.size())
    throw Error("tensor intrinsic " + in.name + " takes " + std::to_string(ops.size()) + " operands");
  FlatOperands flat(ops, buffers, base, strides);
  const OperationNode& decl = in.output();
  const Reduce* red = decl.reduction();
  size_t out = ops.size() - 1;
  std::vector<Expr> idx;
  for (auto& iv : decl.axes) idx.push_back(iv.var);
  Stmt body;
  if (reset) {
    body = make_store(buffers[out], {flat.flat(out, idx)}, red->combiner->identity);
  } else {
    body = make_store(buffers[out], {flat.flat(out, idx)}, flat.mutate(update_pattern(in)));
    for (auto it = red->axes.rbegin(); it != red->axes.rend(); ++it)
      body = make_for(it->var, make_int(0), make_int(it->extent), body);
  }
  for (auto it = decl.axes.rbegin(); it != decl.axes.rend(); ++it)
    body = make_for(it->var, make_int(0), make_int(it->extent), body);
  return body;
}

}  // namespace tessel::te
