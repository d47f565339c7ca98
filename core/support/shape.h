#pragma once
// Static shapes and the index arithmetic every kernel needs.
#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);
std::string shape_str(const Shape& s);               // "[1,3,224,224]"
Shape contiguous_strides(const Shape& s);            // row-major, in elements
// Numpy broadcasting of two shapes; throws Error naming both shapes when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Strides for reading a tensor of shape `in` as if it had the (broadcast) shape `out`:
// broadcast axes get stride 0. `in` is right-aligned against `out`.
Shape broadcast_strides(const Shape& in, const Shape& out);
// Normalises a possibly negative axis against `rank`; throws Error mentioning `what` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");

}  // namespace tessel
