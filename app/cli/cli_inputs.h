// The input files of `tessel run` and `tessel profile`: DIR/input_K.pb for the K-th graph input
// that is not an initializer (docs/architecture.md, "Contracts"). One reader, so both commands
// name the file in every complaint and bind symbolic dims the same way.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/frontend/onnx_import.h"
#include "core/graph/graph.h"
#include "core/runtime/ndarray.h"

namespace tessel::cli {

struct InputFiles {
  std::vector<Tensor> tensors;       // an input that is a sequence or an optional: an undefined tensor here
  std::vector<RuntimeValue> values;  // every input, tensors too (core/graph/runtime_value.h)
  std::vector<std::string> paths;    // tensors[k] was read from paths[k]
};

// Reads every runtime input of `file` from `dir`. An input that feeds a shape operand is bound in
// `options` (its values decide shapes); a symbolic input takes its shape from the file unless a
// --shape option already gave one. Errors name the folder or the file.
InputFiles read_input_files(const std::filesystem::path& dir, const std::string& model, const OnnxModelFile& file,
                            ImportOptions& options);

// Every input tensor has the type the compiled graph expects; else an error naming the file,
// the input and both types. A u16 file for a bf16 input is taken as its bit patterns (the ONNX
// 1.12 test data stores bfloat16 so) and retyped in place.
void check_input_types(const Graph& graph, InputFiles& inputs, const std::string& model);

}  // namespace tessel::cli
