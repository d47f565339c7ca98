#include "tests/conformance/onnx_tensor_compare.h"

#include <onnx/onnx_pb.h>  // before onnx-data.pb.h: it defines ONNX_API
#include <onnx/onnx-data.pb.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tessel::testing {
namespace {

using onnx::TensorProto;

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  } else if (exponent == 31) {
    magnitude = mantissa ? std::nanf("") : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

bool is_real_type(int t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

size_t element_size(int t) {
  switch (t) {
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
      return 8;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16:
      return 2;
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      return 1;
    default:
      return 0;
  }
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// One element of raw_data (little-endian, as ONNX stores it and as this x86 host reads it).
void decode_raw_element(int t, const char* p, DecodedTensor& out) {
  switch (t) {
    case TensorProto::FLOAT:
      out.reals.push_back(load<float>(p));
      break;
    case TensorProto::DOUBLE:
      out.reals.push_back(load<double>(p));
      break;
    case TensorProto::FLOAT16:
      out.reals.push_back(half_to_float(load<uint16_t>(p)));
      break;
    case TensorProto::BFLOAT16:
      out.reals.push_back(bfloat16_to_float(load<uint16_t>(p)));
      break;
    case TensorProto::INT8:
      out.integers.push_back(load<int8_t>(p));
      break;
    case TensorProto::UINT8:
      out.integers.push_back(load<uint8_t>(p));
      break;
    case TensorProto::BOOL:
      out.integers.push_back(load<uint8_t>(p) != 0);
      break;
    case TensorProto::INT16:
      out.integers.push_back(load<int16_t>(p));
      break;
    case TensorProto::UINT16:
      out.integers.push_back(load<uint16_t>(p));
      break;
    case TensorProto::INT32:
      out.integers.push_back(load<int32_t>(p));
      break;
    case TensorProto::UINT32:
      out.integers.push_back(load<uint32_t>(p));
      break;
    case TensorProto::INT64:
      out.integers.push_back(load<int64_t>(p));
      break;
    case TensorProto::UINT64:
      out.integers.push_back(static_cast<int64_t>(load<uint64_t>(p)));
      break;
    default:
      break;
  }
}

// The typed repeated fields, used when raw_data is empty (see onnx.proto's comments on each).
void decode_typed_fields(const TensorProto& p, DecodedTensor& out) {
  const int t = p.data_type();
  switch (t) {
    case TensorProto::FLOAT:
      out.reals.assign(p.float_data().begin(), p.float_data().end());
      break;
    case TensorProto::DOUBLE:
      out.reals.assign(p.double_data().begin(), p.double_data().end());
      break;
    case TensorProto::FLOAT16:
      for (int32_t bits : p.int32_data()) out.reals.push_back(half_to_float(static_cast<uint16_t>(bits)));
      break;
    case TensorProto::BFLOAT16:
      for (int32_t bits : p.int32_data()) out.reals.push_back(bfloat16_to_float(static_cast<uint16_t>(bits)));
      break;
    case TensorProto::INT64:
      out.integers.assign(p.int64_data().begin(), p.int64_data().end());
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      for (uint64_t v : p.uint64_data()) out.integers.push_back(static_cast<int64_t>(v));
      break;
    case TensorProto::BOOL:
      for (int32_t v : p.int32_data()) out.integers.push_back(v != 0);
      break;
    case TensorProto::STRING:
      out.strings.assign(p.string_data().begin(), p.string_data().end());
      break;
    default:  // INT8, UINT8, INT16, UINT16, INT32 live in int32_data
      out.integers.assign(p.int32_data().begin(), p.int32_data().end());
      break;
  }
}

std::string format_value(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

std::string index_text(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] > 0) {
      idx[k] = flat % dims[k];
      flat /= dims[k];
    }
  }
  std::string text = "[";
  for (size_t k = 0; k < idx.size(); ++k) text += (k ? "," : "") + std::to_string(idx[k]);
  return text + "]";
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t k = 0; k < dims.size(); ++k) text += (k ? "," : "") + std::to_string(dims[k]);
  return text + "]";
}

bool reals_match(double actual, double expected, Tolerance tol) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::fabs(actual - expected) <= tol.atol + tol.rtol * std::fabs(expected);
}

}  // namespace

int64_t DecodedTensor::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string data_type_name(int data_type) {
  if (!TensorProto::DataType_IsValid(data_type)) return "type " + std::to_string(data_type);
  return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(data_type));
}

namespace {

template <class Proto> Proto parse_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  Proto proto;
  if (!proto.ParseFromIstream(&in)) throw std::runtime_error(path + ": not a serialized onnx " + what);
  return proto;
}

DecodedTensor decode_tensor(const TensorProto& proto, const std::string& path);

std::vector<DecodedTensor> decode_sequence(const onnx::SequenceProto& proto, const std::string& path) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.tensor_values_size() == 0 && proto.elem_type() != 0)
    throw std::runtime_error(path + ": a sequence of something other than tensors");
  std::vector<DecodedTensor> out;
  for (int i = 0; i < proto.tensor_values_size(); ++i)
    out.push_back(decode_tensor(proto.tensor_values(i), path + " (tensor " + std::to_string(i) + ")"));
  return out;
}

}  // namespace

DecodedTensor read_tensor_file(const std::string& path) {
  return decode_tensor(parse_file<TensorProto>(path, "TensorProto"), path);
}

DecodedValue read_value_file(const std::string& path, OutputKind kind) {
  DecodedValue v;
  v.kind = kind;
  if (kind == OutputKind::kTensor) {
    v.tensors.push_back(read_tensor_file(path));
  } else if (kind == OutputKind::kSequence) {
    v.tensors = decode_sequence(parse_file<onnx::SequenceProto>(path, "SequenceProto"), path);
  } else {
    const auto proto = parse_file<onnx::OptionalProto>(path, "OptionalProto");
    v.has_element = proto.has_tensor_value() || proto.has_sequence_value();
    v.holds_sequence = proto.has_sequence_value() || proto.elem_type() == onnx::OptionalProto::SEQUENCE;
    if (proto.has_tensor_value()) v.tensors.push_back(decode_tensor(proto.tensor_value(), path));
    if (proto.has_sequence_value()) v.tensors = decode_sequence(proto.sequence_value(), path);
  }
  return v;
}

std::optional<std::string> compare_values(const DecodedValue& actual, const DecodedValue& expected) {
  if (actual.kind != expected.kind) return std::string("the value kinds differ");
  if (actual.has_element != expected.has_element)
    return std::string(actual.has_element ? "the optional holds a value, expected none" : "the optional is empty, expected a value");
  if (actual.holds_sequence != expected.holds_sequence) return std::string("the optional holds the wrong kind");
  if (actual.tensors.size() != expected.tensors.size())
    return "holds " + std::to_string(actual.tensors.size()) + " tensors, expected " + std::to_string(expected.tensors.size());
  for (size_t i = 0; i < actual.tensors.size(); ++i)
    if (auto difference = compare_tensors(actual.tensors[i], expected.tensors[i]))
      return expected.kind == OutputKind::kSequence ? "tensor " + std::to_string(i) + ": " + *difference : *difference;
  return std::nullopt;
}

std::vector<OutputKind> model_output_kinds(const std::string& model_path) {
  const auto model = parse_file<onnx::ModelProto>(model_path, "ModelProto");
  std::vector<OutputKind> out;
  for (const auto& o : model.graph().output())
    out.push_back(o.type().has_sequence_type()   ? OutputKind::kSequence
                  : o.type().has_optional_type() ? OutputKind::kOptional
                                                 : OutputKind::kTensor);
  return out;
}

namespace {

DecodedTensor decode_tensor(const TensorProto& proto, const std::string& path) {
  if (proto.data_location() == TensorProto::EXTERNAL)
    throw std::runtime_error(path + ": external data is not supported by the test reader");

  DecodedTensor out;
  out.data_type = proto.data_type();
  out.dims.assign(proto.dims().begin(), proto.dims().end());
  if (!proto.raw_data().empty()) {
    const size_t size = element_size(out.data_type);
    if (size == 0) throw std::runtime_error(path + ": raw_data for " + data_type_name(out.data_type));
    const std::string& raw = proto.raw_data();
    if (raw.size() % size != 0)
      throw std::runtime_error(path + ": raw_data size is not a multiple of the element size");
    for (size_t off = 0; off < raw.size(); off += size) decode_raw_element(out.data_type, raw.data() + off, out);
  } else {
    decode_typed_fields(proto, out);
  }
  const int64_t stored = static_cast<int64_t>(out.reals.size() + out.integers.size() + out.strings.size());
  if (stored != out.element_count())
    throw std::runtime_error(path + ": holds " + std::to_string(stored) + " values for shape " + dims_text(out.dims));
  return out;
}

}  // namespace

Tolerance default_tolerance(int data_type) {
  if (data_type == TensorProto::FLOAT16) return {1e-3, 1e-3};
  if (data_type == TensorProto::BFLOAT16) return {1e-2, 1e-2};
  return {};
}

std::optional<std::string> compare_tensors(const DecodedTensor& actual, const DecodedTensor& expected) {
  return compare_tensors(actual, expected, default_tolerance(expected.data_type));
}

std::optional<std::string> compare_tensors(const DecodedTensor& actual, const DecodedTensor& expected,
                                           Tolerance tolerance) {
  if (actual.data_type != expected.data_type)
    return "type " + data_type_name(actual.data_type) + ", expected " + data_type_name(expected.data_type);
  if (actual.dims != expected.dims) return "shape " + dims_text(actual.dims) + ", expected " + dims_text(expected.dims);

  int64_t mismatches = 0, first = -1;
  double largest_difference = 0;
  std::string first_text;
  const int64_t n = expected.element_count();
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(i);
    bool same;
    std::string got, want;
    if (is_real_type(expected.data_type)) {
      same = reals_match(actual.reals[k], expected.reals[k], tolerance);
      if (!same && std::isfinite(actual.reals[k]) && std::isfinite(expected.reals[k]))
        largest_difference = std::max(largest_difference, std::fabs(actual.reals[k] - expected.reals[k]));
      got = format_value(actual.reals[k]);
      want = format_value(expected.reals[k]);
    } else if (expected.data_type == TensorProto::STRING) {
      same = actual.strings[k] == expected.strings[k];
      got = '"' + actual.strings[k] + '"';
      want = '"' + expected.strings[k] + '"';
    } else {
      same = actual.integers[k] == expected.integers[k];
      got = std::to_string(actual.integers[k]);
      want = std::to_string(expected.integers[k]);
    }
    if (same) continue;
    if (mismatches++ == 0) {
      first = i;
      first_text = "element " + index_text(first, expected.dims) + " is " + got + ", expected " + want;
    }
  }
  if (mismatches == 0) return std::nullopt;
  std::string message = first_text + " (" + std::to_string(mismatches) + " of " + std::to_string(n) + " differ";
  if (largest_difference > 0) message += ", largest difference " + format_value(largest_difference);
  if (is_real_type(expected.data_type))
    message += "; rtol " + format_value(tolerance.rtol) + ", atol " + format_value(tolerance.atol);
  return message + ")";
}

}  // namespace tessel::testing
