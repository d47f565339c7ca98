#include "core/graph/op.h"

namespace tessel {

std::string_view pattern_name(PatternKind k) {
  switch (k) {
    case PatternKind::kElemWise: return "elemwise";
    case PatternKind::kBroadcast: return "broadcast";
    case PatternKind::kInjective: return "injective";
    case PatternKind::kCommReduce: return "reduction";
    case PatternKind::kOutEWiseFusable: return "out-elemwise-fusable";
    case PatternKind::kTuple: return "tuple";
    case PatternKind::kOpaque: return "opaque";
  }
  return "?";
}

std::string_view compiles_name(Compiles c) {
  switch (c) {
    case Compiles::kYes: return "yes";
    case Compiles::kPartial: return "partial";
    case Compiles::kNo: return "no";
  }
  return "?";
}

std::string type_str(const TensorType& t) {
  const std::string tensor = std::string(dtype_name(t.dtype)) + (t.shape_known ? shape_str(t.shape) : "[?]");
  switch (t.kind) {
    case ValueKind::kTensor: return tensor;
    case ValueKind::kSequence: return "seq(" + tensor + ")";
    case ValueKind::kOptionalTensor: return "opt(" + tensor + ")";
    case ValueKind::kOptionalSequence: return "opt(seq(" + tensor + "))";
  }
  return tensor;
}

std::string_view value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kSequence: return "sequence";
    case ValueKind::kOptionalTensor: return "optional tensor";
    case ValueKind::kOptionalSequence: return "optional sequence";
  }
  return "?";
}

std::string RuntimeValue::summary() const {
  auto seq = [&] {
    std::string text = "seq(" + std::to_string(sequence.size()) + ":";
    for (size_t i = 0; i < sequence.size(); ++i)
      text += (i ? ", " : " ") + type_str({sequence[i].dtype(), sequence[i].shape()});
    return text + ")";
  };
  switch (kind) {
    case ValueKind::kTensor: return tensor.summary();
    case ValueKind::kSequence: return seq();
    case ValueKind::kOptionalTensor: return has_element ? "opt(" + tensor.summary() + ")" : "opt(none)";
    case ValueKind::kOptionalSequence: return has_element ? "opt(" + seq() + ")" : "opt(none)";
  }
  return "?";
}

InferContext::InferContext(std::vector<const TensorType*> input_types, std::vector<const Tensor*> input_values,
                           int num_outputs)
    : input_types_(std::move(input_types)),
      input_values_(std::move(input_values)),
      outputs_(static_cast<size_t>(num_outputs)),
      output_set_(static_cast<size_t>(num_outputs), false),
      output_values_(static_cast<size_t>(num_outputs)) {}

const TensorType& InferContext::input(int i) const {
  if (!has_input(i)) throw Error("input " + std::to_string(i) + " is required but absent");
  return *input_types_[i];
}

const Tensor* InferContext::input_value(int i) const {
  if (!has_input(i)) return nullptr;
  const Tensor* v = input_values_[i];
  return v && v->defined() ? v : nullptr;
}

const Tensor& InferContext::require_value(int i, const char* what) const {
  const Tensor* v = input_value(i);
  if (!v)
    throw Error("input " + std::to_string(i) + " (" + what +
                ") must be known at compile time (a constant or computed from shapes) for a static shape");
  return *v;
}

void InferContext::set_output(int i, TensorType type) {
  if (!type.shape_known) type.shape.clear();
  for (int64_t d : type.shape)
    if (d < 0) throw Error("inferred a negative dimension in output shape " + shape_str(type.shape));
  outputs_.at(i) = std::move(type);
  output_set_.at(i) = true;
}

void InferContext::set_output_value(int i, Tensor value) { output_values_.at(i) = std::move(value); }

bool InferContext::all_outputs_set() const {
  for (bool b : output_set_)
    if (!b) return false;
  return true;
}

}  // namespace tessel
