#pragma once
// ONNX TensorProto ↔ Tensor, in memory.
//
// A TensorProto comes from an untrusted file, so decoding checks every claim before it allocates:
// the dims must be non-negative, the byte count within kMaxTensorBytes, and the stored data must
// hold exactly the claimed number of elements. Values may sit in raw_data (little-endian bytes) or
// in the typed fields ONNX prescribes for each element type:
//
//   float_data   f32            int32_data  i8 i16 i32 u8 bool, and f16/bf16 as 16-bit patterns
//   double_data  f64            int64_data  i64
//
// Data stored in external files must have been loaded into raw_data first (onnx_external_data.h).
#include <onnx/onnx_pb.h>

#include "core/support/tensor.h"

namespace tessel {

// The type and shape a TensorProto declares, checked: dims non-negative and the byte count within
// kMaxTensorBytes. Throws Error naming the tensor.
struct DeclaredTensor {
  DataType dtype;
  Shape shape;
  int64_t bytes;
};
DeclaredTensor declared_tensor(const onnx::TensorProto& proto);

// Checks that the stored data holds exactly the declared elements, without allocating anything.
// Throws Error "tensor 'NAME': reason" (also for data stored externally and not yet loaded).
void check_tensor_data(const onnx::TensorProto& proto);

// Throws Error "tensor 'NAME': reason" on anything malformed.
Tensor tensor_from_onnx(const onnx::TensorProto& proto);

// A sparse initializer made dense: zeros, then values[k] at indices[k]. The indices are int64, one
// linear index per value ([NNZ]) or one coordinate row per value ([NNZ, rank]), each checked to lie
// inside dims; the dense size is bounded as any tensor's is. Throws Error "sparse tensor 'NAME': ...".
Tensor tensor_from_onnx_sparse(const onnx::SparseTensorProto& proto);

// Writes `t` as raw_data, the form the ONNX test suite uses.
void tensor_to_onnx(const Tensor& t, const std::string& name, onnx::TensorProto* out);

// "tensor 'w'" or "unnamed tensor", for messages.
std::string tensor_label(const onnx::TensorProto& proto);

}  // namespace tessel
