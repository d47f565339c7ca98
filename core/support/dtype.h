#pragma once
// Element types of tensors. Storage of float16/bfloat16 is the raw 16-bit pattern; arithmetic on
// them goes through float (to_float, to_float16 and to_bfloat16 below).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace tessel {

// The unsigned types wider than a byte and strings come last so that the older codes keep their
// numbers. A string element is a handle to an interned string (tensor.h, "String tensors"): it has
// no arithmetic and no C++ element type, so dispatch_dtype refuses it.
enum class DataType : uint8_t {
  kFloat32, kFloat64, kFloat16, kBFloat16,
  kInt8, kInt16, kInt32, kInt64, kUInt8, kBool,
  kUInt16, kUInt32, kUInt64, kString,
};
inline constexpr DataType kLastDataType = DataType::kString;

size_t dtype_size(DataType t);
std::string_view dtype_name(DataType t);         // "f32", "i64", "bool", ...
DataType dtype_from_name(std::string_view name);  // accepts short names and "float32" etc.; throws Error
bool dtype_is_float(DataType t);
bool dtype_is_integer(DataType t);                // signed or unsigned, not bool
bool dtype_is_unsigned(DataType t);               // u8 u16 u32 u64 (not bool)
[[noreturn]] void throw_not_numeric(DataType t);  // "string tensors have no numeric elements"

// Wrappers for the 16-bit float types so templates can tell them apart from integers.
struct Float16 { uint16_t bits = 0; };
struct BFloat16 { uint16_t bits = 0; };
float to_float(Float16 h);
float to_float(BFloat16 h);
Float16 to_float16(float f);
BFloat16 to_bfloat16(float f);

template <class T> struct DataTypeOf;
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::kFloat32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::kFloat64; };
template <> struct DataTypeOf<Float16> { static constexpr DataType value = DataType::kFloat16; };
template <> struct DataTypeOf<BFloat16> { static constexpr DataType value = DataType::kBFloat16; };
template <> struct DataTypeOf<int8_t> { static constexpr DataType value = DataType::kInt8; };
template <> struct DataTypeOf<int16_t> { static constexpr DataType value = DataType::kInt16; };
template <> struct DataTypeOf<int32_t> { static constexpr DataType value = DataType::kInt32; };
template <> struct DataTypeOf<int64_t> { static constexpr DataType value = DataType::kInt64; };
template <> struct DataTypeOf<uint8_t> { static constexpr DataType value = DataType::kUInt8; };
template <> struct DataTypeOf<uint16_t> { static constexpr DataType value = DataType::kUInt16; };
template <> struct DataTypeOf<uint32_t> { static constexpr DataType value = DataType::kUInt32; };
template <> struct DataTypeOf<uint64_t> { static constexpr DataType value = DataType::kUInt64; };
template <> struct DataTypeOf<bool> { static constexpr DataType value = DataType::kBool; };

// Calls f.template operator()<T>() with the C++ type of `t`. Use with a template lambda:
//   dispatch_dtype(t, [&]<class T>() { ... });
template <class F> decltype(auto) dispatch_dtype(DataType t, F&& f) {
  if (t == DataType::kString) throw_not_numeric(t);
  switch (t) {
    case DataType::kFloat32: return f.template operator()<float>();
    case DataType::kFloat64: return f.template operator()<double>();
    case DataType::kFloat16: return f.template operator()<Float16>();
    case DataType::kBFloat16: return f.template operator()<BFloat16>();
    case DataType::kInt8: return f.template operator()<int8_t>();
    case DataType::kInt16: return f.template operator()<int16_t>();
    case DataType::kInt32: return f.template operator()<int32_t>();
    case DataType::kInt64: return f.template operator()<int64_t>();
    case DataType::kUInt8: return f.template operator()<uint8_t>();
    case DataType::kBool: return f.template operator()<bool>();
    case DataType::kUInt16: return f.template operator()<uint16_t>();
    case DataType::kUInt32: return f.template operator()<uint32_t>();
    case DataType::kUInt64: return f.template operator()<uint64_t>();
    case DataType::kString: break;
  }
  return f.template operator()<float>();
}

// Element conversion through double, with the 16-bit float types handled.
template <class T> double to_double(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return to_float(v);
  else return static_cast<double>(v);
}
// Float → integer, with one meaning on every backend (ONNX leaves NaN and out-of-range values
// undefined; C and LLVM call them undefined behaviour): truncate toward zero, NaN → 0, beyond
// int64's range saturate to it; a narrower type then keeps the low bits (two's complement), as
// an integer narrowing does. uint64 keeps [2^63, 2^64) exactly and saturates above.
//
//      NaN → 0      -1.5 → -1      3e9 → int32: 3000000000 mod 2^32 = -1294967296
//      1e30 → int64: INT64_MAX      1e30 → int32: low bits of INT64_MAX = -1
//      -1.0 → uint8: 255            2^63 → uint64: 2^63      1e30 → uint64: UINT64_MAX
//
// The LLVM backend emits llvm.fptosi.sat.i64 then a truncation, the C and GPU printers call
// tessel_float_to_int64/uint64 from their preludes written to this rule, and the reference and the
// loop interpreter call these two functions.
inline int64_t float_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}
inline uint64_t float_to_uint64(double v) {
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  if (v >= 9223372036854775808.0) return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(float_to_int64(v));
}

template <class T> T from_double(double v) {
  if constexpr (std::is_same_v<T, Float16>) return to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>) return v != 0.0;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return float_to_uint64(v);
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(float_to_int64(v));
  else return static_cast<T>(v);
}

}  // namespace tessel

namespace tessel {
// ONNX TensorProto.DataType codes (the numbers are part of the ONNX format).
DataType dtype_from_onnx(int64_t code);  // throws Error for types Tessel does not handle
int32_t dtype_to_onnx(DataType t);
}  // namespace tessel
