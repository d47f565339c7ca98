#include "core/lower/tensorize.h"

#include "core/arith/simplify.h"
#include "core/loopir/functor.h"
#include "core/loopir/printer.h"
#include "core/lower/build_loops.h"
#include "core/support/error.h"
#include "core/te/tensor_intrinsic.h"

namespace tessel::lower {
using namespace loopir;

namespace {

// One store of the nest and the loops around it (inside the tensorized loop, that one included).
struct NestStore {
  const Store* store;
  std::vector<te::TensorizedLoop> loops;
};

class Tensorizer : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    const te::TensorIntrinsic* in = nullptr;
    for (auto& [key, value] : n.pragmas)
      if (key.rfind(tensorize_pragma_prefix(), 0) == 0) {
        std::string name = key.substr(tensorize_pragma_prefix().size());
        in = te::find_tensor_intrinsic(name);
        if (!in) throw Error("loop " + n.var->name + " is tensorized with unknown intrinsic '" + name + "'");
      }
    if (!in) return IRMutator::mutate_For(n, self);
    try {
      return replace(n, self, *in);
    } catch (const Error& e) {
      rethrow_with_context(e, "tensorize at loop " + n.var->name + " with " + in->name);
    }
  }

 private:
  void collect(const Stmt& s, std::vector<te::TensorizedLoop>& loops, std::vector<NestStore>& out) {
    if (auto* f = as<For>(s)) {
      int64_t ext = 0;
      if (!is_const_int(f->extent, &ext) || !is_const_int_value(f->min, 0))
        throw Error("loop " + f->var->name + " has no constant extent");
      loops.push_back(te::TensorizedLoop{f->var, ext, {}});
      collect(f->body, loops, out);
      loops.pop_back();
    } else if (auto* q = as<Seq>(s)) {
      for (auto& c : q->stmts) collect(c, loops, out);
    } else if (auto* st = as<Store>(s)) {
      out.push_back(NestStore{st, loops});
    } else if (as<IfThenElse>(s)) {
      throw Error("the nest holds a guard (a split with a tail?); the intrinsic needs whole tiles");
    } else if (as<Allocate>(s)) {
      throw Error("the nest allocates " + as<Allocate>(s)->buffer->name + " (a stage computed inside it?)");
    } else {
      throw Error("the nest holds " + std::string(node_kind_name(s->kind)) + ", not only loops and stores");
    }
  }

  // The call's arguments for `ops`: each operand's first element and its outer strides.
  static std::vector<Expr> call_args(const te::TensorIntrinsic& in, const std::vector<te::Tensor>& ops,
                                     const te::IntrinsicMatch& m, const std::vector<te::TensorizedLoop>& loops) {
    VarMap zero;
    for (auto& l : loops) zero[l.var.get()] = make_int(0);
    std::vector<Expr> args;
    for (auto& op : ops) {
      const te::OperandAccess& acc = m.operands.at(op->name);
      std::vector<Expr> base;
      for (auto& e : acc.indices) base.push_back(arith::simplify(substitute(e, zero)));
      args.push_back(make_address_of(make_load(acc.buffer, base), DataType::kInt64));
      Shape strides = acc.buffer->strides.empty() ? contiguous_strides(acc.buffer->shape) : acc.buffer->strides;
      std::vector<int64_t> walked;
      for (size_t d = 0; d < acc.walk.size(); ++d)
        if (acc.walk[d] >= 0) walked.push_back(strides[d]);
      if (walked.back() != 1)
        throw Error(acc.buffer->name + "'s innermost walked dimension has stride " + std::to_string(walked.back()) +
                    "; " + in.name + " reads rows contiguously");
      for (size_t d = 0; d + 1 < walked.size(); ++d) args.push_back(make_int(walked[d]));
    }
    return args;
  }

  Stmt replace(const For& n, const Stmt& self, const te::TensorIntrinsic& in) {
    std::vector<te::TensorizedLoop> loops;
    std::vector<NestStore> stores;
    collect(self, loops, stores);
    const te::OperationNode& decl = in.output();
    const Expr& identity = decl.reduction()->combiner->identity;
    std::vector<Stmt> calls;
    bool seen_update = false;
    for (auto& ns : stores) {
      const Store& st = *ns.store;
      te::IntrinsicMatch m;
      bool reset = structural_equal_value(st.value, identity);
      if (reset) {
        if (seen_update) throw Error("the nest initializes " + st.buffer->name + " after updating it");
        std::string why = te::match_tensor_intrinsic_reset(in, st.buffer, st.indices, ns.loops, &m);
        if (!why.empty()) throw Error(why);
        calls.push_back(
            make_evaluate(make_call(in.reset_call, call_args(in, {decl_tensor(in)}, m, ns.loops), DataType::kInt32)));
        continue;
      }
      if (seen_update) throw Error("the nest holds more than one update");
      seen_update = true;
      std::string why = te::match_tensor_intrinsic(in, st.buffer, st.indices, st.value, ns.loops, &m);
      if (!why.empty()) throw Error(why);
      calls.push_back(
          make_evaluate(make_call(in.update_call, call_args(in, in.operands(), m, ns.loops), DataType::kInt32)));
    }
    if (calls.empty()) throw Error("the nest under loop " + n.var->name + " stores nothing");
    return make_seq(std::move(calls));
  }

  static bool structural_equal_value(const Expr& a, const Expr& b) {
    if (auto* x = as<FloatImm>(a))
      if (auto* y = as<FloatImm>(b)) return x->value == y->value && x->dtype == y->dtype;
    if (auto* x = as<IntImm>(a))
      if (auto* y = as<IntImm>(b)) return x->value == y->value && x->dtype == y->dtype;
    return false;
  }
  static te::Tensor decl_tensor(const te::TensorIntrinsic& in) { return in.computation.outputs[0]; }
};

}  // namespace

Func tensorize_loops(const Func& f) {
  Tensorizer t;
  Func out = f;
  out.body = t.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
