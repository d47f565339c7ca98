#pragma once
// What the element-wise and reduction kernels share: the dtype sets ONNX allows per op, and the
// rule for computing on elements.
//
// Every element is computed in one of two types, so a kernel is written once:
//   float types (f32, f64, f16, bf16) → double   (exact-to-rounding for +-*/ and sqrt of f32)
//   integer types and bool            → int64_t  (exact; results wrap like the narrow type would)
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>

#include "core/support/dtype.h"
#include "core/support/error.h"

namespace tessel::ops {

// A set of dtypes, used for "which element types does ONNX allow for this input".
class DTypeSet {
 public:
  constexpr DTypeSet(std::initializer_list<DataType> types) {
    for (DataType t : types) bits_ |= bit(t);
  }
  constexpr bool contains(DataType t) const { return (bits_ & bit(t)) != 0; }
  constexpr DTypeSet operator|(DTypeSet other) const {
    DTypeSet s{};
    s.bits_ = bits_ | other.bits_;
    return s;
  }
  std::string str() const;  // "f32, f64, f16, bf16"

 private:
  static constexpr uint32_t bit(DataType t) { return uint32_t{1} << static_cast<int>(t); }
  uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes{DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16};
// Older op versions (Softplus-1, Elu-6, Round-11...) predate bfloat16.
inline constexpr DTypeSet kFloatTypesNoBf16{DataType::kFloat32, DataType::kFloat64, DataType::kFloat16};
inline constexpr DTypeSet kSignedIntTypes{DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64};
inline constexpr DTypeSet kUnsignedIntTypes{DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64};
inline constexpr DTypeSet kIntTypes = kSignedIntTypes | kUnsignedIntTypes;
inline constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
inline constexpr DTypeSet kSignedNumericTypes = kFloatTypes | kSignedIntTypes;
inline constexpr DTypeSet kBoolType{DataType::kBool};
inline constexpr DTypeSet kAllTypes = kNumericTypes | kBoolType;

// Throws "Sigmoid: input 0 has dtype i32; allowed: f32, f64, f16, bf16".
void require_dtype(const char* op, const std::string& what, DataType t, DTypeSet allowed);

template <class T>
inline constexpr bool kIsFloatLike =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// The type elements of T are computed in.
template <class T>
using Compute = std::conditional_t<kIsFloatLike<T>, double, int64_t>;

template <class T>
Compute<T> load(T v) {
  if constexpr (kIsFloatLike<T>)
    return to_double(v);
  else
    return static_cast<int64_t>(v);
}

// Writes a computed value back as T. Integers narrow modulo 2^bits (what the narrow type's own
// arithmetic would give); floats round to nearest; a float result stored in an integer type
// follows float_to_int64 / float_to_uint64 (core/support/dtype.h: truncates toward zero, NaN → 0,
// saturates at int64, then keeps the low bits).
template <class T, class C>
T store(C v) {
  if constexpr (kIsFloatLike<T>) {
    if constexpr (std::is_same_v<C, double>)
      return from_double<T>(v);
    else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      return static_cast<T>(v);
    else
      return from_double<T>(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != C{0};
  } else if constexpr (std::is_same_v<C, double>) {
    return from_double<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// Two's-complement arithmetic on int64 without signed-overflow undefined behaviour.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrap_neg(int64_t a) { return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a)); }

}  // namespace tessel::ops
