#include "core/graph/ops/sequence_ops.h"

#include <cstring>
#include <numeric>

namespace tessel::ops {

namespace {

TensorType sequence_type(DataType dtype, Shape shape, bool shape_known) {
  return TensorType{dtype, shape_known ? std::move(shape) : Shape{}, ValueKind::kSequence, shape_known};
}

// Input i, which must be of `kind`; else "input 0 is a tensor (f32[2]); SequenceAt takes a sequence there".
const TensorType& input_of_kind(const InferContext& ctx, int i, ValueKind kind, const char* op) {
  const TensorType& t = ctx.input(i);
  if (t.kind != kind)
    throw Error("input " + std::to_string(i) + " is " + std::string(is_optional(t.kind) ? "an " : "a ") +
                std::string(value_kind_name(t.kind)) + " (" + type_str(t) + "); " + op + " takes " +
                std::string(is_optional(kind) ? "an " : "a ") + std::string(value_kind_name(kind)) + " there");
  return t;
}

// A position input: an int32 or int64 scalar (or one-element) tensor.
void check_position_type(const InferContext& ctx, int i, const char* op) {
  const TensorType& t = input_of_kind(ctx, i, ValueKind::kTensor, op);
  if ((t.dtype != DataType::kInt64 && t.dtype != DataType::kInt32) || (t.shape_known && shape_numel(t.shape) != 1))
    throw Error("input " + std::to_string(i) + " (position) must be an int32 or int64 scalar, got " + type_str(t));
}

// The tensor input i must hold the sequence's dtype.
void check_element_dtype(const InferContext& ctx, int i, DataType dtype) {
  const TensorType& t = ctx.input(i);
  if (t.dtype != dtype)
    throw Error("input " + std::to_string(i) + " is " + type_str(t) + "; the sequence holds " +
                std::string(dtype_name(dtype)) + " tensors");
}

// The index `position` names in a sequence of `length` tensors; an insert may also name `length`
// (the back). Negative positions count from the back.
size_t sequence_index(const Tensor& position, size_t length, bool for_insert) {
  const int64_t p = position.to_int64s().at(0);
  const int64_t n = static_cast<int64_t>(length);
  const int64_t index = p < 0 ? p + n : p;
  if (index < 0 || index > n || (index == n && !for_insert))
    throw Error("position " + std::to_string(p) + " is out of range for a sequence of " + std::to_string(length) +
                (length == 1 ? " tensor" : " tensors") + (for_insert ? " (an insert may name " : " (valid: ") +
                std::to_string(-n) + " to " + std::to_string(for_insert ? n : n - 1) + ")");
  return static_cast<size_t>(index);
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

}  // namespace

// ---------------------------------------------------------------- building sequences

void SequenceEmptyOp::infer(const Attrs& a, InferContext& ctx) { ctx.set_output(0, sequence_type(a.dtype, {}, false)); }

void SequenceEmptyOp::reference(const Attrs&, const KernelArgs& args) {
  args.value_out(0) = RuntimeValue::of_sequence({});
}

void SequenceConstructOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& first = input_of_kind(ctx, 0, ValueKind::kTensor, "SequenceConstruct");
  bool same_shape = first.shape_known;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& t = input_of_kind(ctx, i, ValueKind::kTensor, "SequenceConstruct");
    check_element_dtype(ctx, i, first.dtype);
    same_shape = same_shape && t.shape_known && t.shape == first.shape;
  }
  ctx.set_output(0, sequence_type(first.dtype, first.shape, same_shape));
}

void SequenceConstructOp::reference(const Attrs&, const KernelArgs& args) {
  std::vector<Tensor> elements;
  for (size_t i = 0; i < args.values.size(); ++i) elements.push_back(args.value(static_cast<int>(i)).tensor);
  args.value_out(0) = RuntimeValue::of_sequence(std::move(elements));
}

void SequenceInsertOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& seq = input_of_kind(ctx, 0, ValueKind::kSequence, "SequenceInsert");
  const TensorType& t = input_of_kind(ctx, 1, ValueKind::kTensor, "SequenceInsert");
  check_element_dtype(ctx, 1, seq.dtype);
  if (ctx.has_input(2)) check_position_type(ctx, 2, "SequenceInsert");
  ctx.set_output(0, sequence_type(seq.dtype, seq.shape, seq.shape_known && t.shape_known && t.shape == seq.shape));
}

void SequenceInsertOp::reference(const Attrs&, const KernelArgs& args) {
  std::vector<Tensor> elements = args.value(0).sequence;
  const size_t at = args.has(2) ? sequence_index(args.in(2), elements.size(), true) : elements.size();
  elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), args.in(1));
  args.value_out(0) = RuntimeValue::of_sequence(std::move(elements));
}

void SequenceEraseOp::infer(const Attrs&, InferContext& ctx) {
  ctx.set_output(0, input_of_kind(ctx, 0, ValueKind::kSequence, "SequenceErase"));
  if (ctx.has_input(1)) check_position_type(ctx, 1, "SequenceErase");
}

void SequenceEraseOp::reference(const Attrs&, const KernelArgs& args) {
  std::vector<Tensor> elements = args.value(0).sequence;
  if (elements.empty()) throw Error("cannot erase from an empty sequence");
  const size_t at = args.has(1) ? sequence_index(args.in(1), elements.size(), false) : elements.size() - 1;
  elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(at));
  args.value_out(0) = RuntimeValue::of_sequence(std::move(elements));
}

// ---------------------------------------------------------------- reading sequences

void SequenceAtOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& seq = input_of_kind(ctx, 0, ValueKind::kSequence, "SequenceAt");
  check_position_type(ctx, 1, "SequenceAt");
  ctx.set_output(0, TensorType{seq.dtype, seq.shape, ValueKind::kTensor, seq.shape_known});
}

void SequenceAtOp::reference(const Attrs&, const KernelArgs& args) {
  const std::vector<Tensor>& elements = args.value(0).sequence;
  args.out(0) = elements[sequence_index(args.in(1), elements.size(), false)];
}

void SequenceLengthOp::infer(const Attrs&, InferContext& ctx) {
  input_of_kind(ctx, 0, ValueKind::kSequence, "SequenceLength");
  ctx.set_output(0, DataType::kInt64, {});
}

void SequenceLengthOp::reference(const Attrs&, const KernelArgs& args) {
  args.out(0).data<int64_t>()[0] = static_cast<int64_t>(args.value(0).sequence.size());
}

// ---------------------------------------------------------------- splitting and concatenating

namespace {

// The lengths along the axis of SplitToSequence's parts: `split` a scalar (equal parts, the last
// may be shorter), a list (which must add up to the dimension), or absent (parts of 1).
std::vector<int64_t> split_lengths(int64_t dim, const Tensor* split) {
  if (!split) return std::vector<int64_t>(static_cast<size_t>(dim), 1);
  const std::vector<int64_t> values = split->to_int64s();
  if (split->rank() == 0) {
    const int64_t part = values.at(0);
    if (part <= 0) throw Error("split " + std::to_string(part) + " must be positive");
    std::vector<int64_t> lengths;
    for (int64_t start = 0; start < dim; start += part) lengths.push_back(std::min(part, dim - start));
    return lengths;
  }
  int64_t sum = 0;
  for (int64_t v : values) {
    if (v < 0) throw Error("split lengths must not be negative, got " + std::to_string(v));
    sum += v;
  }
  if (sum != dim)
    throw Error("split lengths add up to " + std::to_string(sum) + ", not the dimension " + std::to_string(dim));
  return values;
}

}  // namespace

void SplitToSequenceOp::infer(const Attrs& a, InferContext& ctx) {
  const TensorType& x = input_of_kind(ctx, 0, ValueKind::kTensor, "SplitToSequence");
  const int64_t axis = normalize_axis(a.axis, static_cast<int64_t>(x.shape.size()));
  Shape part = x.shape;
  if (!ctx.has_input(1)) {
    if (a.keepdims)
      part[axis] = 1;
    else
      part.erase(part.begin() + axis);
    ctx.set_output(0, sequence_type(x.dtype, part, true));
    return;
  }
  const TensorType& split = input_of_kind(ctx, 1, ValueKind::kTensor, "SplitToSequence");
  if ((split.dtype != DataType::kInt64 && split.dtype != DataType::kInt32) || split.shape.size() > 1)
    throw Error("input 1 (split) must be an int32 or int64 scalar or list, got " + type_str(split));
  const Tensor* known = ctx.input_value(1);
  if (!known) {
    ctx.set_output(0, sequence_type(x.dtype, {}, false));
    return;
  }
  const std::vector<int64_t> lengths = split_lengths(x.shape[axis], known);
  const bool equal = std::adjacent_find(lengths.begin(), lengths.end(), std::not_equal_to<>()) == lengths.end();
  part[axis] = lengths.empty() ? 0 : lengths[0];
  ctx.set_output(0, sequence_type(x.dtype, part, equal));
}

void SplitToSequenceOp::reference(const Attrs& a, const KernelArgs& args) {
  const Tensor& x = args.in(0);
  const size_t axis = static_cast<size_t>(normalize_axis(a.axis, x.rank()));
  const std::vector<int64_t> lengths = split_lengths(x.shape()[axis], args.has(1) ? &args.in(1) : nullptr);
  const int64_t outer = product(x.shape(), 0, axis), dim = x.shape()[axis];
  const size_t inner_bytes =
      static_cast<size_t>(product(x.shape(), axis + 1, x.shape().size())) * dtype_size(x.dtype());
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t length : lengths) {
    Shape shape = x.shape();
    shape[axis] = length;
    Tensor part(x.dtype(), shape);
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(part.raw_data() + static_cast<size_t>(o * length) * inner_bytes,
                  x.raw_data() + static_cast<size_t>(o * dim + start) * inner_bytes,
                  static_cast<size_t>(length) * inner_bytes);
    if (!args.has(1) && !a.keepdims) shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
    parts.push_back(part.reshaped(shape));
    start += length;
  }
  args.value_out(0) = RuntimeValue::of_sequence(std::move(parts));
}

void ConcatFromSequenceOp::infer(const Attrs&, InferContext& ctx) {
  const TensorType& seq = input_of_kind(ctx, 0, ValueKind::kSequence, "ConcatFromSequence");
  // The length of a sequence is not tracked, so neither is the concatenated dimension.
  ctx.set_output(0, TensorType{seq.dtype, {}, ValueKind::kTensor, false});
}

void ConcatFromSequenceOp::reference(const Attrs& a, const KernelArgs& args) {
  const std::vector<Tensor>& elements = args.value(0).sequence;
  if (elements.empty()) throw Error("cannot concatenate an empty sequence");
  const Shape& first = elements[0].shape();
  const int64_t rank = static_cast<int64_t>(first.size());
  const size_t axis = static_cast<size_t>(normalize_axis(a.axis, rank + a.new_axis));
  // With new_axis, each tensor is read as having a dimension of 1 at `axis`.
  auto as_concatenated = [&](const Shape& s) {
    Shape out = s;
    if (a.new_axis) out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    return out;
  };
  Shape out_shape = as_concatenated(first);
  out_shape[axis] = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    const Shape s = as_concatenated(elements[i].shape());
    bool fits = s.size() == out_shape.size();
    for (size_t d = 0; fits && d < s.size(); ++d) fits = d == axis || s[d] == out_shape[d];
    if (!fits)
      throw Error("tensor " + std::to_string(i) + " of the sequence has shape " + shape_str(elements[i].shape()) +
                  ", which does not concatenate with tensor 0's " + shape_str(first) + " along axis " +
                  std::to_string(a.axis));
    out_shape[axis] += s[axis];
  }
  Tensor out(elements[0].dtype(), out_shape);
  const int64_t outer = product(out_shape, 0, axis);
  const size_t inner_bytes =
      static_cast<size_t>(product(out_shape, axis + 1, out_shape.size())) * dtype_size(out.dtype());
  int64_t start = 0;
  for (const Tensor& e : elements) {
    const int64_t length = as_concatenated(e.shape())[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.raw_data() + static_cast<size_t>(o * out_shape[axis] + start) * inner_bytes,
                  e.raw_data() + static_cast<size_t>(o * length) * inner_bytes,
                  static_cast<size_t>(length) * inner_bytes);
    start += length;
  }
  args.out(0) = out;
}

// ---------------------------------------------------------------- optionals

void OptionalOp::infer(const Attrs& a, InferContext& ctx) {
  if (!ctx.has_input(0)) {
    ctx.set_output(
        0, TensorType{
               a.element_dtype, {}, a.of_sequence ? ValueKind::kOptionalSequence : ValueKind::kOptionalTensor, false});
    return;
  }
  TensorType t = ctx.input(0);
  if (is_optional(t.kind)) throw Error("input 0 is already an optional (" + type_str(t) + ")");
  t.kind = t.kind == ValueKind::kSequence ? ValueKind::kOptionalSequence : ValueKind::kOptionalTensor;
  ctx.set_output(0, t);
}

void OptionalOp::reference(const Attrs&, const KernelArgs& args) {
  RuntimeValue& out = args.value_out(0);
  if (args.values.empty() || !args.values[0]) {
    out.has_element = false;
    return;
  }
  out.tensor = args.value(0).tensor;
  out.sequence = args.value(0).sequence;
  out.has_element = true;
}

void OptionalHasElementOp::infer(const Attrs&, InferContext& ctx) { ctx.set_output(0, DataType::kBool, {}); }

void OptionalHasElementOp::reference(const Attrs&, const KernelArgs& args) {
  const bool present = !args.values.empty() && args.values[0] && args.value(0).has_element;
  args.out(0).data<bool>()[0] = present;
}

void OptionalGetElementOp::infer(const Attrs&, InferContext& ctx) {
  TensorType t = ctx.input(0);
  if (t.kind == ValueKind::kOptionalTensor) t.kind = ValueKind::kTensor;
  if (t.kind == ValueKind::kOptionalSequence) t.kind = ValueKind::kSequence;
  ctx.set_output(0, t);
}

void OptionalGetElementOp::reference(const Attrs&, const KernelArgs& args) {
  const RuntimeValue& in = args.value(0);
  if (!in.has_element) throw Error("the optional holds nothing");
  if (in.kind == ValueKind::kTensor || in.kind == ValueKind::kOptionalTensor) {
    args.out(0) = in.tensor;
    return;
  }
  args.value_out(0) = RuntimeValue::of_sequence(in.sequence);
}

}  // namespace tessel::ops
