#include "core/graph/layout.h"

#include <cctype>
#include <cstring>

#include "core/support/error.h"

namespace tessel {

namespace {

constexpr int64_t kMaxFactor = int64_t{1} << 30;

[[noreturn]] void parse_error(std::string_view text, const std::string& why) {
  throw Error("layout '" + std::string(text) + "': " + why);
}

}  // namespace

Layout::Layout(std::string_view text) : text_(text) {
  if (text.empty()) parse_error(text, "is empty");
  bool primal_seen[26] = {}, sub_seen[26] = {};
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') {
      if (primal_seen[c - 'A']) parse_error(text, std::string("axis ") + c + " appears twice");
      primal_seen[c - 'A'] = true;
      axes_.push_back({c, 0});
      ++i;
    } else if (c >= '0' && c <= '9') {
      int64_t factor = 0;
      size_t start = i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        factor = factor * 10 + (text[i] - '0');
        if (factor > kMaxFactor)
          parse_error(text, "factor " + std::string(text.substr(start, i - start + 1)) + "... is too large");
        ++i;
      }
      if (i == text.size() || text[i] < 'a' || text[i] > 'z')
        parse_error(text, "factor " + std::string(text.substr(start, i - start)) +
                              " must be followed by the lower-case letter of the axis it splits");
      if (factor == 0) parse_error(text, std::string("sub-axis ") + text[i] + " has factor 0");
      char primal = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
      if (sub_seen[primal - 'A']) parse_error(text, std::string("axis ") + primal + " is split twice");
      sub_seen[primal - 'A'] = true;
      axes_.push_back({primal, factor});
      ++i;
    } else if (c >= 'a' && c <= 'z') {
      parse_error(text, std::string("sub-axis ") + c + " needs a factor in front (e.g. 16" + c + ")");
    } else {
      parse_error(text, std::string("unexpected character '") + c +
                            "' (use upper-case primal axes and factor+lower-case sub-axes)");
    }
  }
  for (int k = 0; k < 26; ++k)
    if (sub_seen[k] && !primal_seen[k])
      parse_error(text, std::string("sub-axis ") + static_cast<char>('a' + k) + " has no primal axis " +
                            static_cast<char>('A' + k));
}

std::string Layout::primal_axes() const {
  std::string s;
  for (const Axis& a : axes_)
    if (a.factor == 0) s += a.primal;
  return s;
}

int64_t Layout::primal_position(char primal) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].factor == 0 && axes_[i].primal == primal) return static_cast<int64_t>(i);
  return -1;
}

int64_t Layout::sub_position(char primal) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].factor > 0 && axes_[i].primal == primal) return static_cast<int64_t>(i);
  return -1;
}

int64_t Layout::factor(char primal) const {
  int64_t s = sub_position(primal);
  return s < 0 ? 1 : axes_[s].factor;
}

bool Layout::is_blocked() const {
  for (const Axis& a : axes_)
    if (a.factor > 0) return true;
  return false;
}

bool Layout::convertible_to(const Layout& other) const {
  std::string a = primal_axes(), b = other.primal_axes();
  if (a.size() != b.size()) return false;
  for (char c : a)
    if (!other.has_primal(c)) return false;
  return true;
}

PrimalValues Layout::logical_extents(const Shape& physical) const {
  if (static_cast<int64_t>(physical.size()) != rank())
    throw Error("shape " + shape_str(physical) + " has rank " + std::to_string(physical.size()) + " but layout '" +
                text_ + "' has " + std::to_string(rank()) + " axes");
  PrimalValues extents{};
  for (size_t i = 0; i < axes_.size(); ++i) {
    const Axis& a = axes_[i];
    if (a.factor == 0) {
      extents[a.primal - 'A'] = physical[i] * factor(a.primal);
    } else if (physical[i] != a.factor) {
      throw Error("shape " + shape_str(physical) + " does not fit layout '" + text_ + "': sub-axis " +
                  std::to_string(a.factor) + static_cast<char>(std::tolower(a.primal)) + " has extent " +
                  std::to_string(physical[i]));
    }
  }
  return extents;
}

Shape Layout::physical_shape(const PrimalValues& logical) const {
  Shape shape;
  for (const Axis& a : axes_) {
    if (a.factor > 0) {
      shape.push_back(a.factor);
    } else {
      int64_t f = factor(a.primal), extent = logical[a.primal - 'A'];
      shape.push_back((extent + f - 1) / f);  // a partial block is padded
    }
  }
  return shape;
}

Shape Layout::primal_shape(const PrimalValues& logical) const {
  Shape shape;
  for (char c : primal_axes()) shape.push_back(logical[c - 'A']);
  return shape;
}

PrimalValues Layout::from_primal_shape(const Shape& primal_shape) const {
  std::string primals = primal_axes();
  if (primal_shape.size() != primals.size())
    throw Error("layout '" + text_ + "' has " + std::to_string(primals.size()) + " primal axes (" + primals +
                "), got " + std::to_string(primal_shape.size()) + " extents " + shape_str(primal_shape));
  PrimalValues values{};
  for (size_t i = 0; i < primals.size(); ++i) values[primals[i] - 'A'] = primal_shape[i];
  return values;
}

void Layout::logical_index(const int64_t* physical, PrimalValues& logical) const {
  for (const Axis& a : axes_)
    if (a.factor == 0) logical[a.primal - 'A'] = 0;
  for (size_t i = 0; i < axes_.size(); ++i) {
    const Axis& a = axes_[i];
    int64_t& l = logical[a.primal - 'A'];
    l += a.factor == 0 ? physical[i] * factor(a.primal) : physical[i];
  }
}

void Layout::physical_index(const PrimalValues& logical, int64_t* physical) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    const Axis& a = axes_[i];
    int64_t l = logical[a.primal - 'A'];
    physical[i] = a.factor == 0 ? l / factor(a.primal) : l % a.factor;
  }
}

namespace {

// The logical extents a conversion keeps: the source's, or the narrower `logical_shape`.
PrimalValues kept_extents(const Layout& src, const Layout& dst, const Shape& src_shape, const Shape& logical_shape) {
  if (!src.convertible_to(dst))
    throw Error("cannot convert layout '" + src.str() + "' to '" + dst.str() + "': their primal axes differ (" +
                src.primal_axes() + " vs " + dst.primal_axes() + ")");
  PrimalValues extents = src.logical_extents(src_shape);
  if (logical_shape.empty()) return extents;
  PrimalValues wanted = dst.from_primal_shape(logical_shape);
  for (char c : dst.primal_axes()) {
    int64_t w = wanted[c - 'A'], have = extents[c - 'A'];
    if (w < 0 || w > have)
      throw Error("logical extent " + std::to_string(w) + " of axis " + c + " is outside 0.." + std::to_string(have) +
                  " (the extent of the input in layout '" + src.str() + "')");
  }
  return wanted;
}

}  // namespace

Shape convert_layout_shape(const Layout& src, const Layout& dst, const Shape& src_shape, const Shape& logical_shape) {
  return dst.physical_shape(kept_extents(src, dst, src_shape, logical_shape));
}

void convert_layout_into(const Tensor& in, Tensor& out, const Layout& src, const Layout& dst,
                         const Shape& logical_shape) {
  PrimalValues extents = kept_extents(src, dst, in.shape(), logical_shape);
  if (out.shape() != dst.physical_shape(extents) || out.dtype() != in.dtype())
    throw Error("internal: layout conversion output has the wrong type");
  const size_t elem = dtype_size(in.dtype());
  const Shape in_strides = contiguous_strides(in.shape());
  const Shape& out_shape = out.shape();
  const std::string primals = dst.primal_axes();
  Shape out_pos(out_shape.size(), 0), in_pos(in.shape().size(), 0);
  PrimalValues logical{};
  const std::byte* from = in.raw_data();
  std::byte* to = out.raw_data();
  for (int64_t o = 0; o < out.numel(); ++o) {
    dst.logical_index(out_pos.data(), logical);
    bool padding = false;
    for (char c : primals) padding = padding || logical[c - 'A'] >= extents[c - 'A'];
    if (padding) {
      std::memset(to + o * elem, 0, elem);
    } else {
      src.physical_index(logical, in_pos.data());
      int64_t offset = 0;
      for (size_t k = 0; k < in_pos.size(); ++k) offset += in_pos[k] * in_strides[k];
      std::memcpy(to + o * elem, from + offset * static_cast<int64_t>(elem), elem);
    }
    for (size_t k = out_shape.size(); k-- > 0;) {
      if (++out_pos[k] < out_shape[k]) break;
      out_pos[k] = 0;
    }
  }
}

Tensor convert_layout(const Tensor& in, const Layout& src, const Layout& dst, const Shape& logical_shape) {
  Tensor out(in.dtype(), convert_layout_shape(src, dst, in.shape(), logical_shape));
  convert_layout_into(in, out, src, dst, logical_shape);
  return out;
}

}  // namespace tessel
