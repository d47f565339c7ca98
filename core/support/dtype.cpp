#include "core/support/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "core/support/error.h"

namespace tessel {

namespace {
struct DtypeInfo {
  DataType type;
  std::string_view short_name;
  std::string_view long_name;
  size_t size;
};
constexpr DtypeInfo kDtypes[] = {
    {DataType::kFloat32, "f32", "float32", 4}, {DataType::kFloat64, "f64", "float64", 8},
    {DataType::kFloat16, "f16", "float16", 2}, {DataType::kBFloat16, "bf16", "bfloat16", 2},
    {DataType::kInt8, "i8", "int8", 1},        {DataType::kInt16, "i16", "int16", 2},
    {DataType::kInt32, "i32", "int32", 4},     {DataType::kInt64, "i64", "int64", 8},
    {DataType::kUInt8, "u8", "uint8", 1},      {DataType::kBool, "bool", "bool", 1},
    {DataType::kUInt16, "u16", "uint16", 2},   {DataType::kUInt32, "u32", "uint32", 4},
    {DataType::kUInt64, "u64", "uint64", 8},   {DataType::kString, "str", "string", sizeof(void*)},
};
const DtypeInfo& info(DataType t) { return kDtypes[static_cast<int>(t)]; }
}  // namespace

size_t dtype_size(DataType t) { return info(t).size; }
std::string_view dtype_name(DataType t) { return info(t).short_name; }

DataType dtype_from_name(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.short_name == name || d.long_name == name) return d.type;
  if (name == "float") return DataType::kFloat32;
  if (name == "double") return DataType::kFloat64;
  throw Error("unknown data type '" + std::string(name) +
              "' (expected one of f32 f64 f16 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool str)");
}

bool dtype_is_float(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 ||
         t == DataType::kBFloat16;
}
bool dtype_is_integer(DataType t) { return !dtype_is_float(t) && t != DataType::kBool && t != DataType::kString; }
void throw_not_numeric(DataType t) {
  throw Error(std::string(dtype_name(t)) + " tensors have no numeric elements (strings run on the reference kernels of the ops that take them)");
}
bool dtype_is_unsigned(DataType t) {
  return t == DataType::kUInt8 || t == DataType::kUInt16 || t == DataType::kUInt32 || t == DataType::kUInt64;
}

float to_float(BFloat16 h) { return std::bit_cast<float>(static_cast<uint32_t>(h.bits) << 16); }

BFloat16 to_bfloat16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((u >> 16) | 0x40)};
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return BFloat16{static_cast<uint16_t>(u >> 16)};
}

float to_float(Float16 h) {
  uint32_t sign = (h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
      out = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(out);
}

Float16 to_float16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return Float16{static_cast<uint16_t>(sign | 0x7e00u)};
  if (abs >= 0x477ff000u) return Float16{static_cast<uint16_t>(sign | 0x7c00u)};  // overflow to inf
  if (abs < 0x38800000u) {  // subnormal or zero in half precision
    float a = std::bit_cast<float>(abs);
    uint16_t m = static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));  // a / 2^-24
    return Float16{static_cast<uint16_t>(sign | m)};
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return Float16{static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13))};
}

}  // namespace tessel

namespace tessel {

namespace {
struct OnnxCode {
  int32_t code;
  DataType type;
};
constexpr OnnxCode kOnnxCodes[] = {
    {1, DataType::kFloat32}, {2, DataType::kUInt8},  {3, DataType::kInt8},  {5, DataType::kInt16},
    {6, DataType::kInt32},   {7, DataType::kInt64},  {9, DataType::kBool},  {10, DataType::kFloat16},
    {11, DataType::kFloat64}, {16, DataType::kBFloat16}, {4, DataType::kUInt16}, {12, DataType::kUInt32},
    {13, DataType::kUInt64}, {8, DataType::kString},
};
}  // namespace

DataType dtype_from_onnx(int64_t code) {
  for (const auto& c : kOnnxCodes)
    if (c.code == code) return c.type;
  static const char* kNames[] = {"UNDEFINED", "FLOAT",  "UINT8",  "INT8",      "UINT16",     "INT16",
                                 "INT32",     "INT64",  "STRING", "BOOL",      "FLOAT16",    "DOUBLE",
                                 "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  std::string name = code >= 0 && code <= 16 ? kNames[code] : "code " + std::to_string(code);
  throw Error("ONNX data type " + name + " is not supported by Tessel");
}

int32_t dtype_to_onnx(DataType t) {
  for (const auto& c : kOnnxCodes)
    if (c.type == t) return c.code;
  return 0;
}

}  // namespace tessel
