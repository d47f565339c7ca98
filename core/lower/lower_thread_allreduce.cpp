#include "core/lower/lower_thread_allreduce.h"

#include "core/loopir/equal.h"
#include "core/loopir/functor.h"
#include "core/support/error.h"

namespace tessel::lower {
using namespace loopir;

namespace {

// The combine of one tree step: lane `lane` with lane `lane + offset`, from the marked loop's
// value where lane 0 (the left operand) and lane `r` (the right one) appear.
class StepOperands : public IRMutator {
 public:
  StepOperands(const Buffer& lanes, const Var* r, Expr lane, Expr other)
      : lanes_(lanes), r_(r), lane_(std::move(lane)), other_(std::move(other)) {}

 protected:
  Expr mutate_Load(const Load& n, const Expr& self) override {
    if (n.buffer->name != lanes_->name) return IRMutator::mutate_Load(n, self);
    if (n.indices.size() == 1 && is_const_int_value(n.indices[0], 0)) return make_load(n.buffer, {lane_});
    if (n.indices.size() == 1 && as<Var>(n.indices[0]) == r_) return make_load(n.buffer, {other_});
    throw Error("thread_allreduce: the combine reads " + lanes_->name + " at a lane other than 0 and the loop's");
  }

 private:
  const Buffer& lanes_;
  const Var* r_;
  Expr lane_, other_;
};

class AllreduceLowering : public IRMutator {
 protected:
  Stmt mutate_For(const For& n, const Stmt& self) override {
    std::string tag;
    int64_t threads = 0;
    for (const auto& [key, value] : n.pragmas)
      if (key.rfind(thread_allreduce_pragma_prefix(), 0) == 0) {
        tag = key.substr(thread_allreduce_pragma_prefix().size());
        threads = value;
      }
    if (tag.empty()) return IRMutator::mutate_For(n, self);
    auto* combine = as<Store>(n.body);
    if (!combine || combine->indices.size() != 1 || !is_const_int_value(combine->indices[0], 0) ||
        !is_const_int_value(n.min, 1) || !is_const_int_value(n.extent, threads - 1))
      throw Error("thread_allreduce: the loop " + n.var->name +
                  " is not 'for r in 1..T { lanes[0] = lanes[0] (+) lanes[r] }'");
    const Buffer& lanes = combine->buffer;

    int64_t power = 1;
    while (power * 2 <= threads) power *= 2;
    std::vector<Stmt> steps = {make_barrier("shared")};  // every lane's partial written
    // One step: the threads below `active` combine lane t + offset into lane t.
    auto step = [&](int64_t active, int64_t offset) {
      VarRef t = make_var(n.var->name);
      StepOperands operands(lanes, n.var.get(), t, t + offset);
      Stmt update = make_store(lanes, {t}, operands.mutate(combine->value));
      steps.push_back(make_for(t, make_int(0), make_int(threads), make_if(lt(t, make_int(active)), update),
                               ForKind::kThreadBound, tag));
      steps.push_back(make_barrier("shared"));
    };
    if (power < threads) step(threads - power, power);
    for (int64_t offset = power / 2; offset >= 1; offset /= 2) step(offset, offset);
    return make_seq(std::move(steps));
  }
};

}  // namespace

Func lower_thread_allreduce(const Func& f) {
  AllreduceLowering lowering;
  Func out = f;
  out.body = lowering.mutate(f.body);
  return out;
}

}  // namespace tessel::lower
