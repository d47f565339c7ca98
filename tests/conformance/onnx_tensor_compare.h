#pragma once
// Reads ONNX TensorProto files (input_K.pb / output_K.pb) with the ONNX protobuf classes alone and
// compares two of them. The conformance and end-to-end tests use this instead of Tessel's own
// reader so that a bug in Tessel's reader or writer cannot hide itself.
//
// Tolerances follow the tests' contract: float32 and float64 are equal when
// |actual - expected| <= atol + rtol * |expected| (rtol 1e-4, atol 1e-5); NaN equals NaN and
// infinities must match in sign; integers, bools and strings must match exactly. The 16-bit float
// types get wider bounds because their own rounding step is ~1e-3 (float16) and ~1e-2 (bfloat16).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::testing {

// A tensor's values, widened: floating types in `reals`, integer and bool types in `integers`
// (uint64 keeps its bit pattern), strings in `strings`.
struct DecodedTensor {
  int data_type = 0;  // onnx::TensorProto::DataType
  std::vector<int64_t> dims;
  std::vector<double> reals;
  std::vector<int64_t> integers;
  std::vector<std::string> strings;
  int64_t element_count() const;
};

struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
};

// Throws std::runtime_error naming the file when it cannot be read or decoded.
DecodedTensor read_tensor_file(const std::string& path);

// Outputs that are not tensors (ONNX SequenceProto and OptionalProto files). Which kind a file holds
// comes from the model's output type: the bytes of an optional tensor and a one-tensor sequence can
// be alike.
enum class OutputKind { kTensor, kSequence, kOptional };
std::vector<OutputKind> model_output_kinds(const std::string& model_path);  // one per graph output

struct DecodedValue {
  OutputKind kind = OutputKind::kTensor;
  bool has_element = true;             // an optional: false when empty
  bool holds_sequence = false;         // an optional of a sequence
  std::vector<DecodedTensor> tensors;  // the tensor, or the sequence's tensors
};
DecodedValue read_value_file(const std::string& path, OutputKind kind);
// Tensor by tensor with compare_tensors; nullopt when they match.
std::optional<std::string> compare_values(const DecodedValue& actual, const DecodedValue& expected);

// "FLOAT", "INT64", ... for messages.
std::string data_type_name(int data_type);

// The tolerance the contract gives for a data type (float32's for integer types, where it is unused).
Tolerance default_tolerance(int data_type);

// nullopt when `actual` matches `expected`; otherwise one line naming the first differing element,
// how many differ, and the largest difference.
std::optional<std::string> compare_tensors(const DecodedTensor& actual, const DecodedTensor& expected,
                                           Tolerance tolerance);
std::optional<std::string> compare_tensors(const DecodedTensor& actual, const DecodedTensor& expected);

}  // namespace tessel::testing
