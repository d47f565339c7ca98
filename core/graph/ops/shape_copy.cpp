#include "core/graph/ops/shape_copy.h"

#include <cstring>

#include "core/support/error.h"

namespace tessel::ops {

void copy_with_axis_offsets(const Tensor& src, Tensor& dst, const AxisOffsets& axis_offsets, const std::byte* fill) {
  const Shape& extent = dst.shape();
  if (axis_offsets.size() != extent.size()) throw Error("internal: axis offsets do not match the output rank");
  for (size_t k = 0; k < extent.size(); ++k)
    if (static_cast<int64_t>(axis_offsets[k].size()) != extent[k])
      throw Error("internal: axis offsets do not match output dimension " + std::to_string(k));
  const int64_t total = dst.numel();
  if (total == 0) return;
  const size_t elem = dtype_size(dst.dtype());
  const std::byte* in = src.raw_data();
  std::byte* out = dst.raw_data();

  if (extent.empty()) {  // a scalar: the single element is at offset 0
    std::memcpy(out, in, elem);
    return;
  }
  // The innermost axis is copied as a run; a run that reads consecutive source elements is one
  // memcpy (the common case for everything but Transpose's last axis).
  const size_t rank = extent.size(), last = rank - 1;
  const std::vector<int64_t>& inner = axis_offsets[last];
  bool inner_contiguous = true;
  for (size_t i = 0; i < inner.size(); ++i)
    if (inner[i] == kFill || inner[i] != inner[0] + static_cast<int64_t>(i)) inner_contiguous = false;
  bool needs_fill = false;
  for (const auto& offsets : axis_offsets)
    for (int64_t o : offsets) needs_fill = needs_fill || o == kFill;
  if (needs_fill && !fill) throw Error("internal: padding positions without a fill value");

  const int64_t run = extent[last];
  Shape pos(rank, 0);
  for (int64_t written = 0; written < total; written += run) {
    // Source offset of the outer axes, or kFill when any of them is a fill position.
    int64_t base = 0;
    bool outer_fill = false;
    for (size_t k = 0; k < last; ++k) {
      int64_t o = axis_offsets[k][pos[k]];
      if (o == kFill)
        outer_fill = true;
      else
        base += o;
    }
    std::byte* row = out + written * static_cast<int64_t>(elem);
    if (outer_fill) {
      for (int64_t i = 0; i < run; ++i) std::memcpy(row + i * elem, fill, elem);
    } else if (inner_contiguous) {
      std::memcpy(row, in + (base + inner[0]) * static_cast<int64_t>(elem), run * elem);
    } else {
      for (int64_t i = 0; i < run; ++i) {
        const std::byte* from = inner[i] == kFill ? fill : in + (base + inner[i]) * static_cast<int64_t>(elem);
        std::memcpy(row + i * elem, from, elem);
      }
    }
    for (size_t k = last; k-- > 0;) {  // odometer over the outer axes
      if (++pos[k] < extent[k]) break;
      pos[k] = 0;
    }
  }
}

std::vector<int64_t> identity_offsets(const Shape& src_shape, size_t axis) {
  const int64_t stride = contiguous_strides(src_shape)[axis];
  std::vector<int64_t> offsets(static_cast<size_t>(src_shape[axis]));
  for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = static_cast<int64_t>(i) * stride;
  return offsets;
}

void transpose_into(const Tensor& src, const Shape& view_shape, const std::vector<int64_t>& perm, Tensor& dst) {
  const Shape view_strides = contiguous_strides(view_shape);
  Shape extent;
  AxisOffsets offsets;
  for (int64_t axis : perm) {
    extent.push_back(view_shape[axis]);
    std::vector<int64_t> o(static_cast<size_t>(view_shape[axis]));
    for (size_t i = 0; i < o.size(); ++i) o[i] = static_cast<int64_t>(i) * view_strides[axis];
    offsets.push_back(std::move(o));
  }
  Tensor dst_view = dst.reshaped(extent);  // shares dst's storage
  copy_with_axis_offsets(src, dst_view, offsets);
}

void copy_bytes(const Tensor& src, Tensor& dst) {
  if (src.nbytes() != dst.nbytes())
    throw Error("internal: cannot copy " + shape_str(src.shape()) + " into " + shape_str(dst.shape()));
  if (src.nbytes() > 0) std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank, const char* what) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      throw Error(std::string(what) + ": axis " + std::to_string(a) + " is out of range for rank " +
                  std::to_string(rank) + " (allowed " + std::to_string(-rank) + ".." + std::to_string(rank - 1) + ")");
    int64_t n = a < 0 ? a + rank : a;
    if (seen[n]) throw Error(std::string(what) + ": axis " + std::to_string(a) + " is repeated in " + ints_str(axes));
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

int64_t checked_numel(const Shape& shape, const char* what) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      throw Error(std::string(what) + ": shape " + shape_str(shape) + " is invalid or too large");
  return n;
}

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

}  // namespace tessel::ops
