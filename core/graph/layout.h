#pragma once
// Data layouts: what each dimension of a tensor stands for, and how blocked layouts split an axis.
//
// A layout is a string of primal axes (upper-case letters) and sub-axes (a factor followed by the
// lower-case letter of the primal axis it splits). A split primal axis keeps the outer part:
//
//   NCHW        [N, C, H, W]
//   NHWC        [N, H, W, C]
//   NCHW16c     [N, ceil(C/16), H, W, 16]        logical (n,c,h,w) lives at [n, c/16, h, w, c%16]
//   OIHW16i16o  [ceil(O/16), ceil(I/16), H, W, 16, 16]
//
// Converting between two layouts with the same primal axes goes through logical coordinates, one
// per primal axis (indexed by letter):
//
//   src index ──logical_index──▶ (n, c, h, w) ──physical_index──▶ dst index
//   [0,1,2,3,5] in NCHW16c   →   c = 1*16 + 5 = 21   →   [0,21,2,3] in NCHW
//
// Splitting an axis whose extent is not a multiple of the factor pads it with zeros; merging it
// back drops the padding when the unpadded extent is known (the logical shape).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/tensor.h"

namespace tessel {

// One value per primal axis letter ('A'..'Z'), e.g. logical extents or logical coordinates.
using PrimalValues = std::array<int64_t, 26>;

class Layout {
 public:
  struct Axis {
    char primal;     // upper-case letter of the primal axis
    int64_t factor;  // 0: the primal (outer) axis itself; > 0: a sub-axis of that extent
  };

  Layout() = default;
  // Parses "NCHW16c"; throws Error naming the text and the problem (repeated axis, sub-axis without
  // its primal, zero factor, lower-case letter without a factor, other characters).
  explicit Layout(std::string_view text);

  const std::string& str() const { return text_; }
  bool empty() const { return axes_.empty(); }
  int64_t rank() const { return static_cast<int64_t>(axes_.size()); }
  const std::vector<Axis>& axes() const { return axes_; }
  std::string primal_axes() const;  // "NCHW" for "NCHW16c": primal letters in order
  bool has_primal(char primal) const { return primal_position(primal) >= 0; }
  int64_t primal_position(char primal) const;  // index of the primal axis, -1 when absent
  int64_t sub_position(char primal) const;     // index of its sub-axis, -1 when not split
  int64_t factor(char primal) const;           // sub-axis factor, 1 when not split
  bool is_blocked() const;                     // has any sub-axis
  // Both layouts describe the same primal axes (in any order), so one converts to the other.
  bool convertible_to(const Layout& other) const;
  bool operator==(const Layout& other) const { return text_ == other.text_; }

  // Logical extent of each primal axis of a tensor of shape `physical` in this layout; a split axis
  // counts outer × factor (padding included). Throws Error when the rank differs or a sub-axis
  // dimension is not its factor.
  PrimalValues logical_extents(const Shape& physical) const;
  // Shape of a tensor with these logical extents in this layout (split axes rounded up).
  Shape physical_shape(const PrimalValues& logical) const;
  // Extents in primal_axes() order, and back.
  Shape primal_shape(const PrimalValues& logical) const;
  PrimalValues from_primal_shape(const Shape& primal_shape) const;

  // Index conversion for one element; `physical` has rank() entries.
  void logical_index(const int64_t* physical, PrimalValues& logical) const;
  void physical_index(const PrimalValues& logical, int64_t* physical) const;

 private:
  std::string text_;
  std::vector<Axis> axes_;
};

// Shape after converting a tensor of shape `src_shape` from `src` to `dst`. `logical_shape` (in
// dst's primal order, may be empty) gives the unpadded extents; it must not exceed the source's.
Shape convert_layout_shape(const Layout& src, const Layout& dst, const Shape& src_shape,
                           const Shape& logical_shape = {});

// Writes `out` (allocated with convert_layout_shape's shape) from `in`: every element moves to its
// position in `dst`; positions that are padding in `dst` become zero. Any dtype.
void convert_layout_into(const Tensor& in, Tensor& out, const Layout& src, const Layout& dst,
                         const Shape& logical_shape = {});
Tensor convert_layout(const Tensor& in, const Layout& src, const Layout& dst, const Shape& logical_shape = {});

}  // namespace tessel
