#include "core/graph/ops/elementwise.h"

namespace tessel::ops {

void ReluOp::reference(const Attrs&, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  Tensor& y = args.out(0);
  for (int64_t i = 0; i < x.numel(); ++i) y.set_double(i, std::max(x.get_double(i), 0.0));
}

}  // namespace tessel::ops
