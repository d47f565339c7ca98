#pragma once
// The one data-movement primitive behind the shape ops: every op that only moves elements
// (Transpose, Slice, Expand, Tile, Pad, nearest Resize, DepthToSpace, ...) describes, for each
// output axis separately, where along the source that axis reads. Elements are copied as bytes,
// so one code path serves every dtype.
//
//   output axis k, position i  ──▶  source offset  axis_offsets[k][i]   (in elements, or kFill)
//   source element of output (i0, i1, ...) = src[ axis_offsets[0][i0] + axis_offsets[1][i1] + ... ]
//
//   Transpose perm=[1,0] of a [2,3] source (strides [3,1]):  axis 0 → {0,1,2}, axis 1 → {0,3}
//   Slice [1:3] on an axis of stride 4:                         {4, 8}
//   Expand a size-1 axis to 3:                                  {0, 0, 0}
//   Pad 1 on each side with a constant:                         {kFill, 0, 1, ..., n-1, kFill}
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/support/tensor.h"

namespace tessel::ops {

// Marks an output position that takes the fill value instead of reading the source.
constexpr int64_t kFill = INT64_MIN;

using AxisOffsets = std::vector<std::vector<int64_t>>;

// Writes `dst` (contiguous, its shape is the extent: dst.shape()[k] == axis_offsets[k].size()) from
// `src`'s bytes. `fill` (one element of dst's dtype) is required when any offset is kFill.
void copy_with_axis_offsets(const Tensor& src, Tensor& dst, const AxisOffsets& axis_offsets,
                            const std::byte* fill = nullptr);

// The offsets of reading `src_shape` unchanged along axis `axis`: {0, s, 2s, ...}.
std::vector<int64_t> identity_offsets(const Shape& src_shape, size_t axis);

// dst = src viewed with `view_shape` (same element count) and its axes permuted: output axis k is
// view axis perm[k]. dst's element count must match; its own shape is irrelevant.
void transpose_into(const Tensor& src, const Shape& view_shape, const std::vector<int64_t>& perm, Tensor& dst);

// Copies `src` into a tensor of the same element count but another shape (Reshape and friends).
void copy_bytes(const Tensor& src, Tensor& dst);

// Normalises each entry of `axes` against `rank` (negative counts from the end); throws Error naming
// `what` (e.g. "axes") when an axis is out of range or repeated.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank, const char* what);

// Element count of `shape`; throws Error naming `what` when it is negative or overflows int64.
int64_t checked_numel(const Shape& shape, const char* what);

// "[1,2,3]" for error messages.
std::string ints_str(const std::vector<int64_t>& v);

}  // namespace tessel::ops
