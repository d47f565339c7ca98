#include "core/frontend/onnx_tensor.h"

#include <cstring>

#include "core/support/error.h"

namespace tessel {

namespace {

const char* typed_field_for(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "float_data";
    case DataType::kFloat64:
      return "double_data";
    case DataType::kInt64:
      return "int64_data";
    case DataType::kUInt32:
    case DataType::kUInt64:
      return "uint64_data";
    case DataType::kString:
      return "string_data";
    default:
      return "int32_data";
  }
}

// The names of the non-empty value fields, so a message can say what the file actually holds.
std::string present_fields(const onnx::TensorProto& p) {
  std::string out;
  auto note = [&](bool present, const char* name) {
    if (present) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  note(!p.raw_data().empty(), "raw_data");
  note(p.float_data_size() > 0, "float_data");
  note(p.double_data_size() > 0, "double_data");
  note(p.int32_data_size() > 0, "int32_data");
  note(p.int64_data_size() > 0, "int64_data");
  note(p.uint64_data_size() > 0, "uint64_data");
  note(p.string_data_size() > 0, "string_data");
  return out.empty() ? "no data" : out;
}

template <class Field>
void check_count(const Field& field, const char* name, const DeclaredTensor& d) {
  int64_t n = shape_numel(d.shape);
  if (static_cast<int64_t>(field.size()) != n)
    throw Error(std::string(name) + " has " + std::to_string(field.size()) + " values but " +
                std::string(dtype_name(d.dtype)) + shape_str(d.shape) + " needs " + std::to_string(n));
}

// Copies a typed repeated field element by element into `t` (already sized).
template <class Field>
void fill_from_field(Tensor& t, const Field& field) {
  dispatch_dtype(t.dtype(), [&]<class T>() {
    T* dst = reinterpret_cast<T*>(t.raw_data());
    for (int i = 0; i < field.size(); ++i) {
      if constexpr (std::is_same_v<T, Float16>)
        dst[i] = Float16{static_cast<uint16_t>(field.Get(i))};
      else if constexpr (std::is_same_v<T, BFloat16>)
        dst[i] = BFloat16{static_cast<uint16_t>(field.Get(i))};
      else if constexpr (std::is_same_v<T, bool>)
        dst[i] = field.Get(i) != 0;
      else
        dst[i] = static_cast<T>(field.Get(i));
    }
  });
}

}  // namespace

std::string tensor_label(const onnx::TensorProto& proto) {
  return proto.name().empty() ? std::string("unnamed tensor") : "tensor '" + proto.name() + "'";
}

DeclaredTensor declared_tensor(const onnx::TensorProto& proto) {
  try {
    DeclaredTensor d{dtype_from_onnx(proto.data_type()), {}, 0};
    const int64_t elem = static_cast<int64_t>(dtype_size(d.dtype));
    bool has_zero_dim = false;
    for (int64_t dim : proto.dims()) {
      if (dim < 0) throw Error("negative dimension " + std::to_string(dim));
      d.shape.push_back(dim);
      has_zero_dim = has_zero_dim || dim == 0;
    }
    // Multiply with a guard instead of overflowing: any product above the limit is refused alike.
    int64_t numel = 1;
    for (int64_t dim : d.shape) {
      if (has_zero_dim) {
        numel = 0;
        break;
      }
      if (numel > kMaxTensorBytes / elem / dim)
        throw Error("declared shape " + shape_str(d.shape) + " of " + std::string(dtype_name(d.dtype)) +
                    " exceeds the " + std::to_string(kMaxTensorBytes >> 30) + " GiB tensor limit");
      numel *= dim;
    }
    d.bytes = numel * elem;
    return d;
  } catch (const Error& e) {
    rethrow_with_context(e, tensor_label(proto));
  }
}

namespace {

// Where the values of `proto` are stored. Throws unless that field holds exactly the declared
// number of elements.
enum class Source { kRaw, kFloat, kDouble, kInt32, kInt64, kUInt64, kString, kEmpty };

Source data_source(const onnx::TensorProto& proto, const DeclaredTensor& d) {
  if (proto.has_segment()) throw Error("segmented tensors (TensorProto.segment, deprecated in ONNX) are not supported");
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error("its data is stored externally and was not loaded");
  if (d.dtype == DataType::kString) {  // strings have no raw form
    if (shape_numel(d.shape) == 0) return Source::kEmpty;
    if (proto.string_data_size() == 0 || !proto.raw_data().empty())
      throw Error("string values belong in string_data, found " + present_fields(proto));
    check_count(proto.string_data(), "string_data", d);
    return Source::kString;
  }
  if (!proto.raw_data().empty()) {
    if (static_cast<int64_t>(proto.raw_data().size()) != d.bytes)
      throw Error("raw_data has " + std::to_string(proto.raw_data().size()) + " bytes but " +
                  std::string(dtype_name(d.dtype)) + shape_str(d.shape) + " needs " + std::to_string(d.bytes));
    return Source::kRaw;
  }
  if (shape_numel(d.shape) == 0) return Source::kEmpty;
  switch (d.dtype) {
    case DataType::kFloat32:
      if (proto.float_data_size() == 0) break;
      check_count(proto.float_data(), "float_data", d);
      return Source::kFloat;
    case DataType::kFloat64:
      if (proto.double_data_size() == 0) break;
      check_count(proto.double_data(), "double_data", d);
      return Source::kDouble;
    case DataType::kInt64:
      if (proto.int64_data_size() == 0) break;
      check_count(proto.int64_data(), "int64_data", d);
      return Source::kInt64;
    case DataType::kUInt32:
    case DataType::kUInt64:
      if (proto.uint64_data_size() == 0) break;
      check_count(proto.uint64_data(), "uint64_data", d);
      return Source::kUInt64;
    default:  // i8 i16 i32 u8 u16 bool f16 bf16: int32_data
      if (proto.int32_data_size() == 0) break;
      check_count(proto.int32_data(), "int32_data", d);
      return Source::kInt32;
  }
  throw Error(std::string(dtype_name(d.dtype)) + " values belong in raw_data or " + typed_field_for(d.dtype) +
              ", found " + present_fields(proto));
}

}  // namespace

void check_tensor_data(const onnx::TensorProto& proto) {
  const DeclaredTensor d = declared_tensor(proto);
  try {
    data_source(proto, d);
  } catch (const Error& e) {
    rethrow_with_context(e, tensor_label(proto));
  }
}

Tensor tensor_from_onnx(const onnx::TensorProto& proto) {
  const DeclaredTensor d = declared_tensor(proto);
  try {
    const Source source = data_source(proto, d);
    Tensor t(d.dtype, d.shape);  // within the limit and backed by as many stored elements
    switch (source) {
      case Source::kRaw:
        std::memcpy(t.raw_data(), proto.raw_data().data(), static_cast<size_t>(d.bytes));
        if (d.dtype == DataType::kBool) {  // any non-zero byte is true; keep bools canonical
          auto* b = reinterpret_cast<uint8_t*>(t.raw_data());
          for (int64_t i = 0; i < t.numel(); ++i) b[i] = b[i] != 0;
        }
        break;
      case Source::kFloat:
        fill_from_field(t, proto.float_data());
        break;
      case Source::kDouble:
        fill_from_field(t, proto.double_data());
        break;
      case Source::kInt32:
        fill_from_field(t, proto.int32_data());
        break;
      case Source::kInt64:
        fill_from_field(t, proto.int64_data());
        break;
      case Source::kUInt64:
        fill_from_field(t, proto.uint64_data());
        break;
      case Source::kString:
        for (int i = 0; i < proto.string_data_size(); ++i) t.set_string(i, proto.string_data(i));
        break;
      case Source::kEmpty:
        break;
    }
    return t;
  } catch (const Error& e) {
    rethrow_with_context(e, tensor_label(proto));
  }
}

void tensor_to_onnx(const Tensor& t, const std::string& name, onnx::TensorProto* out) {
  out->Clear();
  out->set_name(name);
  out->set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.shape()) out->add_dims(d);
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) out->add_string_data(std::string(t.string_at(i)));
    return;
  }
  out->set_raw_data(reinterpret_cast<const char*>(t.raw_data()), t.nbytes());
}

Tensor tensor_from_onnx_sparse(const onnx::SparseTensorProto& proto) {
  const std::string label = "sparse tensor '" + proto.values().name() + "'";
  try {
    Shape dims(proto.dims().begin(), proto.dims().end());
    for (int64_t d : dims)
      if (d < 0) throw Error("dims " + shape_str(dims) + " hold a negative size");
    const Tensor values = tensor_from_onnx(proto.values());
    const Tensor indices = tensor_from_onnx(proto.indices());
    if (values.rank() != 1) throw Error("values must be 1-D, got " + shape_str(values.shape()));
    const int64_t nnz = values.numel(), rank = static_cast<int64_t>(dims.size());
    if (indices.dtype() != DataType::kInt64) throw Error("indices must be int64");
    const bool linear = indices.rank() == 1;
    if (!(linear && indices.numel() == nnz) && !(indices.rank() == 2 && indices.shape() == Shape{nnz, rank}))
      throw Error("indices " + shape_str(indices.shape()) + " do not fit " + std::to_string(nnz) +
                  " values of a rank-" + std::to_string(rank) + " tensor ([NNZ] or [NNZ, rank])");
    Tensor dense(values.dtype(), dims);  // bounded by the tensor allocation limit
    const int64_t numel = dense.numel();
    const std::vector<int64_t> at = indices.to_int64s();
    const size_t element = dtype_size(values.dtype());
    for (int64_t k = 0; k < nnz; ++k) {
      int64_t offset = 0;
      if (linear) {
        offset = at[static_cast<size_t>(k)];
      } else {
        for (int64_t a = 0; a < rank; ++a) {
          const int64_t i = at[static_cast<size_t>(k * rank + a)];
          if (i < 0 || i >= dims[static_cast<size_t>(a)])
            throw Error("index " + std::to_string(i) + " of value " + std::to_string(k) + " is outside axis " +
                        std::to_string(a) + " of " + shape_str(dims));
          offset = offset * dims[static_cast<size_t>(a)] + i;
        }
      }
      if (offset < 0 || offset >= numel)
        throw Error("index " + std::to_string(offset) + " of value " + std::to_string(k) + " is outside " +
                    shape_str(dims) + " (" + std::to_string(numel) + " elements)");
      std::memcpy(dense.raw_data() + offset * static_cast<int64_t>(element),
                  values.raw_data() + k * static_cast<int64_t>(element), element);
    }
    return dense;
  } catch (const Error& e) {
    rethrow_with_context(e, label);
  }
}

}  // namespace tessel
