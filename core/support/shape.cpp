#include "core/support/shape.h"

#include "core/support/error.h"

namespace tessel {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n))
      throw Error("shape " + shape_str(s) + " has more elements than a 64-bit count holds");
  return n;
}

int64_t checked_tensor_bytes(const Shape& s, size_t element_size) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape_numel(s), static_cast<int64_t>(element_size), &bytes) ||
      bytes > kMaxDeclaredTensorBytes)
    throw Error("shape " + shape_str(s) + " is larger than the " + std::to_string(kMaxDeclaredTensorBytes >> 40) +
                " TiB allowed for one tensor");
  return bytes;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

Shape contiguous_strides(const Shape& s) {
  Shape strides(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * s[i + 1];
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Shape& in, const Shape& out) {
  Shape in_strides = contiguous_strides(in);
  Shape result(out.size(), 0);
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) result[offset + i] = in[i] == 1 ? 0 : in_strides[i];
  return result;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw Error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace tessel
