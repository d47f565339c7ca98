#pragma once
// What the cost model sees of a candidate: a fixed-length vector of numbers read off its lowered
// loop program (not off its knobs), so one model can learn across kernels and shapes.
//
//   for i.outer parallel 16          parallel_log2 = 4
//     alloc acc[6][32] local         local_bytes_log2 = log2(768)
//     for k.outer 256                serial iterations around the heaviest store ...
//       for k.inner 4 unrolled       unrolled_log2 = 2 + ...
//         for x vectorized 16        vector_lanes = 16
//           acc[..] = acc[..] + ...  store_iterations_log2 = log2(all iterations of this store)
#include <array>
#include <string_view>

#include "core/loopir/ir.h"

namespace tessel::tune {

inline constexpr size_t kNumFeatures = 12;
using Features = std::array<double, kNumFeatures>;

Features loop_features(const loopir::Func& f);
std::string_view feature_name(size_t index);

}  // namespace tessel::tune
