#pragma once
// What a graph value holds. Most values are tensors. ONNX also has sequences of tensors and
// optionals (holding a tensor, a sequence, or nothing). Only the ops that say so take them
// (OpDef::takes_any_kind: core/graph/ops/sequence_ops.h, Identity, If, Loop), and those run on the
// reference executor, where a value is a RuntimeValue. Every other op, pass and code generator sees
// tensors alone: infer_types refuses a sequence or an optional as input of an op that takes tensors,
// and a graph whose own values include one runs on the reference executor as a whole.
//
//   TensorType{f32, [2,3], kSequence}  ──run──▶  RuntimeValue{kSequence, sequence = {f32[2,3], ...}}
#include <cstdint>
#include <string>
#include <vector>

#include "core/support/tensor.h"

namespace tessel {

enum class ValueKind : uint8_t { kTensor, kSequence, kOptionalTensor, kOptionalSequence };
std::string_view value_kind_name(ValueKind k);  // "tensor", "sequence", "optional tensor", ...
inline bool is_optional(ValueKind k) { return k == ValueKind::kOptionalTensor || k == ValueKind::kOptionalSequence; }

struct RuntimeValue {
  ValueKind kind = ValueKind::kTensor;
  Tensor tensor;                 // a tensor, or the tensor an optional holds
  std::vector<Tensor> sequence;  // a sequence, or the sequence an optional holds
  bool has_element = true;       // an optional: false when it holds nothing

  static RuntimeValue of_tensor(Tensor t) { return {ValueKind::kTensor, std::move(t), {}, true}; }
  static RuntimeValue of_sequence(std::vector<Tensor> elements) {
    return {ValueKind::kSequence, {}, std::move(elements), true};
  }
  static RuntimeValue empty_optional(ValueKind kind) { return {kind, {}, {}, false}; }
  bool is_tensor() const { return kind == ValueKind::kTensor; }
  // "f32[2,3] {...}", "seq(2: f32[2], f32[3])", "opt(none)".
  std::string summary() const;
};

}  // namespace tessel
