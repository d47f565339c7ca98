#pragma once
// Static shapes and the index arithmetic every kernel needs.
#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

using Shape = std::vector<int64_t>;

// The element count; throws Error naming the shape when the product overflows int64.
int64_t shape_numel(const Shape& s);
// No tensor type (a declared shape, not an allocation: see kMaxTensorBytes) may be larger than this
// (256 TiB): far beyond any machine's memory, and small enough that byte offsets and sums of sizes
// never overflow int64.
inline constexpr int64_t kMaxDeclaredTensorBytes = int64_t{1} << 48;
// shape_numel(s) * element_size; throws Error naming the shape when it overflows or exceeds
// kMaxDeclaredTensorBytes.
int64_t checked_tensor_bytes(const Shape& s, size_t element_size);
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
