#pragma once
// Reads an ONNX model file into a ModelProto ready to become a Graph, checking everything that can
// be wrong with an untrusted file before anything is built:
//
//   parse (one pass over the file) → default-domain opset in 1..17 → external data (inside the
//   model's folder) → every tensor's size against its data → onnx::checker → ONNX shape inference
//   (only when a node has no Tessel op or an input is not a tensor) → opset upgrade
#include <google/protobuf/message_lite.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "core/support/error.h"

namespace tessel {

struct LoadedOnnxModel {
  onnx::ModelProto proto;  // upgraded to the op table's forms; every node has a name
  int64_t opset = 0;       // the default-domain opset the file declared
  // Nodes whose old form upgrade_opset could not rewrite, by name, with the reason; they import as
  // opaque nodes.
  std::map<std::string, std::string> not_upgraded;
  // Why ONNX shape inference gave no types at all ("" when it ran, or was not needed).
  std::string onnx_inference_problem;
};

// Throws Error "PATH: reason" (one line).
LoadedOnnxModel load_onnx_model(const std::string& path);

// Parses a protobuf file into `message`; throws Error "PATH: reason" for a missing, empty,
// truncated or corrupt file. `what` names the expected content ("ONNX model", "TensorProto").
void parse_proto_file(const std::string& path, google::protobuf::MessageLite& message, const char* what);

// Rethrows `e` as "PATH: message", with control characters from names in the file replaced, so
// a corrupt name cannot break the one-line message.
[[noreturn]] void rethrow_in_file(const Error& e, const std::string& path);

// Node names as Tessel shows them: the ONNX name, or "<OpType>_<index>" when it is empty; in a
// sub-graph (a Loop's body) "<graph name>/<OpType>_<index>".
void name_unnamed_nodes(onnx::GraphProto& graph);

}  // namespace tessel
