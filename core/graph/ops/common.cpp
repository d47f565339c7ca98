#include "core/graph/ops/common.h"

namespace tessel::ops {

void for_each_broadcast(const Shape& out_shape, const std::vector<Shape>& input_shapes,
                        const std::function<void(int64_t, const int64_t*)>& fn) {
  const size_t rank = out_shape.size(), n_in = input_shapes.size();
  std::vector<Shape> strides;
  for (const Shape& s : input_shapes) strides.push_back(broadcast_strides(s, out_shape));
  int64_t total = shape_numel(out_shape);
  if (total == 0) return;
  Shape pos(rank, 0);
  std::vector<int64_t> idx(n_in, 0);
  for (int64_t o = 0; o < total; ++o) {
    fn(o, idx.data());
    // Odometer increment, updating input offsets incrementally.
    for (size_t d = rank; d-- > 0;) {
      if (++pos[d] < out_shape[d]) {
        for (size_t i = 0; i < n_in; ++i) idx[i] += strides[i][d];
        break;
      }
      for (size_t i = 0; i < n_in; ++i) idx[i] -= strides[i][d] * (out_shape[d] - 1);
      pos[d] = 0;
    }
  }
}

Shape broadcast_all(const InferContext& ctx) {
  Shape out;
  bool first = true;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    out = first ? ctx.input(i).shape : broadcast_shapes(out, ctx.input(i).shape);
    first = false;
  }
  return out;
}

int64_t flops_per_output_element(const OpTypes& t, int64_t per_element) {
  int64_t n = 0;
  for (const TensorType& o : t.outputs) n += shape_numel(o.shape);
  return n * per_element;
}

}  // namespace tessel::ops
