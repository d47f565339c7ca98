#pragma once
// ONNX → Graph. Uses the official ONNX library: the checker runs first, initializers become
// constants, older opsets are upgraded to the opset-17 forms the op table implements.
//
// Every failure is a tessel::Error whose one-line message names the file, the node and the reason:
//   "model.onnx: node 'Conv_3' (Conv): input 1 has shape [8,3,3] but ..."
// A well-formed model is never refused for what Tessel lacks: a node without a Tessel op (or in
// an old form it cannot rewrite) becomes an opaque node (core/graph/opaque_op.h), an input it cannot
// represent gets an unknown type, and compiling the graph fails with every such cause in one
// message (blockers_message in graph.h).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/graph.h"

namespace tessel {

struct ImportOptions {
  // Binds symbolic (or overrides) input dims: --shape NAME=1x3x224x224.
  std::map<std::string, Shape> input_shapes;
  // Graph inputs whose values are known now (tessel run binds inputs that feed shape operands,
  // e.g. Reshape's shape in the ONNX node tests). They stay graph inputs; inference sees their value.
  std::map<std::string, Tensor> bound_inputs;
  // kMarkUnknown when only looking at the model (tessel inspect, the studio): an input with
  // unbound symbolic dims, or a node whose types cannot be inferred, gets an unknown type that
  // says why instead of failing the import. Compiling such a graph fails with every reason.
  InferFailure infer_failure = InferFailure::kThrow;
};

Graph import_onnx(const std::string& path, const ImportOptions& options = {});

// Names of graph inputs that feed inputs listed in an op's shape_inputs (directly), in the
// model at `path`; tessel run binds these to the given input files before import.
std::vector<std::string> onnx_shape_operand_inputs(const std::string& path);

// A graph input that is not an initializer (the inputs `tessel run` reads as input_K.pb, in order).
struct OnnxInputInfo {
  std::string name;
  std::optional<Shape> static_shape;    // nullopt when a dim is symbolic or the rank is not declared
  bool feeds_shape_operand = false;     // read by an input in its op's shape_inputs, or by a node computing one
  ValueKind kind = ValueKind::kTensor;  // a sequence or optional input is read with read_value_pb
};
std::vector<OnnxInputInfo> onnx_runtime_inputs(const std::string& path);

struct LoadedOnnxModel;

// An ONNX file parsed once (external data included) for a caller that must look at its inputs
// before it builds the graph: `tessel run` reads the input files, binds those that feed shape
// operands, then imports.
//
//   OnnxModelFile file(path);
//   for (const OnnxInputInfo& in : file.runtime_inputs()) ...
//   Graph g = file.import(options);
class OnnxModelFile {
 public:
  explicit OnnxModelFile(const std::string& path);  // throws Error "PATH: reason"
  ~OnnxModelFile();
  OnnxModelFile(const OnnxModelFile&) = delete;
  OnnxModelFile& operator=(const OnnxModelFile&) = delete;

  const std::vector<OnnxInputInfo>& runtime_inputs() const { return inputs_; }
  // Builds the graph. Once: the weights move out of the parsed file into the graph.
  Graph import(const ImportOptions& options = {});

 private:
  std::string path_;
  std::unique_ptr<LoadedOnnxModel> model_;
  std::vector<OnnxInputInfo> inputs_;
};

// ONNX TensorProto files (input_K.pb / output_K.pb of the ONNX test suite).
Tensor read_tensor_pb(const std::string& path);
void write_tensor_pb(const Tensor& t, const std::string& name, const std::string& path);
// Any value kind: a TensorProto, SequenceProto or OptionalProto file. The kind comes from the model
// (the input or output the file is for): the bytes of an optional tensor and of a one-tensor
// sequence can be alike.
RuntimeValue read_value_pb(const std::string& path, ValueKind kind);
void write_value_pb(const RuntimeValue& v, const std::string& name, const std::string& path);

}  // namespace tessel
