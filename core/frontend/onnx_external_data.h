#pragma once
// Tensors whose bytes live in a file beside the model (TensorProto data_location EXTERNAL).
//
// The location comes from an untrusted model, so it must name a file inside the model's folder:
// absolute paths, ".." components and symbolic links that resolve outside are refused, and the
// file must hold every byte the tensor claims (checked before reading anything).
#include <onnx/onnx_pb.h>

#include <filesystem>

namespace tessel {

// Reads the external bytes of `tensor` into raw_data and marks it as stored inline. Tensors stored
// inline are left unchanged. Throws Error naming the tensor and the file.
void load_external_data(onnx::TensorProto& tensor, const std::filesystem::path& model_dir);

// Applies load_external_data to every initializer and every tensor attribute of every node.
void load_external_data(onnx::GraphProto& graph, const std::filesystem::path& model_dir);

}  // namespace tessel
