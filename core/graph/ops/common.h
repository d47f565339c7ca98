#pragma once
// Helpers shared by the op implementations: broadcasting iteration, common inference rules and
// cost formulas.
#include <functional>

#include "core/graph/op.h"

namespace tessel::ops {

// Output i has the type of input `from`.
inline void infer_like_input(InferContext& ctx, int from = 0, int out = 0) { ctx.set_output(out, ctx.input(from)); }

// Visits every element of `out_shape` in row-major order, giving the flat output index and the flat
// index into each input (read with numpy broadcasting; inputs right-aligned).
//   for_each_broadcast(out, {a.shape(), b.shape()}, [&](int64_t o, const int64_t* in) { ... });
void for_each_broadcast(const Shape& out_shape, const std::vector<Shape>& input_shapes,
                        const std::function<void(int64_t out_index, const int64_t* input_index)>& fn);

// Broadcast of all present inputs' shapes; throws Error naming the shapes.
Shape broadcast_all(const InferContext& ctx);

// One operation per output element.
int64_t flops_per_output_element(const OpTypes& t, int64_t per_element = 1);
inline int64_t no_flops(const OpTypes&) { return 0; }

}  // namespace tessel::ops
